#include "client/plot_scripts.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paradnn::client::internal {

bool Positive(double value) { return std::isfinite(value) && value > 0; }

std::optional<double> ParseNumber(absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string SiRate(double value, absl::string_view unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int prefix = 0;
  double scaled = value;
  while (std::fabs(scaled) >= 1000 && prefix < 6) {
    scaled /= 1000;
    ++prefix;
  }
  return absl::StrCat(absl::StrFormat("%.3g", scaled), " ", kPrefixes[prefix], unit);
}

std::string MetricLabel(const std::string& metric, const std::string& unit) {
  if (unit.empty()) return metric;
  return absl::StrCat(metric, " (", unit, ")");
}

}  // namespace paradnn::client::internal
