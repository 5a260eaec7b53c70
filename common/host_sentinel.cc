#include "common/host_sentinel.h"

#include <cmath>

namespace paradnn::common {
namespace {

std::optional<double> GeometricMean(double before, double after) {
  if (before > 0 && after > 0) return std::sqrt(before * after);
  if (before > 0) return before;
  if (after > 0) return after;
  return std::nullopt;
}

}  // namespace

std::optional<double> HostSpeedAround(const v1::HostSentinel& sentinel) {
  return GeometricMean(sentinel.compute_before(), sentinel.compute_after());
}

std::optional<double> OwnHostSpeed(const v1::HostSentinel& sentinel) {
  return GeometricMean(sentinel.before_age_s() > 0 ? 0 : sentinel.compute_before(),
                       sentinel.compute_after());
}

}  // namespace paradnn::common
