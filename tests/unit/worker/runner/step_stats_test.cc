#include "worker/runner/step_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace paradnn::runner {
namespace {

TEST(StepStatsTest, QuantilesInterpolateLinearly) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 1.0), 4);
  EXPECT_DOUBLE_EQ(QuantileSorted({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(QuantileSorted({1, 2, 3, 4, 5}, 0.5), 3);
}

TEST(StepStatsTest, StudentTTable) {
  EXPECT_NEAR(StudentT95(1), 12.7062, 1e-4);
  EXPECT_NEAR(StudentT95(4), 2.7764, 1e-4);
  EXPECT_NEAR(StudentT95(10), 2.2281, 1e-4);
  EXPECT_NEAR(StudentT95(30), 2.0423, 1e-4);
  EXPECT_NEAR(StudentT95(45), 2.0141, 1e-3);  // interpolated
  EXPECT_NEAR(StudentT95(60), 2.0003, 1e-4);
  EXPECT_NEAR(StudentT95(200), 1.9719, 1e-3);  // interpolated
  EXPECT_NEAR(StudentT95(1000000), 1.95996, 1e-4);
  for (int df = 1; df < 5000; ++df) EXPECT_GE(StudentT95(df), StudentT95(df + 1)) << df;
}

TEST(StepStatsTest, KnownSample) {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  const v1::StepStats s = ComputeStepStats(v);
  const double stddev = std::sqrt(32.0 / 7.0);
  EXPECT_EQ(s.steps(), 8);
  EXPECT_DOUBLE_EQ(s.mean_s(), 5);
  EXPECT_DOUBLE_EQ(s.median_s(), 4.5);
  EXPECT_NEAR(s.stddev_s(), stddev, 1e-12);
  EXPECT_NEAR(s.p10_s(), 3.4, 1e-12);
  EXPECT_NEAR(s.p90_s(), 7.6, 1e-12);
  EXPECT_DOUBLE_EQ(s.min_s(), 2);
  EXPECT_DOUBLE_EQ(s.max_s(), 9);
  EXPECT_NEAR(s.cv(), stddev / 5, 1e-12);
  EXPECT_NEAR(s.ci95_half_width_s(), 2.3646 * stddev / std::sqrt(8.0), 1e-9);
  EXPECT_NEAR(s.ci95_rel(), s.ci95_half_width_s() / 5, 1e-12);
}

TEST(StepStatsTest, DegenerateInputs) {
  EXPECT_EQ(ComputeStepStats({}).steps(), 0);
  const v1::StepStats one = ComputeStepStats({0.25});
  EXPECT_EQ(one.steps(), 1);
  EXPECT_DOUBLE_EQ(one.median_s(), 0.25);
  EXPECT_DOUBLE_EQ(one.stddev_s(), 0);
  EXPECT_DOUBLE_EQ(one.ci95_half_width_s(), 0);
  const v1::StepStats flat = ComputeStepStats({0.1, 0.1, 0.1});
  // 0.1 is not a binary fraction: the mean carries a rounding error.
  EXPECT_NEAR(flat.cv(), 0, 1e-12);
  EXPECT_NEAR(flat.ci95_rel(), 0, 1e-12);
}

}  // namespace
}  // namespace paradnn::runner
