// Analyzer over results of which some are a budgeted sweep's predictions
// (ResultSelection.include_predicted): counted only when asked for, and
// every analysis says where its predicted points went.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/statement.h"
#include "paradnn/v1/coordinator.pb.h"
#include "server/analysis/analyzer.h"
#include "tests/unit/server/analysis/analyzer_test_support.h"

namespace paradnn::server::analysis {
namespace {

using ::testing::ElementsAre;

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

  request.mutable_selection()->set_include_predicted(true);
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
  request.mutable_selection()->add_sweep_ids(sweep);
  request.mutable_selection()->set_include_predicted(true);
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
  request.mutable_selection()->add_sweep_ids(sweep);
  request.mutable_selection()->set_include_predicted(true);
  request.mutable_boxplot()->set_metric("examples_per_sec");
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->boxplot().groups_size(), 1);
  EXPECT_EQ(response->boxplot().groups(0).count(), 12);
  EXPECT_EQ(response->boxplot().groups(0).predicted(), 4);

  request.Clear();
  request.mutable_selection()->add_sweep_ids(sweep);
  request.mutable_selection()->set_include_predicted(true);
  request.mutable_roofline();  // every option defaulted
  response = Analyze(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->roofline().points_size(), 8);
  EXPECT_EQ(response->roofline().predicted_left_out(), 4);

  // A where filter on a predicted record's fields, the worker among them:
  // no worker measured a prediction.
  request = HeatmapOf(sweep, "examples_per_sec", "node", "batch");
  request.mutable_selection()->set_include_predicted(true);
  (*request.mutable_selection()->mutable_where())["worker"] = "cpu-worker";
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
  request.mutable_selection()->add_sweep_ids(fp32);
  request.mutable_selection()->add_sweep_ids(bf16);
  request.mutable_selection()->set_include_predicted(true);
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

}  // namespace
}  // namespace paradnn::server::analysis
