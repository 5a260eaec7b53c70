// Analyzer over a real SQLite file filled through the stores with results of
// known values: the SQL selection (sweeps, where filters, hyper-parameters,
// platform fields) and each analysis end to end, plus the errors for bad
// requests.
#include "server/analysis/analyzer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/platform_store.h"
#include "db/statement.h"
#include "paradnn/v1/coordinator.pb.h"
#include "tests/support/synthetic_results.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::server::analysis {
namespace {

using ::paradnn::testing::StoreSyntheticSweep;
using ::paradnn::testing::SyntheticPlatform;
using ::paradnn::testing::SyntheticResult;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// FC results with examples/s known in closed form: 100 × log2(node) − 50 ×
// log2(layer) + 10 × log2(batch), twice that in bfloat16.
SyntheticResult Fc(int64_t layer, int64_t node, int64_t batch, const std::string& precision) {
  SyntheticResult result;
  result.params = {{"layer", layer}, {"node", node}, {"batch", batch}};
  result.precision = precision;
  const double value = 100 * std::log2(node) - 50 * std::log2(layer) + 10 * std::log2(batch);
  result.examples_per_sec = precision == "bfloat16" ? 2 * value : value;
  result.model_flops_per_sec = result.examples_per_sec * 1e6;
  result.executed_flops_per_sec = result.model_flops_per_sec * 1.1;
  result.executed_flops = 1e9 * layer;
  result.bytes_per_step = 1e7 * node / 64;
  result.mfu = result.model_flops_per_sec / 250e9;
  result.param_count = layer * node * node;
  return result;
}

class AnalyzerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(file_.path());
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    db::PlatformStore platforms(database_.get());
    absl::StatusOr<int64_t> cpu = platforms.UpsertSync(SyntheticPlatform("cpu-a", "cpu", 250e9));
    absl::StatusOr<int64_t> gpu = platforms.UpsertSync(SyntheticPlatform("gpu-b", "cuda", 500e12));
    ASSERT_TRUE(cpu.ok() && gpu.ok());
    cpu_platform_ = *cpu;
    gpu_platform_ = *gpu;
  }

  // layer {1, 4} × node {64, 256, 1024} × batch {16, 128} in `precisions`.
  std::vector<SyntheticResult> Grid(const std::vector<std::string>& precisions) {
    std::vector<SyntheticResult> results;
    for (const std::string& precision : precisions) {
      for (int64_t layer : {1, 4}) {
        for (int64_t node : {64, 256, 1024}) {
          for (int64_t batch : {16, 128}) results.push_back(Fc(layer, node, batch, precision));
        }
      }
    }
    return results;
  }

  int64_t Store(const std::vector<SyntheticResult>& results, const std::string& device = "cpu") {
    absl::StatusOr<int64_t> id =
        StoreSyntheticSweep(database_.get(), "s", device, results,
                            device == "cpu" ? cpu_platform_ : gpu_platform_, device + "-worker");
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }

  absl::StatusOr<v1::AnalyzeResponse> Analyze(const v1::AnalyzeRequest& request) {
    return Analyzer(database_.get()).Analyze(request);
  }

  // A heat map of `metric` over `sweep`, `x` by `y`.
  static v1::AnalyzeRequest HeatmapOf(int64_t sweep, const std::string& metric,
                                      const std::string& x, const std::string& y) {
    v1::AnalyzeRequest request;
    v1::HeatmapRequest* heatmap = request.mutable_heatmap();
    heatmap->mutable_selection()->add_sweep_ids(sweep);
    heatmap->set_metric(metric);
    heatmap->set_x(x);
    heatmap->set_y(y);
    return request;
  }

  db::testing::TempDbFile file_;
  std::unique_ptr<db::Database> database_;
  int64_t cpu_platform_ = 0;
  int64_t gpu_platform_ = 0;
};

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
  (*request.mutable_heatmap()->mutable_selection()->mutable_where())["layer"] = "1";
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
  sensitivity->mutable_selection()->add_sweep_ids(sweep);
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
  speedup->mutable_selection()->add_sweep_ids(cpu_sweep);
  speedup->mutable_selection()->add_sweep_ids(gpu_sweep);
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
  request.mutable_speedup()->mutable_selection()->add_sweep_ids(cpu_sweep);
  request.mutable_speedup()->mutable_selection()->add_sweep_ids(gpu_sweep);
  request.mutable_speedup()->set_field("device_kind");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  // 12 configurations × 2 thread counts, each joined with its own.
  ASSERT_EQ(response->speedup().points_size(), 24);
  EXPECT_THAT(response->speedup().points(0).config(), HasSubstr("intra_op_threads="));
  EXPECT_NEAR(response->speedup().min_speedup(), 10, 1e-9);
  EXPECT_NEAR(response->speedup().max_speedup(), 10, 1e-9);
}

TEST_F(AnalyzerTest, SpeedupOfBfloat16OverFloat32DefaultsToFloat32AsBaseline) {
  const int64_t sweep = Store(Grid({"float32", "bfloat16"}));
  v1::AnalyzeRequest request;
  request.mutable_speedup()->mutable_selection()->add_sweep_ids(sweep);
  request.mutable_speedup()->set_field("precision");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->speedup().baseline(), "float32");
  EXPECT_EQ(response->speedup().points_size(), 12);
  EXPECT_NEAR(response->speedup().geomean_speedup(), 2, 1e-9);
}

TEST_F(AnalyzerTest, BoxplotGroupsByFamilyAndDevice) {
  const int64_t cpu_sweep = Store(Grid({"float32"}), "cpu");
  const int64_t gpu_sweep = Store(Grid({"float32"}), "cuda");
  v1::AnalyzeRequest request;
  request.mutable_boxplot()->mutable_selection()->add_sweep_ids(cpu_sweep);
  request.mutable_boxplot()->mutable_selection()->add_sweep_ids(gpu_sweep);
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
  request.mutable_roofline()->mutable_selection()->add_sweep_ids(sweep);
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
  request.mutable_scaling()->mutable_selection()->add_sweep_ids(sweep);
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
  (*request.mutable_heatmap()->mutable_selection()->mutable_where())["node"] = "256";
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
  box.mutable_boxplot()->mutable_selection()->add_sweep_ids(sweep);
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
  heatmap->mutable_selection()->add_sweep_ids(cnn_sweep);
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
  request.mutable_sensitivity()->mutable_selection()->add_sweep_ids(sweep);
  request.mutable_sensitivity()->set_metric("gflops");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->sensitivity().dropped(), ElementsAre("input: constant over the selection"));
  EXPECT_EQ(response->sensitivity().weights_size(), 3);
}

// Turns the jobs of `sweep` whose node is 1024 into a budgeted sweep's
// predictions: no result, JOB_PREDICTED, a stored prediction of 700
// examples/s with a 90 % step-time interval of [0.8, 1.25] × the step.
int64_t PredictNode1024(db::Database* database, int64_t sweep) {
  v1::PredictedStep prediction;
  prediction.set_step_seconds(0.02);
  prediction.set_step_seconds_low(0.016);
  prediction.set_step_seconds_high(0.025);
  prediction.set_interval(0.9);
  prediction.set_examples_per_sec(700);
  prediction.set_model_flops_per_sec(700e6);
  prediction.set_measurements(8);
  prediction.set_model("roofline-gp-v1");
  int64_t predicted = 0;
  absl::Status status = database->WriteSync([&](sqlite3* db) -> absl::Status {
    db::Statement jobs(db,
                       "SELECT j.id FROM jobs j JOIN config_params cp ON cp.config_id = "
                       "j.config_id AND cp.key = 'node' WHERE j.sweep_id = ? AND "
                       "cp.int_value = 1024");
    jobs.Bind(1, sweep);
    std::vector<int64_t> ids;
    for (;;) {
      absl::StatusOr<bool> row = jobs.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      ids.push_back(jobs.ColumnInt(0));
    }
    for (int64_t id : ids) {
      for (const char* sql : {"DELETE FROM samples WHERE result_id IN (SELECT id FROM results "
                              "WHERE job_id = ?)",
                              "DELETE FROM results WHERE job_id = ?"}) {
        db::Statement erase(db, sql);
        erase.Bind(1, id);
        if (absl::Status s = erase.Run(); !s.ok()) return s;
      }
      db::Statement mark(db, "UPDATE jobs SET state = ? WHERE id = ?");
      mark.Bind(1, static_cast<int>(v1::JOB_PREDICTED)).Bind(2, id);
      if (absl::Status s = mark.Run(); !s.ok()) return s;
      db::Statement insert(db,
                           "INSERT INTO predictions (job_id, details, created_unix_ms) "
                           "VALUES (?, ?, 1)");
      insert.Bind(1, id).BindBlob(2, prediction.SerializeAsString());
      if (absl::Status s = insert.Run(); !s.ok()) return s;
      ++predicted;
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  return predicted;
}

TEST_F(AnalyzerTest, PredictedResultsCountOnlyWhenAskedForAndSayWhatTheyAre) {
  const int64_t sweep = Store(Grid({"float32"}));
  ASSERT_EQ(PredictNode1024(database_.get(), sweep), 4);  // layer {1, 4} x batch {16, 128}

  v1::AnalyzeRequest request = HeatmapOf(sweep, "examples_per_sec", "node", "batch");
  v1::HeatmapRequest* heatmap = request.mutable_heatmap();
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->results(), 8);  // measurements only
  EXPECT_EQ(response->predicted_results(), 0);
  EXPECT_THAT(response->heatmap().x_values(), ElementsAre("64", "256"));

  heatmap->mutable_selection()->set_include_predicted(true);
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->results(), 12);
  EXPECT_EQ(response->predicted_results(), 4);
  const v1::HeatmapResponse& map = response->heatmap();
  EXPECT_THAT(map.x_values(), ElementsAre("64", "256", "1024"));
  for (const v1::HeatmapCell& cell : map.panels(0).cells()) {
    if (cell.x() != "1024") {
      EXPECT_EQ(cell.predicted_results(), 0);
      EXPECT_FALSE(cell.has_predicted_low());
      continue;
    }
    EXPECT_EQ(cell.predicted_results(), 2);
    EXPECT_EQ(cell.ok_results(), 2);
    EXPECT_NEAR(cell.value(), 700, 1e-9);
    // Examples/s is the inverse of the step: [700 / 1.25, 700 / 0.8].
    EXPECT_NEAR(cell.predicted_low(), 560, 1e-3);
    EXPECT_NEAR(cell.predicted_high(), 875, 1e-3);
  }

  // MFU through the roof of the sweep's measurements (250 GFLOP/s).
  heatmap->set_metric("mfu");
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  for (const v1::HeatmapCell& cell : response->heatmap().panels(0).cells()) {
    if (cell.x() == "1024") {
      EXPECT_NEAR(cell.value(), 700e6 / 250e9, 1e-12);
    }
  }
}

TEST_F(AnalyzerTest, EveryAnalysisSaysWhereItsPredictedPointsWent) {
  const int64_t sweep = Store(Grid({"float32"}));
  ASSERT_EQ(PredictNode1024(database_.get(), sweep), 4);
  // The sensitivity over every point, and over the measured ones alone.
  v1::AnalyzeRequest request;
  absl::StatusOr<v1::AnalyzeResponse> response;
  v1::SensitivityRequest* sensitivity = request.mutable_sensitivity();
  sensitivity->mutable_selection()->add_sweep_ids(sweep);
  sensitivity->mutable_selection()->set_include_predicted(true);
  sensitivity->set_metric("examples_per_sec");
  sensitivity->set_log2_features(true);
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::SensitivityResponse& fit = response->sensitivity();
  EXPECT_EQ(fit.points(), 12);
  EXPECT_EQ(fit.predicted_points(), 4);
  ASSERT_TRUE(fit.has_measured_only());
  EXPECT_EQ(fit.measured_only().points(), 8);
  EXPECT_EQ(fit.measured_only().weights_size(), fit.weights_size());
  EXPECT_NEAR(fit.measured_only().r_squared(), 1.0, 1e-9);  // the closed form, exactly

  // Boxes count their predicted points; a roofline cannot place them.
  request.Clear();
  request.mutable_boxplot()->mutable_selection()->add_sweep_ids(sweep);
  request.mutable_boxplot()->mutable_selection()->set_include_predicted(true);
  request.mutable_boxplot()->set_metric("examples_per_sec");
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->boxplot().groups_size(), 1);
  EXPECT_EQ(response->boxplot().groups(0).count(), 12);
  EXPECT_EQ(response->boxplot().groups(0).predicted(), 4);

  request.Clear();
  request.mutable_roofline()->mutable_selection()->add_sweep_ids(sweep);
  request.mutable_roofline()->mutable_selection()->set_include_predicted(true);
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->roofline().points_size(), 8);
  EXPECT_EQ(response->roofline().predicted_left_out(), 4);

  // A where filter on a predicted record's fields, the worker among them:
  // no worker measured a prediction.
  request = HeatmapOf(sweep, "examples_per_sec", "node", "batch");
  request.mutable_heatmap()->mutable_selection()->set_include_predicted(true);
  (*request.mutable_heatmap()->mutable_selection()->mutable_where())["worker"] = "cpu-worker";
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->predicted_results(), 0);
}

TEST_F(AnalyzerTest, SpeedupMarksThePointsWithAPredictedSide) {
  const int64_t fp32 = Store(Grid({"float32"}));
  const int64_t bf16 = Store(Grid({"bfloat16"}));
  ASSERT_EQ(PredictNode1024(database_.get(), bf16), 4);
  v1::AnalyzeRequest request;
  v1::SpeedupRequest* speedup = request.mutable_speedup();
  speedup->mutable_selection()->add_sweep_ids(fp32);
  speedup->mutable_selection()->add_sweep_ids(bf16);
  speedup->mutable_selection()->set_include_predicted(true);
  speedup->set_field("precision");
  absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->speedup().points_size(), 12);
  EXPECT_EQ(response->speedup().predicted_points(), 4);
  for (const v1::SpeedupPoint& point : response->speedup().points()) {
    EXPECT_FALSE(point.baseline_predicted());
    EXPECT_EQ(point.candidate_predicted(), point.config().find("node=1024") != std::string::npos)
        << point.config();
  }
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
  (*heatmap->mutable_selection()->mutable_where())["batch"] = "16";
  response = Analyze(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()), HasSubstr("constant"));

  heatmap->mutable_selection()->clear_where();
  heatmap->mutable_selection()->set_sweep_ids(0, 999);
  EXPECT_EQ(Analyze(request).status().code(), absl::StatusCode::kNotFound);
  heatmap->mutable_selection()->clear_sweep_ids();
  EXPECT_THAT(std::string(Analyze(request).status().message()), HasSubstr("sweep_ids"));

  // Fewer points than terms.
  v1::AnalyzeRequest fit;
  fit.mutable_sensitivity()->mutable_selection()->add_sweep_ids(sweep);
  (*fit.mutable_sensitivity()->mutable_selection()->mutable_where())["layer"] = "1";
  (*fit.mutable_sensitivity()->mutable_selection()->mutable_where())["batch"] = "16";
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
  v1::AnalyzeRequest speedup;
  speedup.mutable_speedup()->mutable_selection()->add_sweep_ids(sweep);
  speedup.mutable_speedup()->set_field("precision");
  speedup.mutable_speedup()->set_baseline("float32");
  speedup.mutable_speedup()->set_candidate("bfloat16");
  response = Analyze(speedup);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()), HasSubstr("bfloat16"));
}

}  // namespace
}  // namespace paradnn::server::analysis
