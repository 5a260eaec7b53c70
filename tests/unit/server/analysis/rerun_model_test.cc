// The re-run model (server/analysis/rerun_model.h) by simulation: a
// platform whose runs spread with a known relative sd per step-time band;
// the model recovers the spreads, and its 95 % re-run intervals hold a
// re-run 95 % of the time when learned from other configurations.
#include "server/analysis/rerun_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace paradnn::server::analysis {
namespace {

// `groups` configurations of step time `step_s` (each its own level, within
// +-50 %), `runs` runs each with log-normal spread `rel_sd`.
std::vector<RerunSample> Simulate(std::mt19937* rng, const std::string& prefix, double step_s,
                                  double rel_sd, int groups, int runs) {
  std::uniform_real_distribution<double> level(0.5, 1.5);
  std::normal_distribution<double> noise(0, rel_sd);
  std::vector<RerunSample> samples;
  for (int g = 0; g < groups; ++g) {
    const double base = step_s * level(*rng);
    for (int r = 0; r < runs; ++r) {
      samples.push_back({prefix + std::to_string(g), base * std::exp(noise(*rng)), 0.02, 0});
    }
  }
  return samples;
}

TEST(RerunModelTest, WithoutRerunsOrSentinelItSaysPrior) {
  const RerunModel model = RerunModel::Fit({{"a", 0.01, 0.02, 0}, {"b", 0.02, 0.02, 0}});
  const RerunSpread spread = model.SpreadAt(0.01, 0.02);
  EXPECT_EQ(spread.basis, "prior");
  EXPECT_DOUBLE_EQ(spread.rel_sd, kPriorRerunRelSd);
  EXPECT_EQ(spread.degrees_of_freedom, 0);
  EXPECT_EQ(model.rerun_groups(), 0u);
}

TEST(RerunModelTest, TheSentinelsSpreadStandsInForMissingReruns) {
  std::vector<RerunSample> samples;
  const std::vector<double> speeds = {1.0, 0.9, 1.1, 0.95, 1.05, 0.8, 1.2, 1.0};
  for (size_t i = 0; i < speeds.size(); ++i) {
    samples.push_back({"g" + std::to_string(i), 0.01, 0.02, speeds[i]});
  }
  const RerunModel model = RerunModel::Fit(samples);
  EXPECT_EQ(model.overall().basis, "sentinel");
  EXPECT_EQ(model.sentinel_readings(), speeds.size());
  EXPECT_NEAR(model.overall().rel_sd, 0.12, 0.02);
  EXPECT_EQ(model.overall().degrees_of_freedom, 7);
  // One reading short: the prior again.
  samples.pop_back();
  EXPECT_EQ(RerunModel::Fit(samples).overall().basis, "prior");
}

TEST(RerunModelTest, RecoversTheSpreadOfEachStepTimeBand) {
  std::mt19937 rng(7);
  std::vector<RerunSample> samples = Simulate(&rng, "tiny", 2e-4, 0.30, 60, 4);
  const std::vector<RerunSample> large = Simulate(&rng, "large", 0.3, 0.05, 60, 4);
  samples.insert(samples.end(), large.begin(), large.end());
  const RerunModel model = RerunModel::Fit(samples);
  EXPECT_EQ(model.overall().basis, "re-runs");
  EXPECT_EQ(model.rerun_groups(), 120u);
  EXPECT_EQ(model.rerun_degrees(), 360);
  EXPECT_NEAR(model.SpreadAt(2e-4, 0).rel_sd, 0.30, 0.04);
  EXPECT_NEAR(model.SpreadAt(0.3, 0).rel_sd, 0.05, 0.02);
  // A band without re-runs takes the platform's overall spread.
  EXPECT_NEAR(model.SpreadAt(5e-3, 0).rel_sd, model.overall().rel_sd, 1e-12);
}

TEST(RerunModelTest, ARunNoisierThanThePlatformKeepsItsOwnSpread) {
  std::mt19937 rng(3);
  const RerunModel model = RerunModel::Fit(Simulate(&rng, "g", 0.05, 0.02, 30, 3));
  EXPECT_NEAR(model.SpreadAt(0.05, 0.0).rel_sd, 0.02, 0.006);
  EXPECT_NEAR(model.SpreadAt(0.05, 0.196).rel_sd, 0.1, 1e-3);
}

TEST(RerunModelTest, FewRerunsInABandBorrowFromThePlatform) {
  std::mt19937 rng(5);
  std::vector<RerunSample> samples = Simulate(&rng, "small", 5e-3, 0.10, 50, 3);
  // One large configuration measured twice: its band has 1 degree of
  // freedom, too few to trust on its own.
  samples.push_back({"large", 0.5, 0.01, 0});
  samples.push_back({"large", 0.5 * std::exp(0.5), 0.01, 0});
  const RerunModel model = RerunModel::Fit(samples);
  const RerunSpread large = model.SpreadAt(0.5, 0);
  EXPECT_LT(large.rel_sd, 0.5 / std::sqrt(2.0));  // its own estimate
  EXPECT_GT(large.rel_sd, model.SpreadAt(5e-3, 0).rel_sd);
  EXPECT_EQ(large.degrees_of_freedom, 1 + RerunModel::kShrinkDegrees);
}

TEST(RerunModelTest, AConfigurationWithManyRerunsSpeaksForItself) {
  std::mt19937 rng(9);
  // One band, two kinds of configuration: most spread 20 %, one 3 %.
  std::vector<RerunSample> samples = Simulate(&rng, "noisy", 0.02, 0.20, 20, 3);
  const std::vector<RerunSample> steady = Simulate(&rng, "steady", 0.02, 0.03, 1, 30);
  samples.insert(samples.end(), steady.begin(), steady.end());
  const RerunModel model = RerunModel::Fit(samples);
  const double band = model.SpreadAt(0.02, 0).rel_sd;
  const RerunSpread own = model.SpreadAt(0.02, 0, "steady0");
  EXPECT_GT(band, 0.12);              // the steady configuration is in the band too
  EXPECT_LT(own.rel_sd, 0.5 * band);  // its 29 degrees of freedom outweigh the band's 4
  EXPECT_GT(own.rel_sd, 0.03);        // ... but not all of it
  EXPECT_EQ(own.degrees_of_freedom, 29 + RerunModel::kShrinkDegrees);
  // A group the model never saw re-run gets the band's.
  EXPECT_DOUBLE_EQ(model.SpreadAt(0.02, 0, "unknown").rel_sd, band);
}

// The interval's promise: learned from the platform's other configurations,
// it holds a re-run of a new one 95 % of the time, not far more (padded) or
// far less (the within-run interval's fate).
TEST(RerunModelTest, ReRunIntervalsCoverNinetyFivePercentOfReruns) {
  std::mt19937 rng(11);
  const double rel_sd = 0.15;
  const RerunModel model = RerunModel::Fit(Simulate(&rng, "history", 0.02, rel_sd, 20, 4));
  std::normal_distribution<double> noise(0, rel_sd);
  int covered = 0, within_covered = 0;
  const int trials = 4000;
  for (int i = 0; i < trials; ++i) {
    const double level = 0.02;
    const double first = level * std::exp(noise(rng));
    const double rerun = level * std::exp(noise(rng));
    const RerunInterval interval = PredictRerun(model, first, 0.02);
    covered += rerun >= interval.low_s && rerun <= interval.high_s ? 1 : 0;
    within_covered += std::fabs(rerun / first - 1) <= 0.02 ? 1 : 0;
  }
  const double coverage = static_cast<double>(covered) / trials;
  std::printf("re-run interval coverage %.1f %% (within-run interval %.1f %%)\n", coverage * 100,
              100.0 * within_covered / trials);
  EXPECT_GT(coverage, 0.92);
  EXPECT_LT(coverage, 0.975);
  EXPECT_LT(within_covered, trials / 5);
}

TEST(RerunModelTest, IntervalIsSymmetricInLogsAndWidensWithTheSpread) {
  const RerunModel prior = RerunModel::Fit({});
  const RerunInterval interval = PredictRerun(prior, 0.01, 0);
  EXPECT_NEAR(interval.low_s * interval.high_s, 0.01 * 0.01, 1e-12);
  EXPECT_NEAR(std::log(interval.high_s / 0.01), 1.959964 * std::sqrt(2.0) * kPriorRerunRelSd, 1e-4);
  EXPECT_NEAR(interval.half_width_rel, interval.high_s / 0.01 - 1, 1e-12);
  EXPECT_EQ(interval.spread.basis, "prior");
}

TEST(RerunModelTest, IgnoresNonPositiveAndNonFiniteStepTimes) {
  const RerunModel model = RerunModel::Fit(
      {{"a", 0, 0, 0}, {"a", -1, 0, 0}, {"a", std::nan(""), 0, 0}, {"a", 0.01, 0, 0}});
  EXPECT_EQ(model.rerun_groups(), 0u);
}

}  // namespace
}  // namespace paradnn::server::analysis
