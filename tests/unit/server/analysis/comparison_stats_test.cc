// The statistics of a comparison (server/analysis/comparison_stats.h)
// against known values and by simulation: intervals that cover the true
// ratio 95 % of the time when the host drifts between rounds, false
// discoveries held at the rate asked for, real differences found.
#include "server/analysis/comparison_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace paradnn::server::analysis {
namespace {

// The fifteen p-values of Benjamini and Hochberg (1995), section 4.
const std::vector<double> kPaperPValues = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201,
                                           0.0278, 0.0298, 0.0344, 0.0459, 0.3240,
                                           0.4262, 0.5719, 0.6528, 0.7590, 1.000};

TEST(BenjaminiHochbergTest, ThePapersExampleHasFourDiscoveriesAtFivePercent) {
  const std::vector<double> adjusted = BenjaminiHochberg(kPaperPValues);
  // R: p.adjust(p, "BH").
  const std::vector<double> expected = {0.0015,   0.003,    0.0095,   0.035625, 0.0603,
                                        0.063857, 0.063857, 0.0645,   0.0765,   0.486,
                                        0.581182, 0.714875, 0.753231, 0.813214, 1.0};
  ASSERT_EQ(adjusted.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(adjusted[i], expected[i], 1e-6) << i;
  EXPECT_EQ(std::count_if(adjusted.begin(), adjusted.end(), [](double q) { return q <= 0.05; }), 4);
}

TEST(BenjaminiHochbergTest, KeepsTheInputOrder) {
  std::vector<double> shuffled = kPaperPValues;
  std::reverse(shuffled.begin(), shuffled.end());
  const std::vector<double> adjusted = BenjaminiHochberg(shuffled);
  EXPECT_NEAR(adjusted.back(), 0.0015, 1e-9);
  EXPECT_NEAR(adjusted.front(), 1.0, 1e-9);
  EXPECT_TRUE(BenjaminiHochberg({}).empty());
}

// A simulated host: each round slows or speeds both sides alike by a
// log-normal factor (sd `drift` in log terms: the 10-50 % these hosts
// drift by over minutes), and each run adds its own noise (sd `noise`).
struct Host {
  double drift = 0.25;
  double noise = 0.03;
};

std::vector<ComparisonRound> Simulate(std::mt19937_64& random, const Host& host, double ratio,
                                      int rounds, bool paired) {
  std::normal_distribution<double> drift(0, host.drift), noise(0, host.noise);
  std::vector<ComparisonRound> out;
  for (int r = 0; r < rounds; ++r) {
    const double speed = std::exp(drift(random));
    ComparisonRound& round = out.emplace_back();
    if (paired || r % 2 == 0) round.a.push_back(0.010 * speed * std::exp(noise(random)));
    if (paired || r % 2 == 1) round.b.push_back(0.010 * ratio * speed * std::exp(noise(random)));
  }
  return out;
}

// A percentile bootstrap of the per-round log ratios (blocks), for the
// comparison the header makes: what EstimateRatio does not use, and why.
bool BootstrapCovers(const std::vector<ComparisonRound>& rounds, double truth,
                     std::mt19937_64& random) {
  std::vector<double> d;
  for (const ComparisonRound& round : rounds) d.push_back(std::log(round.b[0] / round.a[0]));
  std::uniform_int_distribution<size_t> pick(0, d.size() - 1);
  std::vector<double> means;
  for (int b = 0; b < 400; ++b) {
    double sum = 0;
    for (size_t k = 0; k < d.size(); ++k) sum += d[pick(random)];
    means.push_back(sum / static_cast<double>(d.size()));
  }
  std::sort(means.begin(), means.end());
  const double low = means[static_cast<size_t>(0.025 * 400)],
               high = means[static_cast<size_t>(0.975 * 400) - 1];
  return low <= std::log(truth) && std::log(truth) <= high;
}

// 2,000 configurations, 4 rounds each on a host drifting 25 % between
// rounds: the paired interval covers the true 1.25x ratio 95 % of the time
// (binomial sd 0.5 %), where a percentile bootstrap of the same 4 rounds
// covers far less.
TEST(EstimateRatioTest, PairedRoundsCoverTheTrueRatioOnADriftingHost) {
  std::mt19937_64 random(37);
  constexpr int kTrials = 2000;
  int covered = 0, bootstrap_covered = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<ComparisonRound> rounds = Simulate(random, Host{}, 1.25, 4, true);
    const RatioEstimate estimate = EstimateRatio(rounds, 0);
    ASSERT_EQ(estimate.basis, "paired rounds");
    ASSERT_EQ(estimate.paired_rounds, 4u);
    covered += estimate.low <= 1.25 && 1.25 <= estimate.high ? 1 : 0;
    bootstrap_covered += BootstrapCovers(rounds, 1.25, random) ? 1 : 0;
  }
  const double coverage = static_cast<double>(covered) / kTrials;
  const double bootstrap = static_cast<double>(bootstrap_covered) / kTrials;
  std::printf(
      "4 paired rounds, 25 %% drift: t interval covers %.1f %%, percentile bootstrap %.1f %%\n",
      100 * coverage, 100 * bootstrap);
  EXPECT_GE(coverage, 0.93);
  EXPECT_LE(coverage, 0.97);
  EXPECT_LT(bootstrap, coverage - 0.05);
}

// Without pairs (each round measured one side): Welch's interval, which
// sees the drift as spread, still covers; and it is wider than the paired
// one, which the drift cancels out of.
TEST(EstimateRatioTest, UnpairedRunsCoverWithTheDriftAsSpread) {
  std::mt19937_64 random(41);
  constexpr int kTrials = 2000;
  int covered = 0;
  double unpaired_width = 0, paired_width = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const RatioEstimate estimate = EstimateRatio(Simulate(random, Host{}, 0.8, 8, false), 0);
    ASSERT_EQ(estimate.basis, "unpaired runs");
    covered += estimate.low <= 0.8 && 0.8 <= estimate.high ? 1 : 0;
    unpaired_width += std::log(estimate.high / estimate.low);
    const RatioEstimate paired = EstimateRatio(Simulate(random, Host{}, 0.8, 8, true), 0);
    paired_width += std::log(paired.high / paired.low);
  }
  const double coverage = static_cast<double>(covered) / kTrials;
  EXPECT_GE(coverage, 0.93);
  EXPECT_LE(coverage, 0.975);
  EXPECT_GT(unpaired_width, 3 * paired_width);
}

TEST(EstimateRatioTest, OneRunASideUsesTheHostsReRunSpreadOrSaysThereIsNotEnough) {
  const std::vector<ComparisonRound> one = {{{1.0}, {1.2}}};
  const RatioEstimate modelled = EstimateRatio(one, /*rerun_rel_sd=*/0.1);
  EXPECT_EQ(modelled.basis, "re-run model");
  EXPECT_NEAR(modelled.ratio, 1.2, 1e-12);
  // log 1.2 +- 1.96 x sqrt(2) x sqrt(log(1 + 0.1^2)), as computed apart.
  EXPECT_NEAR(modelled.low, 0.9101280, 1e-6);
  EXPECT_NEAR(modelled.high, 1.5821950, 1e-6);
  EXPECT_NEAR(modelled.p_value, 0.1962111, 1e-6);

  const RatioEstimate bare = EstimateRatio(one, /*rerun_rel_sd=*/0);
  EXPECT_EQ(bare.basis, "");
  EXPECT_NEAR(bare.ratio, 1.2, 1e-12);
  EXPECT_EQ(Judge(bare, 0.0), Verdict::kNotEnoughData);
  EXPECT_EQ(EstimateRatio({}, 0.1).basis, "") << "nothing measured";
  EXPECT_EQ(EstimateRatio({{{-1.0, 0.0}, {1.0}}}, 0.1).basis, "") << "no positive step time of A";
}

// 200 configurations on a drifting host, 4 paired rounds each, judged
// together at a 5 % false discovery rate. A/A (no difference anywhere):
// "different" on at most 5 %. A/B (B 1.3x slower everywhere): found on at
// least 95 %.
TEST(JudgeTest, AAHoldsItsFalseDiscoveriesAndABFindsTheDifference) {
  std::mt19937_64 random(43);
  for (const double truth : {1.0, 1.3}) {
    std::vector<RatioEstimate> estimates;
    std::vector<double> p_values;
    for (int config = 0; config < 200; ++config) {
      estimates.push_back(EstimateRatio(Simulate(random, Host{}, truth, 4, true), 0));
      p_values.push_back(estimates.back().p_value);
    }
    const std::vector<double> adjusted = BenjaminiHochberg(p_values);
    int slower = 0, faster = 0;
    for (size_t i = 0; i < estimates.size(); ++i) {
      const Verdict verdict = Judge(estimates[i], adjusted[i]);
      slower += verdict == Verdict::kSlower ? 1 : 0;
      faster += verdict == Verdict::kFaster ? 1 : 0;
    }
    std::printf("truth %.1fx: %d slower, %d faster of 200\n", truth, slower, faster);
    if (truth == 1.0) {
      EXPECT_LE(slower + faster, 10);
    } else {
      EXPECT_GE(slower, 190);
      EXPECT_EQ(faster, 0);
    }
  }
}

// Sample variances with `df` degrees of freedom around true variances that
// scatter as scaled inverse chi-square (prior variance `s0_squared`,
// `prior_df` degrees of freedom; infinite: all equal), at levels from
// `low_level` to `high_level` with the prior variance trending by `slope`.
struct SpreadWorld {
  double s0_squared = 0.01;
  double prior_df = 8;
  double df = 3;
  double slope = 0;
  double low_level = 0;
  double high_level = 0;
};

std::vector<RoundSpread> SimulateSpreads(std::mt19937_64& random, const SpreadWorld& world,
                                         int count) {
  std::chi_squared_distribution<double> prior_chi(std::isinf(world.prior_df) ? 1 : world.prior_df),
      sample_chi(world.df);
  std::uniform_real_distribution<double> level(world.low_level, world.high_level);
  std::vector<RoundSpread> spreads;
  for (int i = 0; i < count; ++i) {
    RoundSpread& spread = spreads.emplace_back();
    spread.log_level = level(random);
    const double center = world.s0_squared * std::exp(world.slope * spread.log_level);
    const double truth =
        std::isinf(world.prior_df) ? center : center * world.prior_df / prior_chi(random);
    spread.variance = truth * sample_chi(random) / world.df;
    spread.degrees_of_freedom = world.df;
  }
  return spreads;
}

// limma's fitFDist finds the prior it was simulated from: its variance and
// degrees of freedom from 4,000 spreads, its trend in the level, and a
// pooled (infinite) prior where the true variances are all one.
TEST(FitSpreadPriorTest, RecoversTheSimulatedPrior) {
  std::mt19937_64 random(47);
  const SpreadPrior scattered = FitSpreadPrior(SimulateSpreads(random, SpreadWorld{}, 4000));
  EXPECT_EQ(scattered.spreads, 4000u);
  EXPECT_DOUBLE_EQ(scattered.total_degrees_of_freedom, 12000);
  EXPECT_EQ(scattered.slope, 0) << "all at one level: no trend";
  EXPECT_NEAR(scattered.degrees_of_freedom, 8, 2);
  EXPECT_NEAR(scattered.VarianceAt(0) / 0.01, 1, 0.05);

  SpreadWorld equal;
  equal.prior_df = std::numeric_limits<double>::infinity();
  const SpreadPrior pooled = FitSpreadPrior(SimulateSpreads(random, equal, 4000));
  EXPECT_GT(pooled.degrees_of_freedom, 200);
  EXPECT_NEAR(pooled.VarianceAt(0) / 0.01, 1, 0.05);

  SpreadWorld trending;
  trending.slope = -0.5;  // slower configurations, steadier ratios
  trending.low_level = std::log(1e-4);
  trending.high_level = std::log(1e-1);
  const SpreadPrior trend = FitSpreadPrior(SimulateSpreads(random, trending, 4000));
  EXPECT_NEAR(trend.slope, -0.5, 0.05);
  EXPECT_NEAR(trend.degrees_of_freedom, 8, 2);
  EXPECT_NEAR(trend.VarianceAt(std::log(1e-3)) / (0.01 * std::exp(-0.5 * std::log(1e-3))), 1, 0.1);
}

TEST(FitSpreadPriorTest, TooFewSpreadsGiveNoPriorAndTheEstimateIsUnchanged) {
  const std::vector<RoundSpread> two = {{0.01, 2, 0}, {0.02, 2, 0}, {0.5, 0, 0}};
  EXPECT_TRUE(FitSpreadPrior(two).empty()) << "a spread without degrees of freedom does not count";
  const std::vector<ComparisonRound> rounds = {{{1.0}, {1.2}}, {{1.1}, {1.25}}, {{0.9}, {1.1}}};
  const RatioEstimate plain = EstimateRatio(rounds, 0);
  const RatioEstimate with_empty = EstimateRatio(rounds, 0, 0.95, FitSpreadPrior(two));
  EXPECT_EQ(with_empty.basis, "paired rounds");
  EXPECT_DOUBLE_EQ(with_empty.low, plain.low);
  const RoundSpread spread = PairedRoundSpread(rounds);
  EXPECT_DOUBLE_EQ(spread.degrees_of_freedom, 2);
  EXPECT_NEAR(spread.log_level, (std::log(1.0) + std::log(1.1) + std::log(0.9)) / 3, 1e-12);
  EXPECT_EQ(PairedRoundSpread({{{1.0}, {}}, {{1.0}, {1.1}}}).degrees_of_freedom, 0);
}

// Verdicts on `sweeps` simulated comparisons of 8 configurations in
// `rounds` paired rounds, B `truth` times A's step time, at a 5 % false
// discovery rate. The per-round log ratio's sd is about 0.11 (what two
// stacks measured interleaved gave on the 2-vCPU hosts), scattering
// between configurations as inverse chi-square with 8 degrees of freedom;
// the host drifts 25 % between rounds.
struct SweepVerdicts {
  double found_moderated = 0;  // share of configurations called slower
  double found_own = 0;        // the same, each on its own spread
  double called = 0;           // called faster or slower, moderated
  double covered = 0;          // moderated intervals holding the truth
};

SweepVerdicts SimulateSweeps(std::mt19937_64& random, double truth, int rounds, int sweeps) {
  constexpr int kConfigs = 8;
  std::chi_squared_distribution<double> scatter(8);
  std::normal_distribution<double> unit(0, 1);
  SweepVerdicts out;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    std::vector<std::vector<ComparisonRound>> configs;
    std::vector<RoundSpread> spreads;
    for (int c = 0; c < kConfigs; ++c) {
      const double side_sd = 0.08 * std::sqrt(8 / scatter(random));
      std::vector<ComparisonRound>& config = configs.emplace_back();
      for (int r = 0; r < rounds; ++r) {
        const double host = std::exp(0.25 * unit(random));
        config.push_back({{0.01 * host * std::exp(side_sd * unit(random))},
                          {0.01 * truth * host * std::exp(side_sd * unit(random))}});
      }
      spreads.push_back(PairedRoundSpread(config));
    }
    const SpreadPrior prior = FitSpreadPrior(spreads);
    std::vector<RatioEstimate> moderated, own;
    std::vector<double> p_moderated, p_own;
    for (const std::vector<ComparisonRound>& config : configs) {
      moderated.push_back(EstimateRatio(config, 0, 0.95, prior));
      own.push_back(EstimateRatio(config, 0));
      p_moderated.push_back(moderated.back().p_value);
      p_own.push_back(own.back().p_value);
      out.covered += moderated.back().low <= truth && truth <= moderated.back().high ? 1 : 0;
    }
    const std::vector<double> q_moderated = BenjaminiHochberg(p_moderated),
                              q_own = BenjaminiHochberg(p_own);
    for (size_t i = 0; i < configs.size(); ++i) {
      const Verdict verdict = Judge(moderated[i], q_moderated[i]);
      out.called += verdict == Verdict::kFaster || verdict == Verdict::kSlower ? 1 : 0;
      out.found_moderated += verdict == Verdict::kSlower ? 1 : 0;
      out.found_own += Judge(own[i], q_own[i]) == Verdict::kSlower ? 1 : 0;
    }
  }
  const double total = static_cast<double>(sweeps) * kConfigs;
  for (double* share : {&out.found_moderated, &out.found_own, &out.called, &out.covered}) {
    *share /= total;
  }
  return out;
}

// With each configuration's own spread (2 degrees of freedom at 3 rounds)
// a 1.3x change is found under a third of the time; moderated across
// configurations, well over twice as often at 3 rounds and at least 95 %
// of the time at 5, while the intervals still cover and A/A stays quiet.
TEST(FitSpreadPriorTest, ModeratedSpreadFindsA13xChangeAndStillCovers) {
  std::mt19937_64 random(53);
  for (const int rounds : {3, 5}) {
    const SweepVerdicts aa = SimulateSweeps(random, 1.0, rounds, 1000);
    const SweepVerdicts ab = SimulateSweeps(random, 1.3, rounds, 1000);
    std::printf(
        "8 configurations x %d rounds: A/A %.1f %% called different, coverage %.1f %%; "
        "1.3x found %.1f %% moderated, %.1f %% on each one's own spread, coverage %.1f %%\n",
        rounds, 100 * aa.called, 100 * aa.covered, 100 * ab.found_moderated, 100 * ab.found_own,
        100 * ab.covered);
    EXPECT_LE(aa.called, 0.05);
    EXPECT_GE(aa.covered, 0.93);
    EXPECT_GE(ab.covered, 0.93);
    if (rounds == 3) {
      EXPECT_GE(ab.found_moderated, 2 * ab.found_own);
    } else {
      EXPECT_GE(ab.found_moderated, 0.95);
      EXPECT_GT(ab.found_moderated, ab.found_own);
    }
  }
}

TEST(JudgeTest, ADifferenceNeedsBothTheAdjustedPValueAndTheInterval) {
  RatioEstimate estimate;
  estimate.basis = "paired rounds";
  estimate.ratio = 0.8;
  estimate.low = 0.7;
  estimate.high = 0.9;
  EXPECT_EQ(Judge(estimate, 0.01), Verdict::kFaster);
  EXPECT_EQ(Judge(estimate, 0.2), Verdict::kNoDifference)
      << "not a discovery across configurations";
  estimate.high = 1.1;
  EXPECT_EQ(Judge(estimate, 0.01), Verdict::kNoDifference);
  EXPECT_STREQ(VerdictName(Verdict::kNoDifference), "no difference detected");
}

// The A/A of the verdicts integration test, simulated 4,000 times: two
// sweeps of 8 configurations x 3 rounds on the fake runner's host, whose
// drift is a fixed function of the job's number (not normal: two
// sinusoids), each round in its own shuffled order, compared round by
// round. Under that null the moderated test calls at least one
// configuration different in about 6 % of comparisons (the FDR of 5 %
// is the family-wise rate when nothing differs), one of 8 ~1 % of the time.
TEST(FitSpreadPriorTest, HoldsItsFalseDiscoveriesUnderTheFakeRunnersDrift) {
  auto host = [](int n) { return std::exp(0.08 * std::sin(0.9 * n) + 0.04 * std::sin(2.7 * n)); };
  std::mt19937_64 random(5);
  constexpr int kComparisons = 4000, kConfigs = 8, kRounds = 3;
  int with_any = 0, false_calls = 0;
  for (int comparison = 0; comparison < kComparisons; ++comparison) {
    std::vector<std::vector<ComparisonRound>> configs(kConfigs,
                                                      std::vector<ComparisonRound>(kRounds));
    int job = 0;
    for (int side = 0; side < 2; ++side) {
      for (int r = 0; r < kRounds; ++r) {
        std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7};
        std::shuffle(order.begin(), order.end(), random);
        for (int c : order) {
          const double step = 0.0001 * (1 + 0.05 * c) * host(job++);
          (side == 0 ? configs[c][r].a : configs[c][r].b).push_back(step);
        }
      }
    }
    std::vector<RoundSpread> spreads;
    spreads.reserve(configs.size());
    for (const std::vector<ComparisonRound>& config : configs) {
      spreads.push_back(PairedRoundSpread(config));
    }
    const SpreadPrior prior = FitSpreadPrior(spreads);
    std::vector<RatioEstimate> estimates;
    std::vector<double> p_values;
    for (const std::vector<ComparisonRound>& config : configs) {
      estimates.push_back(EstimateRatio(config, 0, 0.95, prior));
      p_values.push_back(estimates.back().p_value);
    }
    const std::vector<double> q_values = BenjaminiHochberg(p_values);
    int calls = 0;
    for (size_t i = 0; i < estimates.size(); ++i) {
      calls += Judge(estimates[i], q_values[i]) != Verdict::kNoDifference ? 1 : 0;
    }
    with_any += calls > 0 ? 1 : 0;
    false_calls += calls;
  }
  const double any_share = static_cast<double>(with_any) / kComparisons;
  const double per_config = static_cast<double>(false_calls) / kComparisons / kConfigs;
  std::printf(
      "A/A on the fake runner's drift: %.1f %% of comparisons call one or more of 8 "
      "different, %.2f %% of configurations\n",
      100 * any_share, 100 * per_config);
  EXPECT_LE(any_share, 0.075);
  EXPECT_LE(per_config, 0.02);
}

}  // namespace
}  // namespace paradnn::server::analysis
