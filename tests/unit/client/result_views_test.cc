#include "client/result_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;

v1::ResultRow Row(int64_t job, int32_t repeat, int64_t node, double examples_per_sec,
                  v1::Outcome outcome = v1::OK) {
  v1::ResultRow row;
  row.set_job_id(job);
  row.set_repeat(repeat);
  row.set_state(v1::JOB_DONE);
  v1::ModelConfig& c = *row.mutable_config();
  c.set_family("fc");
  // Insertion order differs between rows; the grouping must not care.
  if (job % 2 == 0) {
    (*c.mutable_params())["node"] = node;
    (*c.mutable_params())["layer"] = 4;
  } else {
    (*c.mutable_params())["layer"] = 4;
    (*c.mutable_params())["node"] = node;
  }
  c.set_precision("float32");
  c.set_optimizer("rmsprop");
  v1::Measurement& m = *row.mutable_measurement();
  m.set_outcome(outcome);
  if (outcome == v1::OK) {
    m.set_examples_per_sec(examples_per_sec);
    m.mutable_stats()->set_ci95_rel(0.01);
  }
  return row;
}

size_t Column(const ResultTable& table, const std::string& name) {
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i].name == name) return i;
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

double Number(const Cell& cell) {
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* i = std::get_if<int64_t>(&cell)) return static_cast<double>(*i);
  ADD_FAILURE() << "not a number";
  return 0;
}

TEST(ResultViewsTest, RepeatsTableShowsTheSpreadPerConfiguration) {
  const std::vector<v1::ResultRow> rows = {
      Row(1, 0, 64, 100), Row(2, 0, 512, 10), Row(3, 1, 64, 110),
      Row(4, 1, 512, 10), Row(5, 2, 64, 90),  Row(6, 2, 512, 0, v1::OOM),
  };
  const ResultTable table = BuildRepeatsTable(rows);
  ASSERT_EQ(table.rows.size(), 2u);
  const std::vector<Cell>& small = table.rows[0];
  EXPECT_EQ(std::get<std::string>(small[Column(table, "jobs")]), "1 3 5");
  EXPECT_EQ(Number(small[Column(table, "node")]), 64);
  EXPECT_EQ(Number(small[Column(table, "repeats_ok")]), 3);
  EXPECT_EQ(Number(small[Column(table, "examples_per_sec_median")]), 100);
  EXPECT_EQ(Number(small[Column(table, "examples_per_sec_min")]), 90);
  EXPECT_EQ(Number(small[Column(table, "examples_per_sec_max")]), 110);
  EXPECT_DOUBLE_EQ(Number(small[Column(table, "spread_pct")]), 20);
  EXPECT_NEAR(Number(small[Column(table, "cv_pct")]), 10, 1e-9);  // sd 10 / mean 100
  EXPECT_DOUBLE_EQ(Number(small[Column(table, "step_ci95_pct_median")]), 1);

  const std::vector<Cell>& large = table.rows[1];
  EXPECT_EQ(Number(large[Column(table, "repeats_ok")]), 2);
  EXPECT_EQ(Number(large[Column(table, "repeats")]), 3);
  EXPECT_DOUBLE_EQ(Number(large[Column(table, "cv_pct")]), 0);
  EXPECT_EQ(std::get<std::string>(large[Column(table, "other_outcomes")]), "OOM x1");
  EXPECT_THAT(FormatHumanTable(table), HasSubstr("20.0%"));
}

// The interval of a configuration's mean comes from the coordinator, one
// per sweep: shown with its target, and left out where a configuration's
// rows come from two sweeps.
TEST(ResultViewsTest, RepeatsTableShowsTheMeansIntervalOfOneSweep) {
  std::vector<v1::ResultRow> rows = {Row(1, 0, 64, 100), Row(2, 1, 64, 110), Row(3, 0, 512, 10),
                                     Row(4, 1, 512, 11)};
  for (v1::ResultRow& row : rows) {
    row.set_sweep_id(7);
    row.mutable_repeat_interval()->set_runs(2);
    row.mutable_repeat_interval()->set_half_width_rel(0.025);
    row.mutable_repeat_interval()->set_target(0.03);
    row.mutable_repeat_interval()->set_target_status("reached");
  }
  rows[3].set_sweep_id(8);
  const ResultTable table = BuildRepeatsTable(rows);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(Number(table.rows[0][Column(table, "mean_ci95_pct")]), 2.5);
  EXPECT_DOUBLE_EQ(Number(table.rows[0][Column(table, "target_pct")]), 3);
  EXPECT_EQ(std::get<std::string>(table.rows[0][Column(table, "target_status")]), "reached");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(table.rows[1][Column(table, "mean_ci95_pct")]))
      << "two sweeps' rows: neither one's interval";
  EXPECT_THAT(FormatNarrowTable(table),
              HasSubstr("target interval: 1 of 1 configurations reached it"));
}

TEST(ResultViewsTest, OpsTableListsTheTopOperatorsOfProfiledJobs) {
  v1::ResultRow profiled = Row(1, 0, 64, 100);
  auto add = [&](const std::string& name, const std::string& shapes, double self, double flops) {
    v1::OpProfile* op = profiled.mutable_measurement()->add_op_profile();
    op->set_name(name);
    op->set_input_shapes(shapes);
    op->set_calls(2);
    op->set_self_seconds(self);
    op->set_total_seconds(self);
    op->set_self_share(self / 0.010);
    op->set_flops(flops);
  };
  add("aten::mm", "[[64, 64], [64, 64]]", 0.004, 4e9);  // 1 TFLOP/s
  add("aten::addmm", "[[64], [64, 64]]", 0.003, 0);
  add("aten::mm", "[[8, 8], [8, 8]]", 0.001, 0);
  add("aten::relu", "[[64, 64]]", 0.0005, 0);
  const ResultTable table = BuildOpsTable({profiled, Row(2, 0, 512, 10)}, 2);
  ASSERT_EQ(table.rows.size(), 2u);  // top 2 of job 1; job 2 has no profile
  EXPECT_EQ(std::get<std::string>(table.rows[0][Column(table, "operator")]), "aten::mm");
  EXPECT_DOUBLE_EQ(Number(table.rows[0][Column(table, "self_ms")]), 5);  // both shapes
  EXPECT_DOUBLE_EQ(Number(table.rows[0][Column(table, "self_share_pct")]), 50);
  EXPECT_EQ(Number(table.rows[0][Column(table, "calls")]), 4);
  EXPECT_EQ(std::get<std::string>(table.rows[0][Column(table, "input_shapes")]),
            "[[64, 64], [64, 64]]");
  EXPECT_DOUBLE_EQ(Number(table.rows[0][Column(table, "gflops_per_sec")]), 800);
  EXPECT_EQ(std::get<std::string>(table.rows[1][Column(table, "operator")]), "aten::addmm");
  EXPECT_EQ(BuildOpsTable({profiled}, 0).rows.size(), 3u);
}

}  // namespace
}  // namespace paradnn::client
