// Analyzer over a real SQLite file filled through the stores with results of
// known values: the SQL selection (sweeps, where filters, hyper-parameters,
// platform fields) and each analysis end to end, plus the errors for bad
// requests. Predicted results: analyzer_predicted_test.cc.
#include "server/analysis/analyzer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/server/analysis/analyzer_test_support.h"

namespace paradnn::server::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(AnalyzerTest, HeatmapTakesTheMedianOverTheOtherFieldsAndShowsOom) {
  std::vector<SyntheticResult> results = Grid({"float32"});
  SyntheticResult oom = Fc(4, 4096, 128, "float32");
  oom.outcome = v1::OOM;
  SyntheticResult predicted = Fc(4, 8192, 128, "float32");
  predicted.outcome = v1::PREDICTED_OOM;
  results.push_back(oom);
  results.push_back(predicted);
  const int64_t sweep = Store(results);

  const v1::AnalyzeRequest request = HeatmapOf(sweep, "examples_per_sec", "node", "batch");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->results(), 14);
  const v1::HeatmapResponse& map = response->heatmap();
  EXPECT_EQ(map.unit(), "examples/s");
  EXPECT_THAT(map.x_values(), ElementsAre("64", "256", "1024", "4096", "8192"));
  EXPECT_THAT(map.y_values(), ElementsAre("16", "128"));
  ASSERT_EQ(map.panels_size(), 1);
  // (y=16, x=256): median over layer {1, 4} of 100·8 − 50·log2(layer) + 40.
  const v1::HeatmapCell& cell = map.panels(0).cells(1);
  EXPECT_EQ(cell.x(), "256");
  EXPECT_EQ(cell.y(), "16");
  ASSERT_TRUE(cell.has_value());
  EXPECT_NEAR(cell.value(), 800 + 40 - 50, 1e-9);
  EXPECT_EQ(cell.ok_results(), 2);
  // (y=128, x=4096) ran out of memory; (y=128, x=8192) was predicted to.
  const v1::HeatmapCell& oom_cell = map.panels(0).cells(5 + 3);
  EXPECT_EQ(oom_cell.x(), "4096");
  EXPECT_FALSE(oom_cell.has_value());
  EXPECT_EQ(oom_cell.oom_results(), 1);
  EXPECT_EQ(map.panels(0).cells(5 + 4).predicted_oom_results(), 1);
}

TEST_F(AnalyzerTest, WhereFiltersInSqlAndPanelsSplitByPrecision) {
  const int64_t sweep = Store(Grid({"float32", "bfloat16"}));
  v1::AnalyzeRequest request = HeatmapOf(sweep, "gflops", "node", "batch");
  (*request.mutable_selection()->mutable_where())["layer"] = "1";
  request.mutable_heatmap()->set_panel("precision");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->results(), 12);  // layer=1 only
  const v1::HeatmapResponse& map = response->heatmap();
  ASSERT_EQ(map.panels_size(), 2);
  EXPECT_EQ(map.panels(0).panel_value(), "bfloat16");
  EXPECT_EQ(map.panels(1).panel_value(), "float32");
  // One result per cell now: bf16 is exactly twice fp32 (GFLOP/s = ex/s / 1000).
  EXPECT_NEAR(map.panels(0).cells(0).value(), 2 * map.panels(1).cells(0).value(), 1e-9);
  EXPECT_NEAR(map.panels(1).cells(0).value(), (600 + 40) * 1e6 / 1e9, 1e-12);
}

TEST_F(AnalyzerTest, SensitivityRecoversTheSignsOfTheKnownModel) {
  const int64_t sweep = Store(Grid({"float32"}));
  v1::AnalyzeRequest request;
  v1::SensitivityRequest* sensitivity = request.mutable_sensitivity();
  request.mutable_selection()->add_sweep_ids(sweep);
  sensitivity->set_metric("examples_per_sec");
  sensitivity->set_log2_features(true);
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::SensitivityResponse& fit = response->sensitivity();
  EXPECT_EQ(fit.points(), 12);
  EXPECT_GT(fit.r_squared(), 0.999999);
  // Features default to the varying hyper-parameters, sorted by name.
  ASSERT_EQ(fit.weights_size(), 3);
  EXPECT_EQ(fit.weights(0).term(), "batch");
  EXPECT_GT(fit.weights(0).weight(), 0);
  EXPECT_EQ(fit.weights(1).term(), "layer");
  EXPECT_LT(fit.weights(1).weight(), 0);
  EXPECT_EQ(fit.weights(2).term(), "node");
  EXPECT_GT(fit.weights(2).weight(), fit.weights(0).weight());
}

TEST_F(AnalyzerTest, SpeedupJoinsConfigurationsAcrossDeviceKinds) {
  std::vector<SyntheticResult> cpu = Grid({"float32"});
  std::vector<SyntheticResult> gpu = Grid({"float32"});
  for (SyntheticResult& result : gpu) {
    result.examples_per_sec *= 8 * result.params["batch"] / 16;  // bigger batches gain more
  }
  gpu.pop_back();  // one configuration only on the CPU
  const int64_t cpu_sweep = Store(cpu, "cpu");
  const int64_t gpu_sweep = Store(gpu, "cuda");
  v1::AnalyzeRequest request;
  v1::SpeedupRequest* speedup = request.mutable_speedup();
  request.mutable_selection()->add_sweep_ids(cpu_sweep);
  request.mutable_selection()->add_sweep_ids(gpu_sweep);
  speedup->set_field("device_kind");
  speedup->set_color_by("batch");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::SpeedupResponse& out = response->speedup();
  EXPECT_EQ(out.metric(), "examples_per_sec");
  EXPECT_EQ(out.baseline(), "cpu");
  EXPECT_EQ(out.candidate(), "cuda");
  EXPECT_EQ(out.points_size(), 11);
  EXPECT_EQ(out.baseline_only(), 1);
  EXPECT_NEAR(out.min_speedup(), 8, 1e-9);
  EXPECT_NEAR(out.max_speedup(), 64, 1e-9);
  for (const v1::SpeedupPoint& point : out.points()) {
    EXPECT_NEAR(point.speedup(), point.color_value() == "16" ? 8 : 64, 1e-9) << point.config();
    EXPECT_THAT(point.config(), HasSubstr("precision=float32"));
  }
  // The speedup depends on batch only.
  ASSERT_GT(out.sensitivity().weights_size(), 0);
  EXPECT_GT(out.sensitivity().r_squared(), 0.999);
  for (const v1::SensitivityWeight& weight : out.sensitivity().weights()) {
    EXPECT_NEAR(weight.weight(), weight.term() == "batch" ? 1 : 0, 1e-6) << weight.term();
  }
}

TEST_F(AnalyzerTest, SpeedupKeepsSweptThreadCountsApart) {
  auto with_threads = [this](double scale) {
    std::vector<SyntheticResult> results;
    for (int threads : {1, 2}) {
      for (SyntheticResult result : Grid({"float32"})) {
        result.params["intra_op_threads"] = threads;
        result.intra_op_threads = threads;
        result.examples_per_sec *= scale * threads;
        results.push_back(result);
      }
    }
    return results;
  };
  const int64_t cpu_sweep = Store(with_threads(1), "cpu");
  const int64_t gpu_sweep = Store(with_threads(10), "cuda");
  v1::AnalyzeRequest request;
  request.mutable_selection()->add_sweep_ids(cpu_sweep);
  request.mutable_selection()->add_sweep_ids(gpu_sweep);
  request.mutable_speedup()->set_field("device_kind");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  // 12 configurations × 2 thread counts, each joined with its own.
  ASSERT_EQ(response->speedup().points_size(), 24);
  EXPECT_THAT(response->speedup().points(0).config(), HasSubstr("intra_op_threads="));
  EXPECT_NEAR(response->speedup().min_speedup(), 10, 1e-9);
  EXPECT_NEAR(response->speedup().max_speedup(), 10, 1e-9);
}

// A stack.threads side spelled in another key order names the results
// stored under the one spelling expansion gives it.
TEST_F(AnalyzerTest, SpeedupSidesOfStackThreadsAreMatchedInTheirOneSpelling) {
  std::vector<SyntheticResult> results;
  for (const char* threads : {"libtorch", "intra=2,inter=1,pin=on"}) {
    for (SyntheticResult result : Grid({"float32"})) {
      result.stack["threads"] = threads;
      if (std::string(threads) != "libtorch") result.examples_per_sec *= 1.5;
      results.push_back(result);
    }
  }
  const int64_t sweep = Store(results);
  absl::StatusOr<v1::AnalyzeResponse> response =
      Analyze(SpeedupOf(sweep, "stack.threads", "libtorch", "pin=on,inter=1,intra=2"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->speedup().candidate(), "intra=2,inter=1,pin=on");
  EXPECT_EQ(response->speedup().points_size(), 12);
  EXPECT_NEAR(response->speedup().geomean_speedup(), 1.5, 1e-9);
}

TEST_F(AnalyzerTest, SpeedupOfBfloat16OverFloat32DefaultsToFloat32AsBaseline) {
  const int64_t sweep = Store(Grid({"float32", "bfloat16"}));
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(SpeedupOf(sweep, "precision"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->speedup().baseline(), "float32");
  EXPECT_EQ(response->speedup().points_size(), 12);
  EXPECT_NEAR(response->speedup().geomean_speedup(), 2, 1e-9);
}

TEST_F(AnalyzerTest, BoxplotGroupsByFamilyAndDevice) {
  const int64_t cpu_sweep = Store(Grid({"float32"}), "cpu");
  const int64_t gpu_sweep = Store(Grid({"float32"}), "cuda");
  v1::AnalyzeRequest request;
  request.mutable_selection()->add_sweep_ids(cpu_sweep);
  request.mutable_selection()->add_sweep_ids(gpu_sweep);
  request.mutable_boxplot()->set_metric("mfu");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::BoxplotResponse& box = response->boxplot();
  EXPECT_EQ(box.unit(), "fraction");
  ASSERT_EQ(box.groups_size(), 2);
  EXPECT_EQ(box.groups(0).name(), "fc / Synthetic cpu cpu-a");
  EXPECT_EQ(box.groups(0).count(), 12);
  EXPECT_LE(box.groups(0).p2(), box.groups(0).p50());
}

TEST_F(AnalyzerTest, RooflinePlacesJobsAndOperatorsUnderTheCalibratedRoofs) {
  std::vector<SyntheticResult> results = Grid({"float32"});
  v1::OpProfile op;
  op.set_name("aten::addmm");
  op.set_input_shapes("[[64], [64, 128], [128, 64]]");
  op.set_flops(2.0 * 64 * 128 * 64);
  op.set_self_seconds(1e-6);
  results[0].ops.push_back(op);
  const int64_t sweep = Store(results);
  v1::AnalyzeRequest request;
  request.mutable_selection()->add_sweep_ids(sweep);
  request.mutable_roofline()->set_include_ops(true);
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::RooflineResponse& roofline = response->roofline();
  ASSERT_EQ(roofline.points_size(), 13);
  // Job 1: layer 1, node 64: 1e9 FLOPs over 1e7 bytes.
  EXPECT_FALSE(roofline.points(0).op());
  EXPECT_NEAR(roofline.points(0).intensity(), 100, 1e-9);
  EXPECT_THAT(roofline.points(0).label(), HasSubstr("node=64"));
  const v1::RooflinePoint& op_point = roofline.points(12);
  EXPECT_TRUE(op_point.op());
  // 2·64·128·64 FLOPs over (64 + 2·64·128) floats of 4 bytes.
  EXPECT_NEAR(op_point.intensity(), 2.0 * 64 * 128 * 64 / ((64 + 2 * 64 * 128) * 4.0), 1e-9);
  ASSERT_EQ(roofline.roofs_size(), 1);
  EXPECT_EQ(roofline.roofs(0).compute(0).flops_per_sec(), 250e9);
  ASSERT_GT(roofline.roofs(0).bandwidth_size(), 0);
  EXPECT_THAT(roofline.roofs(0).bandwidth().rbegin()->level(), ::testing::StartsWith("DRAM (≥ "));
  EXPECT_EQ(roofline.roofs(0).bandwidth().rbegin()->bytes_per_sec(), 45e9);
}

TEST_F(AnalyzerTest, ScalingComparesThreadCountsPerConfiguration) {
  std::vector<SyntheticResult> results;
  for (int threads : {1, 2}) {
    for (SyntheticResult result : Grid({"float32"})) {
      result.intra_op_threads = threads;
      result.examples_per_sec *= threads == 2 ? 1.5 : 1;
      results.push_back(result);
    }
  }
  const int64_t sweep = Store(results);
  v1::AnalyzeRequest request;
  request.mutable_selection()->add_sweep_ids(sweep);
  request.mutable_scaling();  // every option defaulted
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::ScalingResponse& scaling = response->scaling();
  EXPECT_EQ(scaling.field(), "intra_op_threads");
  EXPECT_THAT(scaling.levels(), ElementsAre("1", "2"));
  ASSERT_EQ(scaling.summary_size(), 2);
  EXPECT_EQ(scaling.summary(1).configs(), 12);
  EXPECT_NEAR(scaling.summary(1).median_speedup(), 1.5, 1e-9);
  EXPECT_NEAR(scaling.summary(1).median_efficiency(), 0.75, 1e-9);
}

// Every answer says what it covered and what it combined: a heat map of
// node × batch over two precisions and two layer counts took medians over
// both, and says so; a box plot grouped by precision pooled the rest.
TEST_F(AnalyzerTest, ScopeNamesTheSelectionPlatformsAndWhatWasAggregated) {
  const int64_t sweep = Store(Grid({"float32", "bfloat16"}));
  v1::AnalyzeRequest request = HeatmapOf(sweep, "gflops", "layer", "batch");
  (*request.mutable_selection()->mutable_where())["node"] = "256";
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::AnalysisScope& scope = response->scope();
  EXPECT_THAT(scope.sweep_ids(), ElementsAre(sweep));
  EXPECT_EQ(scope.where().at("node"), "256");
  EXPECT_THAT(scope.platforms(), ElementsAre(SyntheticPlatform("cpu-a", "cpu", 1).device_name()));
  EXPECT_EQ(scope.aggregation(), "median of each cell");
  ASSERT_EQ(scope.aggregated_size(), 1) << scope.DebugString();
  EXPECT_EQ(scope.aggregated(0).field(), "precision");
  EXPECT_THAT(scope.aggregated(0).values(), ElementsAre("bfloat16", "float32"));

  v1::AnalyzeRequest box;
  box.mutable_selection()->add_sweep_ids(sweep);
  box.mutable_boxplot()->set_metric("gflops");
  box.mutable_boxplot()->add_group_by("precision");
  absl::StatusOr<v1::AnalyzeResponse> boxes = Analyze(box);
  ASSERT_TRUE(boxes.ok()) << boxes.status();
  EXPECT_EQ(boxes->scope().aggregation(), "pooled into each box");
  std::vector<std::string> pooled;
  for (const v1::FieldValues& field : boxes->scope().aggregated()) pooled.push_back(field.field());
  EXPECT_THAT(pooled, ElementsAre("batch", "layer", "node"));
}

TEST_F(AnalyzerTest, HeatmapOfTwoFamiliesPanelsByFamilyOrIsRefused) {
  std::vector<SyntheticResult> cnn;
  for (int64_t batch : {4, 16}) {
    for (const char* precision : {"float32", "bfloat16"}) {
      SyntheticResult r = Fc(1, 64, batch, precision);
      r.family = "cnn";
      r.params = {{"filter", 16}, {"batch", batch}};
      cnn.push_back(r);
    }
  }
  const int64_t fc_sweep = Store(Grid({"float32", "bfloat16"}));
  const int64_t cnn_sweep = Store(cnn);
  v1::AnalyzeRequest request = HeatmapOf(fc_sweep, "gflops", "batch", "precision");
  v1::HeatmapRequest* heatmap = request.mutable_heatmap();
  request.mutable_selection()->add_sweep_ids(cnn_sweep);
  absl::StatusOr<v1::AnalyzeResponse> refused = Analyze(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("2 families (cnn, fc)"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--panel family"));

  heatmap->set_panel("family");
  absl::StatusOr<v1::AnalyzeResponse> panelled = Analyze(request);
  ASSERT_TRUE(panelled.ok()) << panelled.status();
  const v1::HeatmapResponse& map = panelled->heatmap();
  ASSERT_EQ(map.panels_size(), 2);
  EXPECT_EQ(map.panels(0).panel_value(), "cnn");
  EXPECT_THAT(map.panels(0).x_values(), ElementsAre("4", "16"));
  EXPECT_THAT(map.panels(1).x_values(), ElementsAre("16", "128"));
  for (const v1::HeatmapPanel& panel : map.panels()) {
    for (const v1::HeatmapCell& cell : panel.cells()) EXPECT_TRUE(cell.has_value()) << cell.x();
  }
}

TEST_F(AnalyzerTest, SensitivitySaysWhichFieldsItLeftOutAndWhy) {
  std::vector<SyntheticResult> results = Grid({"float32"});
  for (SyntheticResult& r : results) r.params["input"] = 2000;
  const int64_t sweep = Store(results);
  v1::AnalyzeRequest request;
  request.mutable_selection()->add_sweep_ids(sweep);
  request.mutable_sensitivity()->set_metric("gflops");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->sensitivity().dropped(), ElementsAre("input: constant over the selection"));
  EXPECT_EQ(response->sensitivity().weights_size(), 3);
}

TEST_F(AnalyzerTest, BadRequestsNameTheProblem) {
  const int64_t sweep = Store(Grid({"float32"}));
  v1::AnalyzeRequest request = HeatmapOf(sweep, "speed", "node", "batch");
  v1::HeatmapRequest* heatmap = request.mutable_heatmap();

  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("metric 'speed' is unknown; allowed: examples_per_sec"));

  heatmap->set_metric("gflops");
  heatmap->set_x("nodes");
  response = Analyze(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("'nodes' is not a field of the selected results; hyper-parameters of "
                        "the selected sweeps: batch, layer, node"));

  // A constant axis.
  heatmap->set_x("node");
  (*request.mutable_selection()->mutable_where())["batch"] = "16";
  response = Analyze(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()), HasSubstr("constant"));

  request.mutable_selection()->clear_where();
  request.mutable_selection()->set_sweep_ids(0, 999);
  EXPECT_EQ(Analyze(request).status().code(), absl::StatusCode::kNotFound);
  request.mutable_selection()->clear_sweep_ids();
  EXPECT_THAT(std::string(Analyze(request).status().message()),
              HasSubstr("selection.sweep_ids: give at least one sweep id"));

  // Fewer points than terms.
  v1::AnalyzeRequest fit;
  fit.mutable_selection()->add_sweep_ids(sweep);
  (*fit.mutable_selection()->mutable_where())["layer"] = "1";
  (*fit.mutable_selection()->mutable_where())["batch"] = "16";
  fit.mutable_sensitivity()->set_metric("gflops");
  fit.mutable_sensitivity()->add_features("node");
  fit.mutable_sensitivity()->set_interactions(false);
  EXPECT_TRUE(Analyze(fit).ok());                    // 3 points, 2 terms
  fit.mutable_sensitivity()->add_features("batch");  // constant, and a third term
  response = Analyze(fit);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("more points than terms: 3 points for 3 terms"));

  // No configuration on both sides.
  response = Analyze(SpeedupOf(sweep, "precision", "float32", "bfloat16"));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()), HasSubstr("bfloat16"));
}

// The selection is the request's, once for every kind: a request without a
// kind names the kinds, one without sweeps names selection.sweep_ids, and
// bisect, which reads no stored results, refuses one.
TEST_F(AnalyzerTest, TheSelectionIsTheRequestsAndErrorsNameItTruly) {
  const int64_t sweep = Store(Grid({"float32"}));
  v1::AnalyzeRequest request;
  request.mutable_selection()->add_sweep_ids(sweep);
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("analysis: set one of heatmap, sensitivity, roofline"));

  request.mutable_boxplot()->set_metric("gflops");
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->results(), 12);
  EXPECT_THAT(response->scope().sweep_ids(), ElementsAre(sweep));

  request.clear_selection();
  response = Analyze(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("selection.sweep_ids: give at least one sweep id"));

  v1::AnalyzeRequest bisect;
  bisect.mutable_bisect()->mutable_good()->insert({"blas_core", "Haswell"});
  bisect.mutable_bisect()->mutable_bad()->insert({"blas_core", "Zen"});
  EXPECT_TRUE(Analyze(bisect).ok()) << Analyze(bisect).status();
  bisect.mutable_selection()->add_sweep_ids(sweep);
  response = Analyze(bisect);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("selection: bisect reads no stored results"));
}

}  // namespace
}  // namespace paradnn::server::analysis
