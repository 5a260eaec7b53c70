#include "common/human_units.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paradnn::common {

std::string HumanBytes(double bytes) {
  constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(static_cast<int64_t>(bytes), " bytes");
  return absl::StrFormat("%.1f %s", bytes, kUnits[unit]);
}

absl::StatusOr<double> ParseDurationSeconds(const std::string& text) {
  const auto bad = [&text] {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text,
                     "' is not a duration; expected seconds or a number with a unit, "
                     "e.g. 90s, 30m, 1h, 1h30m, 2.5h (units s, m, h, d)"));
  };
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    const char* start = text.c_str() + i;
    char* end = nullptr;
    const double value = std::strtod(start, &end);
    if (end == start || !(value >= 0)) return bad();
    i += static_cast<size_t>(end - start);
    double unit = 1;
    if (i < text.size()) {
      switch (std::tolower(static_cast<unsigned char>(text[i]))) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'd':
          unit = 86400;
          break;
        default:
          return bad();
      }
      ++i;
    } else if (any) {
      return bad();  // "1h30": the unit of the last part is not clear
    }
    total += value * unit;
    any = true;
  }
  if (!any || !(total > 0) || !std::isfinite(total)) return bad();
  return total;
}

absl::StatusOr<double> ParseFraction(const std::string& text) {
  const char* start = text.c_str();
  char* end = nullptr;
  double value = std::strtod(start, &end);
  const bool percent = end != start && std::string_view(end) == "%";
  if (end == start || (*end != '\0' && !percent) || !(value >= 0) || !std::isfinite(value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a fraction; expected a percentage or a number, e.g. 3% or 0.03"));
  }
  if (percent) value /= 100;
  return value;
}

}  // namespace paradnn::common
