// The scale-out arithmetic (server/analysis/scale_out_series.h) on
// synthetic runs: a weak series, a strong one, one that is neither, a grid
// that is both, the communication share's crossing of 50 %, a baseline
// that is missing, repeats, and the error when nothing scales.
#include "server/analysis/scale_out_series.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace paradnn::server::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kConfig[] = "fc layer=2 node=1024 precision=float32";

// A run of `ranks` replicas of `batch` at `n`; with `exposed` > 0 (or
// `data_parallel`) it has a DataParallelStep whose parts sum to the step.
ScaleOutRun GangRun(int32_t n, int64_t batch, double step_s, double exposed = 0,
                    bool data_parallel = true) {
  ScaleOutRun run;
  run.config = kConfig;
  run.n = n;
  run.ranks = n;
  run.batch = batch;
  run.step_s = step_s;
  run.data_parallel = data_parallel;
  if (data_parallel) {
    run.backend = "gloo";
    run.optimizer_s = 0.01;
    run.exposed_communication_s = exposed;
    run.compute_s = step_s - exposed - run.optimizer_s;
    run.allreduce_s = exposed * 2;
    run.bus_bytes_per_sec = 1e9;
  }
  return run;
}

v1::ScaleOutResponse Build(const std::vector<ScaleOutRun>& runs,
                           const std::vector<ScaleOutGap>& gaps = {}) {
  absl::StatusOr<v1::ScaleOutResponse> response = BuildScaleOut(runs, gaps, "hosts");
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : v1::ScaleOutResponse();
}

TEST(ScaleOutTest, WeakSeriesScoresThroughputAgainstTheOneRankRun) {
  const v1::ScaleOutResponse r =
      Build({GangRun(1, 64, 0.1), GangRun(2, 64, 0.11, 0.01), GangRun(4, 64, 0.125, 0.02)});
  EXPECT_EQ(r.field(), "hosts");
  EXPECT_EQ(r.weak_series(), 1);
  EXPECT_EQ(r.strong_series(), 0);
  ASSERT_EQ(r.series_size(), 1);
  const v1::ScaleOutSeries& weak = r.series(0);
  EXPECT_EQ(weak.mode(), "weak");
  EXPECT_EQ(weak.batch(), 64);
  EXPECT_EQ(weak.config(), kConfig);
  EXPECT_EQ(weak.baseline_n(), 1);
  EXPECT_EQ(weak.baseline_kind(), "data-parallel 1 rank");
  EXPECT_THAT(weak.baseline(), HasSubstr("same communication path (gloo)"));
  ASSERT_EQ(weak.points_size(), 3);
  const v1::ScaleOutPoint& four = weak.points(2);
  EXPECT_EQ(four.global_batch(), 256);
  EXPECT_NEAR(four.examples_per_sec(), 256 / 0.125, 1e-9);
  EXPECT_NEAR(four.ideal_examples_per_sec(), 4 * 64 / 0.1, 1e-9);
  EXPECT_NEAR(four.speedup(), 4 * 0.1 / 0.125, 1e-12);
  EXPECT_NEAR(four.efficiency(), 0.1 / 0.125, 1e-12);
  EXPECT_NEAR(weak.points(0).efficiency(), 1, 1e-12);
  // The stacked breakdown: compute, exposed communication, optimizer, rest.
  EXPECT_NEAR(four.compute_s(), 0.125 - 0.02 - 0.01, 1e-12);
  EXPECT_NEAR(four.exposed_communication_s(), 0.02, 1e-12);
  EXPECT_NEAR(four.optimizer_s(), 0.01, 1e-12);
  EXPECT_NEAR(four.other_s(), 0, 1e-12);
  EXPECT_NEAR(four.communication_share(), 0.16, 1e-12);
  EXPECT_FALSE(weak.has_crossover_n());
  EXPECT_EQ(weak.crossover(), "not within the measured range (hosts 1-4; at most 16%)");
}

TEST(ScaleOutTest, StrongSeriesScoresStepTimesAgainstAPlainRun) {
  // Global batch 256 throughout; hosts=1 ran without data-parallel wrapping.
  const v1::ScaleOutResponse r = Build({GangRun(1, 256, 0.4, 0, /*data_parallel=*/false),
                                        GangRun(2, 128, 0.25, 0.05), GangRun(4, 64, 0.2, 0.08)});
  ASSERT_EQ(r.series_size(), 1);
  const v1::ScaleOutSeries& strong = r.series(0);
  EXPECT_EQ(strong.mode(), "strong");
  EXPECT_EQ(r.strong_series(), 1);
  EXPECT_EQ(strong.global_batch(), 256);
  EXPECT_EQ(strong.baseline_kind(), "plain");
  EXPECT_THAT(strong.baseline(), HasSubstr("without data-parallel wrapping"));
  EXPECT_NEAR(strong.points(1).speedup(), 1.6, 1e-12);
  EXPECT_NEAR(strong.points(1).efficiency(), 0.8, 1e-12);
  EXPECT_NEAR(strong.points(2).speedup(), 2, 1e-12);
  EXPECT_NEAR(strong.points(2).efficiency(), 0.5, 1e-12);
  // Throughput of a strong series rises as its step falls; the ideal line
  // is the baseline's times N.
  EXPECT_NEAR(strong.points(2).examples_per_sec(), 256 / 0.2, 1e-9);
  EXPECT_NEAR(strong.points(2).ideal_examples_per_sec(), 4 * 256 / 0.4, 1e-9);
  // A run without a DataParallelStep is all compute.
  EXPECT_FALSE(strong.points(0).data_parallel());
  EXPECT_NEAR(strong.points(0).compute_s(), 0.4, 1e-12);
  EXPECT_EQ(strong.points(0).exposed_communication_s(), 0);
}

TEST(ScaleOutTest, NeitherWeakNorStrongHasNoEfficiency) {
  const v1::ScaleOutResponse r = Build({GangRun(1, 64, 0.1), GangRun(2, 100, 0.2, 0.05)});
  ASSERT_EQ(r.series_size(), 1);
  const v1::ScaleOutSeries& neither = r.series(0);
  EXPECT_EQ(neither.mode(), "neither");
  EXPECT_EQ(r.neither_series(), 1);
  EXPECT_THAT(neither.note(), HasSubstr("neither constant"));
  ASSERT_EQ(neither.points_size(), 2);
  for (const v1::ScaleOutPoint& point : neither.points()) {
    EXPECT_FALSE(point.has_efficiency());
    EXPECT_FALSE(point.has_speedup());
  }
  EXPECT_TRUE(neither.baseline_kind().empty());
}

TEST(ScaleOutTest, AGridYieldsAWeakSeriesPerBatchAndAStrongOnePerGlobalBatch) {
  const v1::ScaleOutResponse r = Build({GangRun(1, 64, 0.1), GangRun(1, 128, 0.2),
                                        GangRun(2, 64, 0.12, 0.02), GangRun(2, 128, 0.22, 0.02)});
  EXPECT_EQ(r.weak_series(), 2);
  EXPECT_EQ(r.strong_series(), 1);  // global 128: hosts=1 batch 128, hosts=2 batch 64
  ASSERT_EQ(r.series_size(), 3);
  EXPECT_EQ(r.series(0).batch(), 64);
  EXPECT_EQ(r.series(1).batch(), 128);
  const v1::ScaleOutSeries& strong = r.series(2);
  EXPECT_EQ(strong.mode(), "strong");
  EXPECT_EQ(strong.global_batch(), 128);
  EXPECT_NEAR(strong.points(1).speedup(), 0.2 / 0.12, 1e-12);
}

TEST(ScaleOutTest, CommunicationCrossesHalfTheStepOnLogN) {
  // Shares 0, 0.3, 0.7: half is crossed halfway between log 2 and log 4.
  const v1::ScaleOutResponse r = Build({GangRun(1, 64, 0.1), GangRun(2, 64, 0.2, 0.06),
                                        GangRun(4, 64, 0.5, 0.35), GangRun(8, 64, 1, 0.8)});
  ASSERT_EQ(r.series_size(), 1);
  const v1::ScaleOutSeries& weak = r.series(0);
  ASSERT_TRUE(weak.has_crossover_n());
  EXPECT_NEAR(weak.crossover_n(), std::sqrt(8.0), 1e-9);
  EXPECT_EQ(weak.crossover(), "at hosts ~ 2.83 (between 2 and 4)");
}

TEST(ScaleOutTest, ShareCrossingAtTheFirstNOrNever) {
  EXPECT_EQ(ShareCrossing({1, 2}, {0.6, 0.9}), 1);
  EXPECT_EQ(ShareCrossing({1, 2, 4}, {0.1, 0.2, 0.4}), std::nullopt);
  EXPECT_NEAR(*ShareCrossing({2, 8}, {0.0, 1.0}), 4, 1e-9);  // log-midpoint of 2 and 8
  // Only the first upward crossing counts.
  EXPECT_NEAR(*ShareCrossing({1, 2, 4, 8}, {0.0, 0.5, 0.2, 0.9}), 2, 1e-9);
}

TEST(ScaleOutTest, AMissingBaselineIsNamedAndTheSmallestMeasuredNTakesItsPlace) {
  const std::vector<ScaleOutGap> gaps = {{kConfig, 1, 64, "OOM"}, {kConfig, 1, 32, "ERROR"}};
  const v1::ScaleOutResponse r =
      Build({GangRun(2, 64, 0.2, 0.02), GangRun(4, 64, 0.25, 0.05)}, gaps);
  ASSERT_EQ(r.series_size(), 1);
  const v1::ScaleOutSeries& weak = r.series(0);
  EXPECT_EQ(weak.baseline_n(), 2);
  EXPECT_EQ(weak.baseline_kind(), "data-parallel 2 ranks");
  EXPECT_THAT(weak.baseline(), HasSubstr("already communicating"));
  // The batch-32 failure belongs to no series here.
  EXPECT_EQ(weak.note(), "no OK result at hosts=1 (OOM): the baseline is hosts=2");
  EXPECT_NEAR(weak.points(1).efficiency(), 0.2 / 0.25, 1e-12);
}

TEST(ScaleOutTest, RepeatsAreCombinedByTheirMedian) {
  const v1::ScaleOutResponse r =
      Build({GangRun(1, 64, 0.1), GangRun(1, 64, 0.3), GangRun(1, 64, 0.2),
             GangRun(2, 64, 0.2, 0.05), GangRun(2, 64, 0.4, 0.1)});
  ASSERT_EQ(r.series_size(), 1);
  const v1::ScaleOutSeries& weak = r.series(0);
  EXPECT_EQ(weak.points(0).runs(), 3);
  EXPECT_NEAR(weak.points(0).step_s(), 0.2, 1e-12);
  EXPECT_EQ(weak.points(1).runs(), 2);
  EXPECT_NEAR(weak.points(1).step_s(), 0.3, 1e-12);
  EXPECT_NEAR(weak.points(1).exposed_communication_s(), 0.075, 1e-12);
}

TEST(ScaleOutTest, ConfigurationsAtOneNAloneAreAnError) {
  absl::StatusOr<v1::ScaleOutResponse> r =
      BuildScaleOut({GangRun(2, 64, 0.1), GangRun(2, 128, 0.2)}, {}, "hosts");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("two or more values of hosts"));
  EXPECT_THAT(r.status().message(), HasSubstr("at hosts 2"));
  EXPECT_EQ(BuildScaleOut({}, {}, "devices").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ScaleOutTest, SeriesComeWeakThenStrongThenNeither) {
  std::vector<ScaleOutRun> runs = {GangRun(1, 256, 0.4), GangRun(2, 128, 0.25, 0.05)};
  ScaleOutRun other = GangRun(1, 64, 0.1);
  other.config = "fc layer=1";
  runs.push_back(other);
  other = GangRun(2, 64, 0.12, 0.02);
  other.config = "fc layer=1";
  runs.push_back(other);
  const v1::ScaleOutResponse r = Build(runs);
  std::vector<std::string> modes;
  for (const v1::ScaleOutSeries& series : r.series()) modes.push_back(series.mode());
  EXPECT_THAT(modes, ElementsAre("weak", "strong"));
  EXPECT_EQ(r.series(0).config(), "fc layer=1");
}

}  // namespace
}  // namespace paradnn::server::analysis
