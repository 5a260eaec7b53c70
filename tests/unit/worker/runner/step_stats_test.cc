#include "worker/runner/step_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
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
  // Sorted, so correlated: deviations -3 -1 -1 -1 0 0 2 4 give lagged
  // products summing to 3 + 1 + 1 + 0 + 0 + 0 + 8 = 13 over m2 = 32.
  EXPECT_NEAR(s.lag1_autocorrelation(), 13.0 / 32.0, 1e-12);
  const double effective = 8 * (1 - 13.0 / 32.0) / (1 + 13.0 / 32.0);  // 3.38
  EXPECT_NEAR(s.effective_samples(), effective, 1e-12);
  // df = round(3.38) - 1 = 2: t = 4.3027.
  EXPECT_NEAR(s.ci95_half_width_s(), 4.3027 * stddev / std::sqrt(effective), 1e-3);
  EXPECT_NEAR(s.ci95_rel(), s.ci95_half_width_s() / 5, 1e-12);
}

TEST(StepStatsTest, StallsAreSamplesAboveThreeTimesTheMedian) {
  // Median 0.1 (four 0.1s, one 0.3 exactly at 3x, two stalls of 3.5):
  // 7 of 7.7 seconds in the two stalls; 0.3 is not above 3x the median.
  const std::vector<double> v = {0.1, 3.5, 0.1, 0.3, 0.1, 3.5, 0.1};
  const v1::StepStats s = ComputeStepStats(v);
  EXPECT_DOUBLE_EQ(s.median_s(), 0.1);
  EXPECT_EQ(s.stalled_samples(), 2);
  EXPECT_NEAR(s.stall_share(), 7.0 / 7.7, 1e-12);
  const v1::StepStats steady = ComputeStepStats({1, 2, 2, 3});
  EXPECT_EQ(steady.stalled_samples(), 0);
  EXPECT_EQ(steady.stall_share(), 0);
}

TEST(StepStatsTest, UncorrelatedOrderKeepsTheIndependentInterval) {
  // The same values in an order with negative lag-1 autocorrelation.
  const std::vector<double> v = {2, 9, 4, 7, 4, 5, 4, 5};
  const v1::StepStats s = ComputeStepStats(v);
  const double stddev = std::sqrt(32.0 / 7.0);
  EXPECT_LT(s.lag1_autocorrelation(), 0);
  EXPECT_DOUBLE_EQ(s.effective_samples(), 8);
  EXPECT_NEAR(s.ci95_half_width_s(), 2.3646 * stddev / std::sqrt(8.0), 1e-9);
  EXPECT_NEAR(s.ci95_half_width_s(), Ci95HalfWidth(stddev, 8), 1e-12);
}

TEST(StepStatsTest, Ar1StreamsTheirAutocorrelationAndWorth) {
  // x[i] = mean + r * (x[i-1] - mean) + noise: lag-1 autocorrelation r and,
  // for the mean, n (1 - r) / (1 + r) independent samples' worth.
  for (double r : {0.0, 0.5, 0.8}) {
    SCOPED_TRACE(r);
    std::mt19937 rng(42);
    std::normal_distribution<double> noise(0, 1e-4);
    std::vector<double> seconds;
    double deviation = 0;
    for (int i = 0; i < 40000; ++i) {
      deviation = r * deviation + noise(rng);
      seconds.push_back(0.01 + deviation);
    }
    const v1::StepStats s = ComputeStepStats(seconds);
    EXPECT_NEAR(s.lag1_autocorrelation(), r, 0.02);
    const double expected_worth = r > 0 ? 40000 * (1 - r) / (1 + r) : 40000;
    EXPECT_NEAR(s.effective_samples(), expected_worth, 0.12 * expected_worth);
    // The interval widens by sqrt(n / n_eff) against the independent one.
    EXPECT_NEAR(s.ci95_half_width_s() / Ci95HalfWidth(s.stddev_s(), 40000),
                std::sqrt(40000 / s.effective_samples()), 1e-3);
  }
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
