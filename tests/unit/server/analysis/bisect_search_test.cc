// The bisect search (server/analysis/bisect_search.h) against a simulated
// shared host: the guilty setting named among 3 and among 8 with fewer
// measurements than trying each setting alone, two settings that only act
// together found together, no difference and a cause outside the settings
// said so, and the step-by-step API a job-submitting caller drives.
#include "server/analysis/bisect_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace paradnn::server::analysis {
namespace {

// A shared host running one configuration: its speed drifts slowly (an
// AR(1) in log terms with sd 15 % overall, about 3 % from one measurement
// to the next) and each of a measurement's 5 repeats has 3 % noise of its
// own. `level` says how the settings move the step time.
class SimulatedHost {
 public:
  SimulatedHost(uint64_t seed, std::function<double(const StackSettings&)> level)
      : random_(seed), level_(std::move(level)) {
    drift_ = 0.15 * unit_(random_);
  }

  std::vector<double> operator()(const StackSettings& settings) {
    constexpr double kCorrelation = 0.98;
    drift_ =
        kCorrelation * drift_ + std::sqrt(1 - kCorrelation * kCorrelation) * 0.15 * unit_(random_);
    const double base = 0.010 * level_(settings) * std::exp(drift_);
    std::vector<double> step_times;
    for (int repeat = 0; repeat < 5; ++repeat) {
      step_times.push_back(base * std::exp(0.03 * unit_(random_)));
    }
    return step_times;
  }

 private:
  std::mt19937_64 random_;
  std::normal_distribution<double> unit_{0, 1};
  std::function<double(const StackSettings&)> level_;
  double drift_ = 0;
};

// StacksDiffering differing in `count` settings named s0, s1, ...: "good" in A,
// "bad" in B.
void StacksDiffering(int count, StackSettings* good, StackSettings* bad) {
  *good = {{"model", "fc"}};
  *bad = *good;
  for (int i = 0; i < count; ++i) {
    (*good)["s" + std::to_string(i)] = "good";
    (*bad)["s" + std::to_string(i)] = "bad";
  }
}

bool FromBad(const StackSettings& settings, const std::string& name) {
  const auto it = settings.find(name);
  return it != settings.end() && it->second == "bad";
}

struct SearchTally {
  int right = 0;
  int runs = 0;
  int covered = 0;  // of the right ones, the culprit's interval covers the effect
  size_t measurements = 0;
  size_t most = 0;
};

// `runs` searches, the guilty setting drawn anew each time; right when
// exactly it is named.
SearchTally SearchForOneGuilty(int settings, int runs, uint64_t seed, double effect) {
  SearchTally tally;
  std::mt19937_64 random(seed);
  for (int run = 0; run < runs; ++run) {
    const std::string guilty = "s" + std::to_string(random() % settings);
    SimulatedHost host(random(),
                       [&](const StackSettings& s) { return FromBad(s, guilty) ? effect : 1.0; });
    StackSettings good, bad;
    StacksDiffering(settings, &good, &bad);
    const absl::StatusOr<BisectResult> result = RunBisect(good, bad, std::ref(host));
    EXPECT_TRUE(result.ok()) << result.status();
    const bool right = result->outcome == BisectOutcome::kCulpritsFound &&
                       result->culprits == std::vector<std::string>{guilty};
    tally.right += right ? 1 : 0;
    ++tally.runs;
    tally.measurements += result->measurements.size();
    tally.most = std::max(tally.most, result->measurements.size());
    if (right) {
      tally.covered +=
          result->culprit_effect.low <= effect && effect <= result->culprit_effect.high;
    }
  }
  return tally;
}

// ExhaustiveMeasurements one-at-a-time: A, B and each setting alone, each in as many
// rounds as the search measures A and B to begin with.
size_t ExhaustiveMeasurements(int settings) {
  return (settings + 2) * BisectOptions{}.reference_rounds;
}

void PrintTally(const char* what, int settings, const SearchTally& tally) {
  std::printf(
      "%s: right in %d of %d (interval covers the effect in %d); measurements %.1f on average, "
      "%zu at most; exhaustive one-at-a-time %zu\n",
      what, tally.right, tally.runs, tally.covered,
      static_cast<double>(tally.measurements) / tally.runs, tally.most,
      ExhaustiveMeasurements(settings));
}

// 200 searches for the one of `settings` that slows B by 20 %: right in at
// least 190, the stated interval covering the effect in 9 of 10 of those,
// and never more measurements than one setting at a time.
void ExpectFindsTheOneSlowingSetting(int settings, uint64_t seed) {
  const SearchTally tally = SearchForOneGuilty(settings, 200, seed, 1.2);
  const std::string what = "1 guilty of " + std::to_string(settings) + ", +20 %";
  PrintTally(what.c_str(), settings, tally);
  EXPECT_GE(tally.right, 190);
  EXPECT_GE(tally.covered, tally.right * 9 / 10);
  EXPECT_LE(tally.measurements, ExhaustiveMeasurements(settings) * tally.runs);
}

TEST(BisectSearchTest, NamesTheGuiltySettingAmongThree) { ExpectFindsTheOneSlowingSetting(3, 11); }

TEST(BisectSearchTest, NamesTheGuiltySettingAmongEight) { ExpectFindsTheOneSlowingSetting(8, 12); }

TEST(BisectSearchTest, NamesASettingThatMakesBFaster) {
  const SearchTally tally = SearchForOneGuilty(8, 100, 13, 0.8);
  PrintTally("1 guilty of 8, -20 %", 8, tally);
  EXPECT_GE(tally.right, 95);
}

// The effect needs s1 and s4 from B together (each alone does nothing):
// both are named, as one set.
TEST(BisectSearchTest, FindsTwoSettingsThatOnlyActTogether) {
  std::mt19937_64 random(14);
  constexpr int kRuns = 100;
  int right = 0;
  size_t measurements = 0;
  for (int run = 0; run < kRuns; ++run) {
    SimulatedHost host(random(), [](const StackSettings& s) {
      return FromBad(s, "s1") && FromBad(s, "s4") ? 1.25 : 1.0;
    });
    StackSettings good, bad;
    StacksDiffering(6, &good, &bad);
    const absl::StatusOr<BisectResult> result = RunBisect(good, bad, std::ref(host));
    ASSERT_TRUE(result.ok()) << result.status();
    right += result->culprits == std::vector<std::string>{"s1", "s4"} ? 1 : 0;
    measurements += result->measurements.size();
    if (run == 0) std::printf("interaction: %s\n", result->summary.c_str());
  }
  std::printf("s1 and s4 together of 6: right in %d of %d, %.1f measurements on average\n", right,
              kRuns, static_cast<double>(measurements) / kRuns);
  EXPECT_GE(right, 90);
}

TEST(BisectSearchTest, SaysSoWhenTheStacksDoNotDiffer) {
  std::mt19937_64 random(15);
  constexpr int kRuns = 200;
  int none = 0;
  for (int run = 0; run < kRuns; ++run) {
    SimulatedHost host(random(), [](const StackSettings&) { return 1.0; });
    StackSettings good, bad;
    StacksDiffering(4, &good, &bad);
    const absl::StatusOr<BisectResult> result = RunBisect(good, bad, std::ref(host));
    ASSERT_TRUE(result.ok()) << result.status();
    if (result->outcome == BisectOutcome::kNoDifference) {
      ++none;
      EXPECT_EQ(result->measurements.size(), 8u) << "only the reference rounds";
      EXPECT_TRUE(result->culprits.empty());
    }
  }
  std::printf("no difference: said so in %d of %d\n", none, kRuns);
  EXPECT_GE(none, 184);
}

// The effect comes with the build, which cannot be mixed: applying every
// other setting of B onto A does not reproduce it.
TEST(BisectSearchTest, SaysSoWhenNoMixableSettingReproducesTheEffect) {
  std::mt19937_64 random(16);
  int not_reproduced = 0;
  for (int run = 0; run < 50; ++run) {
    SimulatedHost host(
        random(), [](const StackSettings& s) { return s.at("libtorch_build") == "B" ? 1.2 : 1.0; });
    StackSettings good, bad;
    StacksDiffering(3, &good, &bad);
    good["libtorch_build"] = "A";
    bad["libtorch_build"] = "B";
    BisectOptions options;
    options.unmixable = {"libtorch_build"};
    const absl::StatusOr<BisectResult> result = RunBisect(good, bad, std::ref(host), options);
    ASSERT_TRUE(result.ok()) << result.status();
    not_reproduced += result->outcome == BisectOutcome::kNotReproduced ? 1 : 0;
    for (const BisectMeasurement& m : result->measurements) {
      ASSERT_EQ(m.mix.settings.at("libtorch_build"), m.mix.from_bad.size() == 4 ? "B" : "A")
          << "only B itself runs B's build";
    }
    if (run == 0) std::printf("not reproduced: %s\n", result->summary.c_str());
  }
  EXPECT_GE(not_reproduced, 47);
}

TEST(BisectSearchTest, StepByStepInBatches) {
  const StackSettings good = {{"blas_core", "Prescott"},
                              {"OMP_WAIT_POLICY", "PASSIVE"},
                              {"MKL_DEBUG_CPU_TYPE", "5"},
                              {"model", "fc"}};
  const StackSettings bad = {{"blas_core", "Zen"}, {"OMP_WAIT_POLICY", "ACTIVE"}, {"model", "fc"}};
  absl::StatusOr<BisectSearch> search = BisectSearch::Create(good, bad);
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->differing(),
            (std::vector<std::string>{"MKL_DEBUG_CPU_TYPE", "OMP_WAIT_POLICY", "blas_core"}));

  // The reference rounds come as one batch: A B, B A, A B, B A.
  const std::vector<MixRequest> first = search->Pending();
  ASSERT_EQ(first.size(), 8u);
  EXPECT_TRUE(first[0].from_bad.empty());
  EXPECT_EQ(first[0].settings, good);
  EXPECT_EQ(first[1].settings, bad) << "B's absent setting removed";
  EXPECT_EQ(first[2].settings, bad);
  EXPECT_EQ(first[2].round, 1u);
  EXPECT_EQ(first[7].settings, good);

  EXPECT_EQ(search->Record(8, {1.0}).code(), absl::StatusCode::kInvalidArgument);
  // The effect is blas_core's; measurement 3 failed (no step times).
  SimulatedHost host(17,
                     [](const StackSettings& s) { return s.at("blas_core") == "Zen" ? 1.3 : 1.0; });
  for (size_t i = 0; i < first.size(); ++i) {
    ASSERT_TRUE(search->Record(i, i == 3 ? std::vector<double>{} : host(first[i].settings)).ok());
    if (i == 0) {
      EXPECT_EQ(search->Record(0, {1.0}).code(), absl::StatusCode::kFailedPrecondition);
    }
    if (i + 1 < first.size()) {
      EXPECT_EQ(search->Pending().size(), first.size()) << i;
    }
  }
  while (!search->Done()) {
    const std::vector<MixRequest> batch = search->Pending();
    ASSERT_EQ(batch.size(), 2u) << "a probe and its reference";
    for (size_t i = 0; i < batch.size(); ++i)
      ASSERT_TRUE(search->Record(i, host(batch[i].settings)).ok());
  }
  const BisectResult& result = search->result();
  EXPECT_EQ(result.outcome, BisectOutcome::kCulpritsFound) << result.summary;
  EXPECT_EQ(result.culprits, std::vector<std::string>{"blas_core"});
  EXPECT_TRUE(result.measurements[3].step_times.empty());
  EXPECT_NEAR(result.stack_effect.ratio, 1.3, 0.05);
  EXPECT_EQ(result.stack_effect.basis, "rounds (pooled)");
  EXPECT_GE(result.stack_effect.paired_rounds, 3u) << "a round lost its A";
  EXPECT_GE(result.culprit_effect.paired_rounds, 1u);
  EXPECT_FALSE(result.decisions.empty());
  std::printf("step by step: %s\n", result.summary.c_str());
  EXPECT_TRUE(search->Pending().empty());
  EXPECT_EQ(search->Record(0, {1.0}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(BisectSearchTest, RefusesStacksThatDoNotDifferAndStopsAtItsBudget) {
  EXPECT_EQ(BisectSearch::Create({{"a", "1"}}, {{"a", "1"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  BisectOptions bad_rounds;
  bad_rounds.reference_rounds = 1;
  EXPECT_EQ(BisectSearch::Create({{"a", "1"}}, {{"a", "2"}}, bad_rounds).status().code(),
            absl::StatusCode::kInvalidArgument);

  StackSettings good, bad;
  StacksDiffering(8, &good, &bad);
  BisectOptions small;
  small.max_measurements = 10;
  SimulatedHost host(18, [](const StackSettings& s) { return FromBad(s, "s6") ? 1.2 : 1.0; });
  const absl::StatusOr<BisectResult> result = RunBisect(good, bad, std::ref(host), small);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outcome, BisectOutcome::kBudgetExhausted);
  EXPECT_LE(result->measurements.size(), 10u);
}

}  // namespace
}  // namespace paradnn::server::analysis
