// Verdicts on a speedup's points (server/analysis/speedup_verdicts.h): the
// interval's basis follows the runs there are, the verdict the evidence,
// rates and times give the same answer, and A/A and A/B by simulation hold
// the false discovery rate and find a 1.3x change.
#include "server/analysis/speedup_verdicts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace paradnn::server::analysis {
namespace {

SpeedupRow Row(const std::string& side, const std::string& config,
               const std::vector<SpeedupRun>& runs, double rerun_rel_sd = 0) {
  SpeedupRow row;
  row.side = side;
  row.config = config;
  row.params = 1;
  std::vector<double> values;
  for (const SpeedupRun& run : runs) values.push_back(run.value);
  row.metric = Median(values);
  row.runs = runs;
  row.rerun_rel_sd = rerun_rel_sd;
  return row;
}

v1::SpeedupResponse Judged(const std::vector<SpeedupRow>& rows, bool lower_is_better) {
  absl::StatusOr<v1::SpeedupResponse> response =
      JoinSpeedup(rows, "stack", "A", "B", lower_is_better);
  EXPECT_TRUE(response.ok()) << response.status();
  AddSpeedupVerdicts(rows, lower_is_better, kDefaultFdr, &*response);
  return *response;
}

TEST(SpeedupVerdictsTest, PairedRoundsFindAClearSpeedup) {
  // B's step time half of A's in every round, while the host drifts 30 %.
  const std::vector<SpeedupRow> rows = {
      Row("A", "c", {{"1", 10}, {"2", 13}, {"3", 10.5}, {"4", 12}}),
      Row("B", "c", {{"1", 5.1}, {"2", 6.4}, {"3", 5.3}, {"4", 6.0}})};
  const v1::SpeedupResponse r = Judged(rows, /*lower_is_better=*/true);
  ASSERT_EQ(r.points_size(), 1);
  const v1::SpeedupPoint& p = r.points(0);
  EXPECT_EQ(p.interval_basis(), "paired rounds");
  EXPECT_EQ(p.verdict(), "faster");
  EXPECT_NEAR(p.speedup(), 2, 0.05);
  EXPECT_LT(p.speedup_low(), p.speedup());
  EXPECT_GT(p.speedup_high(), p.speedup());
  EXPECT_GT(p.speedup_low(), 1.8);
  EXPECT_EQ(p.baseline_runs(), 4);
  EXPECT_EQ(p.candidate_runs(), 4);
  EXPECT_EQ(r.faster(), 1);
  EXPECT_DOUBLE_EQ(r.geomean_low(), p.speedup_low());
  EXPECT_DOUBLE_EQ(r.fdr(), kDefaultFdr);
}

TEST(SpeedupVerdictsTest, ARateGivesTheSameVerdictAsItsTime) {
  const std::vector<SpeedupRow> times = {Row("A", "c", {{"1", 10}, {"2", 12}, {"3", 11}}),
                                         Row("B", "c", {{"1", 14}, {"2", 16.5}, {"3", 15}})};
  std::vector<SpeedupRow> rates = times;
  for (SpeedupRow& row : rates) {
    for (SpeedupRun& run : row.runs) run.value = 64 / run.value;
    row.metric = 64 / row.metric;
  }
  const v1::SpeedupResponse by_time = Judged(times, true);
  const v1::SpeedupResponse by_rate = Judged(rates, false);
  EXPECT_EQ(by_time.points(0).verdict(), "slower");
  EXPECT_EQ(by_rate.points(0).verdict(), "slower");
  EXPECT_NEAR(by_time.points(0).speedup(), by_rate.points(0).speedup(), 1e-12);
  EXPECT_NEAR(by_time.points(0).speedup_low(), by_rate.points(0).speedup_low(), 1e-12);
}

TEST(SpeedupVerdictsTest, OneRunASideLeansOnTheRerunModelOrSaysNotEnoughData) {
  const std::vector<SpeedupRow> modelled = {Row("A", "c", {{"1", 10}}, 0.18),
                                            Row("B", "c", {{"1", 9}}, 0.18)};
  const v1::SpeedupPoint p = Judged(modelled, true).points(0);
  EXPECT_EQ(p.interval_basis(), "re-run model");
  // 10 % apart on a host whose re-runs spread 18 %: nothing detected.
  EXPECT_EQ(p.verdict(), "no difference detected");
  EXPECT_LT(p.speedup_low(), 1);
  EXPECT_GT(p.speedup_high(), 1);

  const std::vector<SpeedupRow> bare = {Row("A", "c", {{"1", 10}}), Row("B", "c", {{"1", 5}})};
  const v1::SpeedupResponse r = Judged(bare, true);
  EXPECT_EQ(r.points(0).verdict(), "not enough data");
  EXPECT_EQ(r.points(0).interval_basis(), "");
  EXPECT_EQ(r.not_enough_data(), 1);
}

TEST(SpeedupVerdictsTest, APredictedSideIsNotJudged) {
  std::vector<SpeedupRow> rows = {Row("A", "c", {{"1", 10}, {"2", 10.1}}),
                                  Row("B", "c", {{"1", 5}, {"2", 5.1}})};
  rows[1].predicted = true;
  EXPECT_EQ(Judged(rows, true).points(0).verdict(), "not enough data");
}

// A sweep against its own re-run, and against a 1.3x slower stack, over
// 100 configurations with 4 paired rounds, 25 % drift between rounds and
// 3 % noise: few false "different" verdicts, the change found nearly always.
TEST(SpeedupVerdictsTest, SimulatedAAAndAB) {
  std::mt19937 rng(17);
  std::normal_distribution<double> drift(0, 0.25), noise(0, 0.03);
  auto simulate = [&](double effect) {
    std::vector<SpeedupRow> rows;
    for (int c = 0; c < 100; ++c) {
      std::vector<SpeedupRun> a, b;
      const double level = 0.001 * (1 + c);
      for (int round = 1; round <= 4; ++round) {
        const double host = std::exp(drift(rng));
        a.push_back({std::to_string(round), level * host * std::exp(noise(rng))});
        b.push_back({std::to_string(round), effect * level * host * std::exp(noise(rng))});
      }
      rows.push_back(Row("A", absl::StrCat("c", c), a));
      rows.push_back(Row("B", absl::StrCat("c", c), b));
    }
    return Judged(rows, true);
  };
  const v1::SpeedupResponse aa = simulate(1.0);
  EXPECT_LE(aa.faster() + aa.slower(), 5);
  EXPECT_LT(aa.geomean_low(), 1);
  EXPECT_GT(aa.geomean_high(), 1);
  const v1::SpeedupResponse ab = simulate(1.3);
  EXPECT_EQ(ab.points(0).interval_basis(), "paired rounds, pooled spread");
  EXPECT_GE(ab.slower(), 95);
  EXPECT_EQ(ab.faster(), 0);
  EXPECT_NEAR(ab.geomean_speedup(), 1 / 1.3, 0.02);
  EXPECT_LT(ab.geomean_high(), 1);
}

}  // namespace
}  // namespace paradnn::server::analysis
