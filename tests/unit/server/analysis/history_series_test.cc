// The history analysis's series (server/analysis/history_series.h): runs
// grouped by configuration and hardware in measurement order, a step at a
// stack change found and named by what changed, a flat series left alone,
// a short one not searched.
#include "server/analysis/history_series.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace paradnn::server::analysis {
namespace {

std::vector<HistoryRun> Series(const std::string& config, int runs, int change_at, double ratio,
                               std::mt19937* rng) {
  std::normal_distribution<double> noise(0, 0.02);
  std::vector<HistoryRun> out;
  for (int i = 0; i < runs; ++i) {
    HistoryRun run;
    run.config = config;
    run.hardware = "cpu AMD EPYC";
    const bool after = change_at >= 0 && i >= change_at;
    run.fingerprint = after ? "fp-new" : "fp-old";
    run.stack = {{"libtorch_version", after ? "2.1.0" : "1.13.1"}, {"blas_core", "Zen"}};
    run.sweep_id = 1 + i / 2;  // two repeat rounds a sweep
    run.repeat = i % 2;
    run.job_id = 100 + i;
    run.value = 0.01 * (after ? ratio : 1.0) * std::exp(noise(*rng));
    out.push_back(run);
  }
  return out;
}

TEST(HistorySeriesTest, StackChangeNamesWhatDiffers) {
  EXPECT_EQ(StackChange({{"a", "1"}, {"b", "x"}}, {{"a", "2"}, {"b", "x"}, {"c", "new"}}),
            "a 1 -> 2, c (none) -> new");
  EXPECT_EQ(StackChange({{"a", "1"}}, {{"a", "1"}}), "");
}

TEST(HistorySeriesTest, FindsTheStepAtTheStackChangeAndNamesIt) {
  std::mt19937 rng(3);
  std::vector<HistoryRun> runs = Series("fc flat", 20, -1, 1, &rng);
  std::vector<HistoryRun> step = Series("fc step", 20, 10, 1.2, &rng);
  std::vector<HistoryRun> short_series = Series("fc short", 3, -1, 1, &rng);
  runs.insert(runs.end(), step.rbegin(), step.rend());  // any order in
  runs.insert(runs.end(), short_series.begin(), short_series.end());
  const v1::HistoryResponse h = BuildHistory(runs, ChangePointOptions{});
  ASSERT_EQ(h.series_size(), 3);
  const v1::HistorySeries& first = h.series(0);
  EXPECT_EQ(first.config(), "fc step");
  ASSERT_EQ(first.changes_size(), 1);
  const v1::HistoryChange& change = first.changes(0);
  EXPECT_EQ(change.index(), 10);
  EXPECT_NEAR(change.ratio(), 1.2, 0.03);
  EXPECT_LT(change.low(), change.ratio());
  EXPECT_GT(change.high(), change.ratio());
  EXPECT_GT(change.low(), 1.1);
  EXPECT_TRUE(change.at_fingerprint_change());
  EXPECT_EQ(change.fingerprint_before(), "fp-old");
  EXPECT_EQ(change.fingerprint_after(), "fp-new");
  EXPECT_EQ(change.stack_change(), "libtorch_version 1.13.1 -> 2.1.0");
  EXPECT_EQ(first.fingerprints(), 2);
  // In measurement order: by sweep, then repeat.
  for (int i = 1; i < first.points_size(); ++i) {
    EXPECT_GT(first.points(i).job_id(), first.points(i - 1).job_id());
  }
  EXPECT_EQ(h.series(1).config(), "fc flat");
  EXPECT_TRUE(h.series(1).searched());
  EXPECT_EQ(h.series(1).changes_size(), 0);
  EXPECT_EQ(h.series(2).config(), "fc short");
  EXPECT_FALSE(h.series(2).searched());
  EXPECT_EQ(h.min_points_each_side(), 5);
}

TEST(HistorySeriesTest, SeparatesHardwareClasses) {
  std::mt19937 rng(5);
  std::vector<HistoryRun> runs = Series("fc", 12, -1, 1, &rng);
  for (size_t i = 0; i < runs.size(); i += 2) runs[i].hardware = "cpu Intel Xeon";
  const v1::HistoryResponse h = BuildHistory(runs, ChangePointOptions{});
  ASSERT_EQ(h.series_size(), 2);
  EXPECT_EQ(h.series(0).points_size(), 6);
  EXPECT_FALSE(h.series(0).searched());  // 6 < 2 x 5
}

}  // namespace
}  // namespace paradnn::server::analysis
