#include "worker/runner/stop_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "worker/runner/step_stats.h"

namespace paradnn::runner {
namespace {

// Feeds `rule` from `next(i)` until it stops or `limit` steps; returns steps.
template <typename Next>
int Drive(TimingStopRule& rule, Next next, int limit = 1000000) {
  for (int i = 0; i < limit; ++i) {
    if (rule.Add(next(i))) return i + 1;
  }
  return -1;
}

TEST(TimingStopRuleTest, ConstantStreamStopsAtMinStepsByCi) {
  TimingStopRule rule(/*ci=*/0.02, /*max_seconds=*/10, /*min_steps=*/5, /*max_steps=*/10000);
  EXPECT_EQ(Drive(rule, [](int) { return 0.01; }), 5);
  EXPECT_EQ(rule.reason(), StopReason::kCi);
  EXPECT_STREQ(StopReasonName(rule.reason()), "ci");
}

TEST(TimingStopRuleTest, MinStepsIsRespected) {
  TimingStopRule rule(0.02, 10, 20, 10000);
  EXPECT_EQ(Drive(rule, [](int) { return 0.01; }), 20);
  EXPECT_EQ(rule.reason(), StopReason::kCi);
}

TEST(TimingStopRuleTest, NoisyStreamRunsToMaxSteps) {
  TimingStopRule rule(0.02, 1e6, 5, 50);
  // Alternating +-50 %: the CI needs thousands of steps to reach 2 %.
  EXPECT_EQ(Drive(rule, [](int i) { return i % 2 ? 0.015 : 0.005; }), 50);
  EXPECT_EQ(rule.reason(), StopReason::kMaxSteps);
  EXPECT_STREQ(StopReasonName(rule.reason()), "max_steps");
}

TEST(TimingStopRuleTest, NoisyStreamRunsToMaxSeconds) {
  TimingStopRule rule(0.02, /*max_seconds=*/5, 5, 10000);
  // Exact binary fractions: the synthetic clock reaches 5.0 s after 10 steps.
  EXPECT_EQ(Drive(rule, [](int i) { return i % 2 ? 0.75 : 0.25; }), 10);
  EXPECT_EQ(rule.reason(), StopReason::kMaxSeconds);
  EXPECT_DOUBLE_EQ(rule.elapsed_seconds(), 5.0);
  EXPECT_STREQ(StopReasonName(rule.reason()), "max_seconds");
}

TEST(TimingStopRuleTest, MaxSecondsCountsEveryStepOfABlock) {
  // Samples of 8 steps of 0.25 / 0.75 s: the 5-s budget is spent after the
  // second sample (8 s of timing), not after the tenth as if each sample
  // were one step.
  TimingStopRule rule(0.02, /*max_seconds=*/5, /*min_steps=*/2, 10000);
  int samples = 0;
  while (!rule.Add(samples++ % 2 ? 0.75 : 0.25, /*block=*/8)) {
  }
  EXPECT_EQ(samples, 2);
  EXPECT_EQ(rule.reason(), StopReason::kMaxSeconds);
  EXPECT_DOUBLE_EQ(rule.elapsed_seconds(), 8.0);
}

TEST(TimingStopRuleTest, MinStepsHoldEvenPastMaxSeconds) {
  // 4-s steps against a 5-s budget: the budget is spent after two steps, but
  // the five steps asked for are still taken.
  TimingStopRule rule(0.02, /*max_seconds=*/5, /*min_steps=*/5, 10000);
  EXPECT_EQ(Drive(rule, [](int i) { return i % 2 ? 4.5 : 3.5; }), 5);
  EXPECT_EQ(rule.reason(), StopReason::kMaxSeconds);
  EXPECT_DOUBLE_EQ(rule.elapsed_seconds(), 19.5);
}

TEST(TimingStopRuleTest, TheHardLimitEndsTimingShortOfMinSteps) {
  // 40-s steps, min_steps 5 and a job deadline that leaves 100 s: two
  // steps reach 80 s, the third passes the hard limit.
  TimingStopRule rule(0.02, /*max_seconds=*/10, /*min_steps=*/5, 10000);
  rule.set_hard_limit_seconds(100);
  EXPECT_EQ(Drive(rule, [](int i) { return i % 2 ? 45.0 : 35.0; }), 3);
  EXPECT_EQ(rule.reason(), StopReason::kMaxSeconds);
  // Never fewer than two, even past it.
  TimingStopRule tight(0.02, 10, 5, 10000);
  tight.set_hard_limit_seconds(1);
  EXPECT_EQ(Drive(tight, [](int) { return 40.0; }), 2);
}

TEST(TimingStopRuleTest, NoisyStreamReachesAWideCiWhereBatchStatisticsSay) {
  const double ci = 0.1;
  auto next = [](int i) { return i % 2 ? 0.015 : 0.005; };
  // First n >= 5 at which the batch statistics meet the target.
  std::vector<double> seen;
  int expected = -1;
  for (int i = 0; i < 100000 && expected < 0; ++i) {
    seen.push_back(next(i));
    if (seen.size() >= 5 && ComputeStepStats(seen).ci95_rel() <= ci) expected = i + 1;
  }
  ASSERT_GT(expected, 50);
  TimingStopRule rule(ci, 1e6, 5, 100000);
  EXPECT_EQ(Drive(rule, next), expected);
  EXPECT_EQ(rule.reason(), StopReason::kCi);
  EXPECT_LE(rule.ci_rel(), ci);
}

TEST(TimingStopRuleTest, PhasedStreamIsNotStoppedByAnIndependentSamplesInterval) {
  // Step times in phases of 5 samples, alternately 1.0 and 1.1 s (plus a
  // little jitter), as if the host drifted; at least 10 steps (two phases).
  // Treated as independent, the samples would give a 2 % interval after
  // about 25 steps; correlated, they are worth far fewer, and timing goes on
  // until the batch statistics of what was seen (which allow for the
  // correlation) meet the target.
  auto next = [](int i) { return ((i / 5) % 2 ? 1.1 : 1.0) + 1e-4 * (i % 3); };
  const double ci = 0.02;
  std::vector<double> seen;
  int independent_stop = -1;
  int expected = -1;
  for (int i = 0; i < 100000 && expected < 0; ++i) {
    seen.push_back(next(i));
    const v1::StepStats s = ComputeStepStats(seen);
    if (independent_stop < 0 && seen.size() >= 10 &&
        Ci95HalfWidth(s.stddev_s(), s.steps()) / s.mean_s() <= ci) {
      independent_stop = i + 1;
    }
    if (seen.size() >= 10 && s.ci95_rel() <= ci) expected = i + 1;
  }
  ASSERT_GT(independent_stop, 0);
  ASSERT_GT(expected, 3 * independent_stop);
  TimingStopRule rule(ci, 1e9, /*min_steps=*/10, 1000000);
  EXPECT_EQ(Drive(rule, next), expected);
  EXPECT_EQ(rule.reason(), StopReason::kCi);
  // The rule's running autocorrelation is the batch one.
  EXPECT_NEAR(rule.lag1(), ComputeStepStats(seen).lag1_autocorrelation(), 1e-9);
  EXPECT_GT(rule.lag1(), 0.5);
}

TEST(TimingStopRuleTest, AlwaysTakesMinStepsBeforeTheTimeBudget) {
  TimingStopRule rule(0.02, 10, 5, 10000);
  // Noisy enough that the CI is never met: the budget ends timing.
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(rule.Add(i % 2 ? 300 : 100));
  EXPECT_TRUE(rule.Add(100));
  EXPECT_EQ(rule.reason(), StopReason::kMaxSeconds);
  EXPECT_EQ(rule.steps(), 5);
  // And never fewer than two, even when fewer are asked for.
  TimingStopRule two(0.02, 10, 1, 10000);
  EXPECT_FALSE(two.Add(100));
  EXPECT_TRUE(two.Add(100));
  EXPECT_EQ(two.steps(), 2);
}

TEST(TimingStopRuleTest, CiWinsWhenSeveralBoundsMeetAtOnce) {
  TimingStopRule rule(0.02, 0.05, 5, 5);
  EXPECT_EQ(Drive(rule, [](int) { return 0.01; }), 5);
  EXPECT_EQ(rule.reason(), StopReason::kCi);
}

TEST(WarmupRuleTest, SettlesAfterTheRequiredSteps) {
  WarmupRule rule(3, 10);
  EXPECT_FALSE(rule.Add(1.0));  // first step: allocations, primitive creation
  EXPECT_FALSE(rule.Add(0.1));
  EXPECT_TRUE(rule.Add(0.1));
  EXPECT_EQ(rule.steps(), 3);
}

TEST(WarmupRuleTest, ContinuesWhileTheLastStepIsSlow) {
  WarmupRule rule(3, 10);
  EXPECT_FALSE(rule.Add(0.1));
  EXPECT_FALSE(rule.Add(0.1));
  EXPECT_FALSE(rule.Add(0.5));  // > 1.5 x median 0.1
  EXPECT_TRUE(rule.Add(0.1));
  EXPECT_EQ(rule.steps(), 4);
}

TEST(WarmupRuleTest, StopsAtItsCap) {
  WarmupRule rule(3, 1e9);
  EXPECT_EQ(rule.max_steps(), 3 * 3 + WarmupRule::kExtraSteps);
  int steps = 0;
  double t = 1;
  while (!rule.Add(t)) {
    t *= 2;  // never settles
    ++steps;
  }
  EXPECT_EQ(steps + 1, rule.max_steps());
}

TEST(WarmupRuleTest, StopsAtTheTimeBudgetOnceTheRequiredStepsAreDone) {
  WarmupRule rule(3, 1.0);
  EXPECT_FALSE(rule.Add(0.1));
  EXPECT_FALSE(rule.Add(0.2));
  EXPECT_FALSE(rule.Add(0.4));  // 0.4 > 1.5 x 0.2, 0.7 s used
  EXPECT_TRUE(rule.Add(0.8));   // 1.5 s used
}

TEST(TimingBlockStepsTest, OnlyShortStepsAreTimedInBlocks) {
  EXPECT_EQ(TimingBlockSteps(0.0), 1);
  EXPECT_EQ(TimingBlockSteps(std::nan("")), 1);
  EXPECT_EQ(TimingBlockSteps(kBlockBelowSeconds), 1);
  EXPECT_EQ(TimingBlockSteps(0.5), 1);
  EXPECT_EQ(TimingBlockSteps(600e-6), 9);  // ceil(5 ms / 0.6 ms)
  EXPECT_EQ(TimingBlockSteps(999e-6), 6);
  EXPECT_EQ(TimingBlockSteps(1e-9), kMaxBlockSteps);
  // Blocks last about the target: never much shorter, never twice as long.
  for (double step : {2e-6, 30e-6, 170e-6, 400e-6, 900e-6}) {
    const int block = TimingBlockSteps(step);
    if (block == kMaxBlockSteps) continue;
    EXPECT_GE(block * step, kBlockTargetSeconds * 0.999) << step;
    EXPECT_LT((block - 1) * step, kBlockTargetSeconds) << step;
  }
}

TEST(VoteEverySamplesTest, AGangVotesAboutEveryIntervalOfSamples) {
  EXPECT_EQ(VoteEverySamples(0.0), kMaxVoteEverySamples);
  EXPECT_EQ(VoteEverySamples(std::nan("")), kMaxVoteEverySamples);
  EXPECT_EQ(VoteEverySamples(1e-6), kMaxVoteEverySamples);
  EXPECT_EQ(VoteEverySamples(5e-3), 10);  // floor(50 ms / 5 ms)
  EXPECT_EQ(VoteEverySamples(kVoteIntervalSeconds), 1);
  EXPECT_EQ(VoteEverySamples(7.0), 1);  // long steps: every sample, as before
  // Votes are never further apart than the interval, unless one sample is.
  for (double sample : {2e-3, 3.3e-3, 11e-3, 26e-3}) {
    EXPECT_LE(VoteEverySamples(sample) * sample, kVoteIntervalSeconds * 1.0001) << sample;
    EXPECT_GT((VoteEverySamples(sample) + 1) * sample, kVoteIntervalSeconds) << sample;
  }
}

TEST(WarmupRuleTest, MedianOfTheWarmupSteps) {
  WarmupRule rule(3, 0);
  EXPECT_EQ(rule.median_seconds(), 0);
  rule.Add(0.050);  // first step: allocations, primitive creation
  rule.Add(0.001);
  rule.Add(0.002);
  EXPECT_DOUBLE_EQ(rule.median_seconds(), 0.002);
  EXPECT_DOUBLE_EQ(rule.fastest_seconds(), 0.001);
}

// Blocks are sized from the fastest warm-up step, so that stalls during the
// warm-up (two of three 4 KiB all-reduces that waited for a halted vCPU)
// do not switch the job to single steps.
TEST(WarmupRuleTest, StallsDoNotChooseTheBlock) {
  WarmupRule rule(3, 0);
  EXPECT_EQ(rule.fastest_seconds(), 0);
  rule.Add(150e-6);
  rule.Add(3.4e-3);
  rule.Add(3.5e-3);
  EXPECT_EQ(TimingBlockSteps(rule.median_seconds()), 1);
  EXPECT_EQ(TimingBlockSteps(rule.fastest_seconds()), 34);
}

}  // namespace
}  // namespace paradnn::runner
