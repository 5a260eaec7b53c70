#include "common/human_units.h"

#include <cstdint>
#include <iterator>

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

}  // namespace paradnn::common
