#include "common/host_sentinel.h"

#include <gtest/gtest.h>

#include <cmath>

namespace paradnn::common {
namespace {

v1::HostSentinel Sentinel(double before, double after, double before_age = 0) {
  v1::HostSentinel sentinel;
  sentinel.set_compute_before(before);
  sentinel.set_compute_after(after);
  sentinel.set_before_age_s(before_age);
  return sentinel;
}

TEST(HostSentinelTest, AroundTheJobIsTheGeometricMeanOfTheReadingsItHolds) {
  EXPECT_NEAR(*HostSpeedAround(Sentinel(0.64, 1.0)), 0.8, 1e-12);
  EXPECT_NEAR(*HostSpeedAround(Sentinel(0.9, 0)), 0.9, 1e-12);
  EXPECT_NEAR(*HostSpeedAround(Sentinel(0.9, 0, /*before_age=*/2.5)), 0.9, 1e-12);
  EXPECT_NEAR(*HostSpeedAround(Sentinel(0, 0.7)), 0.7, 1e-12);
  EXPECT_FALSE(HostSpeedAround(Sentinel(0, 0)).has_value());
}

TEST(HostSentinelTest, OwnReadingsLeaveOutAReusedBefore) {
  EXPECT_NEAR(*OwnHostSpeed(Sentinel(0.64, 1.0)), 0.8, 1e-12);
  EXPECT_NEAR(*OwnHostSpeed(Sentinel(0.64, 1.0, 3.0)), 1.0, 1e-12);
  EXPECT_FALSE(OwnHostSpeed(Sentinel(0.9, 0, 3.0)).has_value());
  EXPECT_NEAR(*OwnHostSpeed(Sentinel(0.9, 0)), 0.9, 1e-12);
}

}  // namespace
}  // namespace paradnn::common
