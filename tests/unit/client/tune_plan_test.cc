// `paradnn tune`'s plan and report (client/tune_plan.h, tune_command.h):
// the candidates per host, the sweeps, the best per configuration, the
// matching of comparison points, the report's lines.
#include "client/tune_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "client/tune_command.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

bool Has(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

TEST(TunePlanTest, TwoCpusAreSearchedExhaustively) {
  EXPECT_THAT(SearchCandidates({2, 2, 1}, 1.0),
              ElementsAre("libtorch", "intel", "tensorflow", "guideline", "intra=1,inter=1",
                          "intra=2,inter=1,pin=on", "intra=2,inter=1,pin=off", "intra=1,inter=2"));
}

TEST(TunePlanTest, LargeHostsAreSearchedOverTheGuidelinesRange) {
  // 16 cores, 32 hyper-threads; a model of width 3.4: pools 1, 2, 3.
  const std::vector<std::string> c = SearchCandidates({32, 16, 1}, 3.4);
  EXPECT_TRUE(Has(c, "intra=16,inter=1"));         // every physical core
  EXPECT_TRUE(Has(c, "intra=32,inter=1,pin=on"));  // every logical CPU, pinned or not
  EXPECT_TRUE(Has(c, "intra=32,inter=1,pin=off"));
  EXPECT_TRUE(Has(c, "intra=8,inter=2"));
  EXPECT_TRUE(Has(c, "intra=8,inter=3"));
  EXPECT_TRUE(Has(c, "intra=16,inter=2"));
  EXPECT_FALSE(Has(c, "intra=16,inter=3"));                // 48 threads on 32 CPUs
  EXPECT_FALSE(Has(c, "intra=1,inter=4"));                 // beyond the guideline's pools
  EXPECT_TRUE(Has(c, "intra=16,inter=1,cores=physical"));  // siblings idle
  EXPECT_LE(c.size(), 24u);
  // Narrow models there: pools 1 and 2 only (docs/tuning.md says 17 values).
  EXPECT_EQ(SearchCandidates({32, 16, 1}, 1.0).size(), 17u);
  // No hyper-threads: physical and logical are one.
  EXPECT_FALSE(Has(SearchCandidates({16, 16, 1}, 1.0), "intra=16,inter=1,cores=physical"));
}

TEST(TunePlanTest, ReplicasAreSearchedOnlyWhenAskedFor) {
  EXPECT_FALSE(Has(SearchCandidates({2, 2, 1}, 1.0), "intra=1,inter=1,replicas=2"));
  const std::vector<std::string> small = SearchCandidates({2, 2, 1}, 1.0, true);
  EXPECT_EQ(small.size(), 9u);
  EXPECT_EQ(small.back(), "intra=1,inter=1,replicas=2");
  // 2 sockets of 12 physical cores (48 hyper-threads): P = 2, 4, 8, 16, 24.
  // Their shares are cut from the physical cores (halves of every logical
  // CPU would pair siblings), one per socket also with its memory there.
  const std::vector<std::string> large = SearchCandidates({48, 24, 2}, 1.0, true);
  EXPECT_TRUE(Has(large, "intra=12,inter=1,replicas=2,cores=physical"));  // one per socket
  EXPECT_TRUE(Has(large, "intra=12,inter=1,replicas=2,cores=physical,numa=on"));
  EXPECT_TRUE(Has(large, "intra=6,inter=1,replicas=4,cores=physical"));
  EXPECT_TRUE(Has(large, "intra=1,inter=1,replicas=24,cores=physical"));
  EXPECT_FALSE(Has(large, "intra=1,inter=1,replicas=48,cores=physical"));  // physical cores only
  // Two sockets without hyper-threads.
  const std::vector<std::string> sockets = SearchCandidates({16, 16, 2}, 1.0, true);
  EXPECT_TRUE(Has(sockets, "intra=8,inter=1,replicas=2"));
  EXPECT_TRUE(Has(sockets, "intra=8,inter=1,replicas=2,numa=on"));
}

TEST(TunePlanTest, OnlyCpuSweepsWithoutThreadSettingsAreTuned) {
  v1::SweepSpec spec;
  spec.set_family("fc");
  EXPECT_TRUE(CheckTunable(spec).ok());
  spec.set_device("cuda");
  EXPECT_THAT(std::string(CheckTunable(spec).message()), HasSubstr("device: cuda"));
  spec.set_device("cpu");
  (*spec.mutable_params())["intra_op_threads"].set_value(2);
  EXPECT_THAT(std::string(CheckTunable(spec).message()),
              HasSubstr("params.intra_op_threads: paradnn tune chooses the thread counts"));
  spec.mutable_params()->clear();
  (*spec.mutable_stack())["threads"].add_values("libtorch");
  EXPECT_THAT(std::string(CheckTunable(spec).message()), HasSubstr("stack.threads"));
}

TEST(TunePlanTest, TheSweepsMeasureFreshInRounds) {
  v1::SweepSpec spec;
  spec.set_name("fc-tiny");
  spec.set_family("fc");
  spec.mutable_run()->set_target_interval(0.03);
  const v1::SweepSpec s = TuneSweep(spec, {"libtorch", "intra=1,inter=1"}, 3, "-tune-search");
  EXPECT_EQ(s.name(), "fc-tiny-tune-search");
  EXPECT_EQ(s.repeats(), 3);
  EXPECT_TRUE(s.run().fresh());
  EXPECT_EQ(s.run().target_interval(), 0);
  EXPECT_THAT(s.stack().at("threads").values(), ElementsAre("libtorch", "intra=1,inter=1"));
}

v1::ResultRow Row(int64_t node, const std::string& threads, double median_s, bool ok = true) {
  v1::ResultRow row;
  row.mutable_config()->set_family("fc");
  (*row.mutable_config()->mutable_params())["node"] = node;
  (*row.mutable_config()->mutable_stack())["threads"] = threads;
  row.mutable_measurement()->set_outcome(ok ? v1::OK : v1::OOM);
  row.mutable_measurement()->mutable_stats()->set_median_s(median_s);
  return row;
}

TEST(TunePlanTest, TheBestIsTheLowestMedianOverRoundsPerConfiguration) {
  const std::vector<v1::ResultRow> rows = {
      Row(64, "libtorch", 3e-3),
      Row(64, "libtorch", 1e-3),
      Row(64, "libtorch", 2e-3),
      Row(64, "intra=1,inter=1", 1.5e-3),
      Row(64, "intra=1,inter=1", 1.6e-3),
      Row(64, "guideline", 0.1e-3, /*ok=*/false),  // a failed run is not a fast one
      Row(512, "libtorch", 9e-3),
      Row(512, "guideline", 8e-3),
  };
  const std::vector<ConfigBest> bests = BestPerConfiguration(rows);
  ASSERT_EQ(bests.size(), 2u);
  EXPECT_EQ(bests[0].config.params().at("node"), 64);
  EXPECT_EQ(bests[0].config.stack().count("threads"), 0u);
  EXPECT_EQ(bests[0].settings, "intra=1,inter=1");  // 1.55 ms against libtorch's median 2
  EXPECT_DOUBLE_EQ(bests[0].step_seconds, 1.55e-3);
  ASSERT_EQ(bests[0].by_settings.size(), 2u);
  EXPECT_EQ(bests[0].by_settings[1].first, "libtorch");
  EXPECT_EQ(bests[1].settings, "guideline");
}

TEST(TunePlanTest, ComparisonPointsAreMatchedToTheirConfiguration) {
  v1::ModelConfig config;
  config.set_family("fc");
  (*config.mutable_params())["layer"] = 4;
  (*config.mutable_params())["node"] = 64;
  EXPECT_TRUE(PointIsConfig("fc layer=4 node=64 precision=float32 optimizer=rmsprop", config));
  EXPECT_FALSE(PointIsConfig("fc layer=4 node=512 precision=float32 optimizer=rmsprop", config));
  EXPECT_FALSE(PointIsConfig("fc layer=4 node=64 precision=bfloat16 optimizer=rmsprop", config));
  EXPECT_FALSE(PointIsConfig("cnn layer=4 node=64", config));
  EXPECT_EQ(model::ConfigName(config), "fc layer=4 node=64");
}

TEST(TuneReportTest, SaysTheBestItsVerdictsAndTheLinesToCopy) {
  TunedConfig c;
  c.best.config.set_family("fc");
  (*c.best.config.mutable_params())["node"] = 64;
  c.best.settings = "intra=1,inter=1";
  c.best.step_seconds = 1.5e-3;
  c.best.by_settings = {{"intra=1,inter=1", 1.5e-3}, {"libtorch", 2e-3}};
  c.confirmed_step_seconds = 1.6e-3;
  c.vs["libtorch"] = {1.25, 1.1, 1.4, "faster"};
  c.vs["intel"] = {1.01, 0.95, 1.07, "no difference detected"};
  c.vs["guideline"] = {1.0, 1.0, 1.0, "is the best"};
  c.lines_to_copy = "torch.set_num_threads(1)\ntorch.set_num_interop_threads(1)\n";
  TuneReport tuned;
  tuned.host = "Example CPU: 2 logical CPUs";
  tuned.search_sweep = 3;
  tuned.confirm_sweep = 4;
  tuned.candidates = std::vector<std::string>(8, "x");
  tuned.baselines = {{"libtorch", "intra-op 2, inter-op 2"}};
  tuned.configs = {c};
  tuned.geomeans = {{"libtorch", {1.25, 0, 0, "faster in 1, slower in 0 of 1"}}};
  const std::string report = FormatTuneReport(tuned);
  EXPECT_THAT(report, HasSubstr("paradnn tune on Example CPU: 2 logical CPUs\n"));
  EXPECT_THAT(report, HasSubstr("search: 8 thread settings (sweep 3)"));
  EXPECT_THAT(report, HasSubstr("  libtorch    intra-op 2, inter-op 2\n"));
  EXPECT_THAT(report, HasSubstr("  intel       no result\n"));
  EXPECT_THAT(report, HasSubstr("fc node=64\n  best: intra=1,inter=1 at 1.600 ms per step"));
  EXPECT_THAT(report, HasSubstr("search (ms): intra=1,inter=1 1.500, libtorch 2.000\n"));
  EXPECT_THAT(report, HasSubstr("  vs libtorch     1.25x  [1.10, 1.40]  faster\n"));
  EXPECT_THAT(report, HasSubstr("  vs intel        1.01x  [0.95, 1.07]  no difference detected\n"));
  EXPECT_THAT(report, HasSubstr("  vs tensorflow  not compared (no result on one side)\n"));
  EXPECT_THAT(report, HasSubstr("  vs guideline   is the best\n"));
  EXPECT_THAT(report, HasSubstr("    torch.set_num_threads(1)\n"));
  EXPECT_THAT(report, HasSubstr("  vs libtorch     1.25x  (faster in 1, slower in 0 of 1)\n"));
  EXPECT_THAT(report, HasSubstr("paradnn compare --field stack.threads BASELINE BEST --sweep 4"));

  const std::string json = FormatTuneJson(tuned);
  EXPECT_THAT(json, HasSubstr("\"best\": \"intra=1,inter=1\""));
  EXPECT_THAT(json, HasSubstr("\"verdict\": \"faster\""));
  EXPECT_THAT(json, HasSubstr("\"node\": 64"));
  EXPECT_THAT(json, HasSubstr("\"confirm_sweep\": 4"));
}

}  // namespace
}  // namespace paradnn::client
