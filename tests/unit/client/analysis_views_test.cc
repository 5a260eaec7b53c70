#include "client/analysis_views.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/support/csv_reader.h"

namespace paradnn::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The lines of `text`, without the empty string after a final newline.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// The line of `text` that contains `needle` ("" when none does).
std::string LineWith(const std::string& text, const std::string& needle) {
  for (const std::string& line : Lines(text)) {
    if (line.find(needle) != std::string::npos) return line;
  }
  ADD_FAILURE() << "no line with " << needle << " in\n" << text;
  return "";
}

v1::HeatmapCell Cell(const std::string& x, const std::string& y) {
  v1::HeatmapCell cell;
  cell.set_x(x);
  cell.set_y(y);
  return cell;
}

// examples/s by layer × batch, two panels by precision; per panel the cells
// (layer 4: OK, OK), (layer 8: OK, OOM) and, in float32 only, one
// predicted-OOM, one failed and one empty cell in a third row.
v1::AnalyzeResponse Heatmap() {
  v1::AnalyzeResponse response;
  response.set_results(17);
  v1::HeatmapResponse& h = *response.mutable_heatmap();
  h.set_metric("examples_per_sec");
  h.set_unit("examples/s");
  h.set_x("batch");
  h.set_y("layer");
  h.set_panel("precision");
  for (const char* x : {"64", "512"}) h.add_x_values(x);
  for (const char* y : {"4", "8", "16"}) h.add_y_values(y);
  for (const char* precision : {"float32", "bfloat16"}) {
    v1::HeatmapPanel& panel = *h.add_panels();
    panel.set_panel_value(precision);
    v1::HeatmapCell c = Cell("64", "4");
    c.set_value(1234.5);
    c.set_ok_results(3);
    *panel.add_cells() = c;
    c = Cell("512", "4");
    c.set_value(2.5e6);
    c.set_ok_results(1);
    *panel.add_cells() = c;
    c = Cell("64", "8");
    c.set_value(0.5);
    c.set_ok_results(1);
    *panel.add_cells() = c;
    c = Cell("512", "8");
    c.set_oom_results(2);
    *panel.add_cells() = c;
    if (std::string(precision) == "float32") {
      c = Cell("64", "16");
      c.set_predicted_oom_results(1);
      *panel.add_cells() = c;
      c = Cell("512", "16");
      c.set_failed_results(1);
      *panel.add_cells() = c;
    }
  }
  return response;
}

TEST(AnalysisViewsTest, HeatmapTableHasOneGridPerPanelWithMarkedCells) {
  const std::string text = FormatAnalysis(Heatmap(), OutputFormat::kTable);
  ASSERT_EQ(text.back(), '\n');
  EXPECT_THAT(text, HasSubstr("examples_per_sec (examples/s) by layer (rows) × batch (columns), "
                              "precision=float32\n"));
  EXPECT_THAT(text, HasSubstr("by layer (rows) × batch (columns), precision=bfloat16\n"));

  const std::string float32 = text.substr(0, text.find("precision=bfloat16"));
  const std::vector<std::string> header =
      absl::StrSplit(LineWith(float32, "layer \\ batch"), ' ', absl::SkipEmpty());
  EXPECT_THAT(header, ElementsAre("layer", "\\", "batch", "64", "512"));
  EXPECT_THAT(LineWith(float32, "1.23k"), HasSubstr("2.50M"));
  const std::vector<std::string> row8 =
      absl::StrSplit(LineWith(float32, "OOM"), ' ', absl::SkipEmpty());
  EXPECT_THAT(row8, ElementsAre("8", "0.500", "OOM"));
  const std::vector<std::string> row16 =
      absl::StrSplit(LineWith(float32, "pOOM"), ' ', absl::SkipEmpty());
  EXPECT_THAT(row16, ElementsAre("16", "pOOM", "fail"));

  // The bfloat16 panel has no cells for layer 16: shown as empty.
  const std::string bfloat16 = text.substr(text.find("precision=bfloat16"));
  const std::vector<std::string> empty16 =
      absl::StrSplit(Lines(bfloat16).back(), ' ', absl::SkipEmpty());
  EXPECT_THAT(empty16, ElementsAre("16", "—", "—"));
}

TEST(AnalysisViewsTest, HeatmapTablePrintsUnitsAsPeopleReadThem) {
  v1::AnalyzeResponse response;
  v1::HeatmapResponse& h = *response.mutable_heatmap();
  h.set_metric("mfu");
  h.set_unit("fraction");  // as the coordinator sends it
  h.set_x("node");
  h.set_y("layer");
  h.add_x_values("32");
  h.add_y_values("4");
  v1::HeatmapCell cell = Cell("32", "4");
  cell.set_value(0.4213);
  *h.add_panels()->add_cells() = cell;
  std::string text = FormatAnalysis(response, OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("mfu (fraction) by layer (rows) × node (columns)\n"));
  EXPECT_THAT(text, Not(HasSubstr("panel")));
  EXPECT_THAT(text, HasSubstr("42.1%"));

  // What the CLI prints: percent everywhere, the unit named "%".
  v1::AnalyzeResponse shown = response;
  ToDisplayUnits(&shown);
  EXPECT_EQ(shown.heatmap().unit(), "%");
  EXPECT_DOUBLE_EQ(shown.heatmap().panels(0).cells(0).value(), 42.13);
  text = FormatAnalysis(shown, OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("mfu (%) by layer"));
  EXPECT_THAT(text, HasSubstr("42.1%"));
  const std::string json = FormatAnalysis(shown, OutputFormat::kJson);
  EXPECT_THAT(json, HasSubstr("\"unit\": \"%\""));
  EXPECT_THAT(json, HasSubstr("42.13"));

  h.set_metric("step_time");
  h.set_unit("s");
  h.mutable_panels(0)->mutable_cells(0)->set_value(0.0123);
  text = FormatAnalysis(response, OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("12.3 ms"));
}

using ::paradnn::testing::ParseCsv;

TEST(AnalysisViewsTest, HeatmapCsvHasOneRowPerCellAndEmptyUnsetValues) {
  const auto records = ParseCsv(FormatAnalysis(Heatmap(), OutputFormat::kCsv));
  ASSERT_EQ(records.size(), 1u + 6 + 4);
  EXPECT_THAT(records[0], ElementsAre("panel", "x", "y", "value", "ok_results", "oom_results",
                                      "predicted_oom_results", "failed_results",
                                      "predicted_results", "predicted_low", "predicted_high"));
  EXPECT_THAT(records[1],
              ElementsAre("float32", "64", "4", "1234.5", "3", "0", "0", "0", "0", "", ""));
  EXPECT_THAT(records[4], ElementsAre("float32", "512", "8", "", "0", "2", "0", "0", "0", "", ""));
  EXPECT_THAT(records[7],
              ElementsAre("bfloat16", "64", "4", "1234.5", "3", "0", "0", "0", "0", "", ""));
}

TEST(AnalysisViewsTest, HeatmapMarksCellsWithPredictionsAndGivesTheirIntervals) {
  v1::AnalyzeResponse response = Heatmap();
  v1::HeatmapCell* cell = response.mutable_heatmap()->mutable_panels(0)->mutable_cells(0);
  cell->set_predicted_results(2);
  cell->set_predicted_low(1000);
  cell->set_predicted_high(1500);
  response.set_results(20);
  response.set_predicted_results(2);
  const std::string table = FormatAnalysis(response, OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("~1.23k"));
  EXPECT_THAT(table, HasSubstr("~: the median includes predicted results (1 of"));
  const auto records = ParseCsv(FormatAnalysis(response, OutputFormat::kCsv));
  EXPECT_THAT(records[1],
              ElementsAre("float32", "64", "4", "1234.5", "3", "0", "0", "0", "2", "1000", "1500"));
}

v1::SensitivityResponse Sensitivity() {
  v1::SensitivityResponse s;
  s.set_metric("examples_per_sec");
  for (const auto& [term, weight] : std::vector<std::pair<std::string, double>>{
           {"layer", 0.2}, {"batch", 0.9}, {"node", -0.45}, {"layer×node", 0.05}}) {
    v1::SensitivityWeight& w = *s.add_weights();
    w.set_term(term);
    w.set_weight(weight);
  }
  s.set_intercept(1e-17);
  s.set_r_squared(0.98712);
  s.set_points(120);
  s.set_log2_features(true);
  s.set_log2_target(true);
  return s;
}

TEST(AnalysisViewsTest, SensitivityTableSortsByMagnitudeWithSignAndBar) {
  v1::AnalyzeResponse response;
  *response.mutable_sensitivity() = Sensitivity();
  const std::string text = FormatAnalysis(response, OutputFormat::kTable);
  const size_t batch = text.find("batch"), node = text.find("node"), layer = text.find("layer "),
               interaction = text.find("layer×node");
  ASSERT_NE(layer, std::string::npos);
  EXPECT_LT(batch, node);
  EXPECT_LT(node, layer);
  EXPECT_LT(layer, interaction);
  EXPECT_THAT(LineWith(text, "batch"), HasSubstr("+0.900  +" + std::string(20, '#')));
  EXPECT_THAT(LineWith(text, "node "), ::testing::EndsWith("-0.450  -" + std::string(10, '#')));
  EXPECT_THAT(text, HasSubstr("R² = 0.987 over 120 points\n"));
  EXPECT_THAT(text, HasSubstr("features as log2(value); target as log2(examples_per_sec)\n"));
}

TEST(AnalysisViewsTest, SensitivityCsvAddsInterceptRSquaredAndPoints) {
  v1::AnalyzeResponse response;
  *response.mutable_sensitivity() = Sensitivity();
  const auto records = ParseCsv(FormatAnalysis(response, OutputFormat::kCsv));
  ASSERT_EQ(records.size(), 1u + 4 + 3);
  EXPECT_THAT(records[0], ElementsAre("term", "weight"));
  EXPECT_THAT(records[3], ElementsAre("node", "-0.45"));
  EXPECT_THAT(records[5], ElementsAre("(intercept)", "1e-17"));
  EXPECT_THAT(records[6], ElementsAre("(r_squared)", "0.98712"));
  EXPECT_THAT(records[7], ElementsAre("(points)", "120"));
}

TEST(AnalysisViewsTest, SensitivityJsonUsesProtoFieldNames) {
  v1::AnalyzeResponse response;
  *response.mutable_sensitivity() = Sensitivity();
  response.mutable_sensitivity()->set_log2_target(false);
  response.set_results(150);
  const std::string text = FormatAnalysis(response, OutputFormat::kJson);
  ASSERT_EQ(text.back(), '\n');
  const nlohmann::json json = nlohmann::json::parse(text);
  const auto& s = json.at("sensitivity");
  EXPECT_DOUBLE_EQ(s.at("r_squared").get<double>(), 0.98712);
  EXPECT_EQ(s.at("log2_features"), true);
  EXPECT_EQ(s.at("log2_target"), false);  // a default, printed all the same
  EXPECT_EQ(s.at("weights").size(), 4u);
  EXPECT_EQ(s.at("weights")[2].at("term"), "node");
  // The proto3 JSON mapping writes 64-bit integers as strings.
  EXPECT_EQ(s.at("points"), "120");
  EXPECT_EQ(json.at("results"), "150");
}

v1::AnalyzeResponse Roofline() {
  v1::AnalyzeResponse response;
  v1::RooflineResponse& r = *response.mutable_roofline();
  v1::PlatformRoofs& roofs = *r.add_roofs();
  roofs.set_platform_id(3);
  roofs.set_device_name("Xeon 8375C");
  v1::MatmulRoofValue* c = roofs.add_compute();
  c->set_dtype("float32");
  c->set_flops_per_sec(247e9);
  c = roofs.add_compute();
  c->set_dtype("bfloat16");
  c->set_flops_per_sec(958e9);
  v1::BandwidthRoof* b = roofs.add_bandwidth();
  b->set_level("L2 (1 MiB)");
  b->set_bytes_per_sec(347e9);
  b = roofs.add_bandwidth();
  b->set_level("DRAM (256 MiB)");
  b->set_bytes_per_sec(45e9);
  v1::RooflinePoint* p = r.add_points();
  p->set_job_id(7);
  p->set_label("fc layer=4, node=1024");
  p->set_precision("float32");
  p->set_platform_id(3);
  p->set_intensity(12.345);
  p->set_flops_per_sec(123.5e9);
  p = r.add_points();
  p->set_job_id(7);
  p->set_label("aten::addmm");
  p->set_op(true);
  p->set_precision("float32");
  p->set_platform_id(3);
  p->set_intensity(50);
  p->set_flops_per_sec(200e9);
  return response;
}

TEST(AnalysisViewsTest, RooflineTableShowsRoofsThenPoints) {
  const std::string text = FormatAnalysis(Roofline(), OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("Xeon 8375C (platform 3): float32 247 GFLOP/s, bfloat16 958 GFLOP/s; "
                              "L2 (1 MiB) 347 GB/s, DRAM (256 MiB) 45.0 GB/s\n"));
  const std::string model = LineWith(text, "fc layer=4, node=1024");
  EXPECT_THAT(model, HasSubstr("12.3"));
  EXPECT_THAT(model, HasSubstr("124"));    // GFLOP/s
  EXPECT_THAT(model, HasSubstr("50.0%"));  // of the float32 roof
  EXPECT_THAT(LineWith(text, "aten::addmm"), HasSubstr("op"));
}

TEST(AnalysisViewsTest, RooflineCsvQuotesLabelsWithCommas) {
  const std::string text = FormatAnalysis(Roofline(), OutputFormat::kCsv);
  EXPECT_THAT(text, HasSubstr("\"fc layer=4, node=1024\""));
  const auto records = ParseCsv(text);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_THAT(records[0], ElementsAre("job_id", "label", "op", "precision", "platform_id",
                                      "intensity", "flops_per_sec"));
  EXPECT_THAT(records[1], ElementsAre("7", "fc layer=4, node=1024", "false", "float32", "3",
                                      "12.345", "1.235e+11"));
  EXPECT_EQ(records[2][2], "true");
}

v1::AnalyzeResponse Boxplot() {
  v1::AnalyzeResponse response;
  v1::BoxplotResponse& b = *response.mutable_boxplot();
  b.set_metric("gflops");
  b.set_unit("GFLOP/s");
  b.add_group_by("family");
  b.add_group_by("device_name");
  v1::BoxplotGroup& g = *b.add_groups();
  g.set_name("fc, Xeon");
  g.set_count(40);
  g.set_p2(1.5);
  g.set_p9(3);
  g.set_p50(12.26);
  g.set_p91(80);
  g.set_p98(150);
  g.set_mean(25.5);
  g.add_outliers(0.25);
  g.add_outliers(400);
  g.set_q1(6);
  g.set_q3(40);
  g.set_whisker_low(1);
  g.set_whisker_high(90);
  return response;
}

TEST(AnalysisViewsTest, BoxplotTableAndCsv) {
  const std::string text = FormatAnalysis(Boxplot(), OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("gflops (GFLOP/s) by family, device_name\n"));
  const std::vector<std::string> row =
      absl::StrSplit(LineWith(text, "Xeon").substr(9), ' ', absl::SkipEmpty());
  // count, whisker low, q1, median, q3, whisker high, mean, outliers, p2, p98
  EXPECT_THAT(row, ElementsAre("40", "1", "6", "12.3", "40", "90", "25.5", "2", "1.50", "150"));
  EXPECT_THAT(text, HasSubstr("within 1.5 IQR"));

  const auto records = ParseCsv(FormatAnalysis(Boxplot(), OutputFormat::kCsv));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_THAT(records[0],
              ElementsAre("name", "count", "p2", "p9", "p50", "p91", "p98", "mean", "outliers",
                          "q1", "q3", "whisker_low", "whisker_high", "predicted"));
  EXPECT_THAT(records[1], ElementsAre("fc, Xeon", "40", "1.5", "3", "12.26", "80", "150", "25.5",
                                      "0.25 400", "6", "40", "1", "90", "0"));
}

// Fractions become percent in every statistic of a box and in the values
// behind a speedup; ratios and other units stay.
TEST(AnalysisViewsTest, DisplayUnitsScaleFractionsToPercentEverywhere) {
  v1::AnalyzeResponse box = Boxplot();
  box.mutable_boxplot()->set_metric("mfu");
  box.mutable_boxplot()->set_unit("fraction");
  v1::BoxplotGroup& g = *box.mutable_boxplot()->mutable_groups(0);
  g.set_p50(0.25);
  g.set_q1(0.125);
  ToDisplayUnits(&box);
  const v1::BoxplotGroup& shown = box.boxplot().groups(0);
  EXPECT_EQ(box.boxplot().unit(), "%");
  EXPECT_DOUBLE_EQ(shown.p50(), 25);
  EXPECT_DOUBLE_EQ(shown.q1(), 12.5);
  EXPECT_DOUBLE_EQ(shown.whisker_high(), 9000);
  EXPECT_THAT(shown.outliers(), ElementsAre(25, 40000));

  v1::AnalyzeResponse gflops = Boxplot();  // GFLOP/s: untouched
  ToDisplayUnits(&gflops);
  EXPECT_EQ(gflops.boxplot().unit(), Boxplot().boxplot().unit());
  EXPECT_DOUBLE_EQ(gflops.boxplot().groups(0).p50(), 12.26);

  v1::AnalyzeResponse speedup;
  v1::SpeedupResponse& s = *speedup.mutable_speedup();
  s.set_metric("hfu");
  v1::SpeedupPoint& p = *s.add_points();
  p.set_baseline_value(0.2);
  p.set_candidate_value(0.5);
  p.set_speedup(2.5);
  ToDisplayUnits(&speedup);
  EXPECT_DOUBLE_EQ(speedup.speedup().points(0).baseline_value(), 20);
  EXPECT_DOUBLE_EQ(speedup.speedup().points(0).candidate_value(), 50);
  EXPECT_DOUBLE_EQ(speedup.speedup().points(0).speedup(), 2.5);
  EXPECT_EQ(DisplayUnitOfMetric("silicon_mfu"), "%");
  EXPECT_EQ(DisplayUnitOfMetric("step_time"), "s");
}

v1::AnalyzeResponse Speedup() {
  v1::AnalyzeResponse response;
  v1::SpeedupResponse& s = *response.mutable_speedup();
  s.set_metric("examples_per_sec");
  s.set_field("device_kind");
  s.set_baseline("cpu");
  s.set_candidate("cuda");
  s.set_color_by("batch");
  for (int i = 0; i < 3; ++i) {
    v1::SpeedupPoint& p = *s.add_points();
    p.set_config(i == 0 ? "layer=4, node=32" : "layer=8 node=64");
    p.set_params(2360000);
    p.set_baseline_value(100);
    p.set_candidate_value(100 * (i + 1));
    p.set_speedup(i + 1);
    p.set_color_value("256");
    p.set_speedup_low(i + 0.9);
    p.set_speedup_high(i + 1.1);
    p.set_p_value(i == 0 ? 0.5 : 0.001);
    p.set_q_value(i == 0 ? 0.5 : 0.0015);
    p.set_verdict(i == 0 ? "no difference detected" : "faster");
    p.set_interval_basis("paired rounds");
    p.set_baseline_runs(4);
    p.set_candidate_runs(4);
  }
  s.set_fdr(0.05);
  s.set_faster(2);
  s.set_no_difference(1);
  s.set_geomean_low(1.2);
  s.set_geomean_high(2.7);
  s.set_geomean_speedup(1.817);
  s.set_min_speedup(1);
  s.set_max_speedup(3);
  s.set_baseline_only(2);
  s.set_candidate_only(1);
  v1::SensitivityResponse& sens = *s.mutable_sensitivity();
  sens.set_metric("speedup");
  v1::SensitivityWeight& w = *sens.add_weights();
  w.set_term("batch");
  w.set_weight(-0.7);
  sens.set_r_squared(0.5);
  sens.set_points(3);
  return response;
}

TEST(AnalysisViewsTest, SpeedupTableSummarizesThenListsThenSensitivity) {
  const std::string text = FormatAnalysis(Speedup(), OutputFormat::kTable);
  EXPECT_THAT(Lines(text)[0],
              ::testing::StartsWith("speedup of cuda over cpu (device_kind, examples_per_sec): "
                                    "geomean 1.82× [1.20×, 2.70×], min 1.00×, max 3.00× over 3 "
                                    "configurations; 2 only on cpu, 1 only on cuda"));
  EXPECT_EQ(Lines(text)[1],
            "verdicts: 2 faster, 1 no difference detected (false discovery rate 5 %, "
            "Benjamini-Hochberg)");
  EXPECT_THAT(LineWith(text, "layer=4, node=32"),
              HasSubstr("1.00× [0.900×, 1.10×]   4+4  no difference detected  paired rounds"));
  EXPECT_THAT(LineWith(text, "speedup [95 %]"), HasSubstr("verdict"));
  EXPECT_THAT(LineWith(text, "config"), HasSubstr("cpu"));
  EXPECT_THAT(LineWith(text, "layer=4, node=32"), HasSubstr("2.36M"));
  EXPECT_THAT(LineWith(text, "layer=4, node=32"), HasSubstr("1.00×"));
  EXPECT_THAT(text, HasSubstr("sensitivity of speedup"));
  EXPECT_THAT(LineWith(text, "-0.700"), HasSubstr("batch"));
  EXPECT_LT(text.find("2.36M"), text.find("sensitivity of speedup"));

  // Without weights there is no sensitivity section.
  v1::AnalyzeResponse bare = Speedup();
  bare.mutable_speedup()->clear_sensitivity();
  EXPECT_THAT(FormatAnalysis(bare, OutputFormat::kTable), Not(HasSubstr("sensitivity")));
}

TEST(AnalysisViewsTest, SpeedupCsv) {
  const std::string text = FormatAnalysis(Speedup(), OutputFormat::kCsv);
  EXPECT_EQ(Lines(text).size(), 4u);
  const auto records = ParseCsv(text);
  EXPECT_THAT(
      records[0],
      ElementsAre("config", "params", "color_value", "baseline_value", "candidate_value", "speedup",
                  "speedup_low", "speedup_high", "p_value", "q_value", "verdict", "interval_basis",
                  "baseline_runs", "candidate_runs", "baseline_predicted", "candidate_predicted"));
  EXPECT_THAT(records[1], ElementsAre("layer=4, node=32", "2360000", "256", "100", "100", "1",
                                      "0.9", "1.1", "0.5", "0.5", "no difference detected",
                                      "paired rounds", "4", "4", "false", "false"));
  EXPECT_THAT(records[3], ElementsAre("layer=8 node=64", "2360000", "256", "100", "300", "3", "2.9",
                                      "3.1", "0.001", "0.0015", "faster", "paired rounds", "4", "4",
                                      "false", "false"));
}

TEST(AnalysisViewsTest, HistoryTableSaysByHowMuchBetweenWhichStacks) {
  v1::AnalyzeResponse response;
  v1::HistoryResponse& h = *response.mutable_history();
  h.set_metric("step_time");
  h.set_min_points_each_side(5);
  h.set_significance(0.01);
  v1::HistorySeries& changed = *h.add_series();
  changed.set_config("fc layer=4");
  changed.set_hardware("cpu AMD EPYC");
  changed.set_fingerprints(2);
  changed.set_searched(true);
  for (int i = 0; i < 12; ++i) {
    v1::HistoryPoint& p = *changed.add_points();
    p.set_value(i < 6 ? 0.010 : 0.0112);
    p.set_fingerprint(i < 6 ? "aaaaaaaaaaaaaaaa" : "bbbbbbbbbbbbbbbb");
    p.set_job_id(i);
  }
  v1::HistoryChange& c = *changed.add_changes();
  c.set_index(6);
  c.set_ratio(1.12);
  c.set_low(1.08);
  c.set_high(1.15);
  c.set_p_value(0.002);
  c.set_fingerprint_before("aaaaaaaaaaaaaaaa");
  c.set_fingerprint_after("bbbbbbbbbbbbbbbb");
  c.set_at_fingerprint_change(true);
  c.set_stack_change("libtorch_version 1.13.1 -> 2.1.0");
  v1::HistorySeries& flat = *h.add_series();
  flat.set_config("fc layer=8");
  flat.set_hardware("cpu AMD EPYC");
  flat.set_fingerprints(1);
  flat.add_points()->set_value(0.02);
  const std::string text = FormatAnalysis(response, OutputFormat::kTable);
  EXPECT_THAT(Lines(text)[0], ::testing::StartsWith("history of step_time: 2 series"));
  EXPECT_THAT(LineWith(text, "layer=4"),
              HasSubstr("step_time +12.0 % [+8.0 %, +15.0 %] at run 7 (p 0.002) between "
                        "fingerprint aaaaaaaaaaaa and bbbbbbbbbbbb: libtorch_version 1.13.1 -> "
                        "2.1.0"));
  EXPECT_THAT(LineWith(text, "layer=8"), HasSubstr("too few runs to search"));
  const auto records = ParseCsv(FormatAnalysis(response, OutputFormat::kCsv));
  ASSERT_EQ(records.size(), 1u + 12 + 1);
  EXPECT_EQ(records[7][2], "6");
  EXPECT_EQ(records[7][9], "1.12");
  EXPECT_EQ(records[7][13], "libtorch_version 1.13.1 -> 2.1.0");
  EXPECT_EQ(records[6][9], "");
}

v1::AnalyzeResponse Scaling() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  v1::AnalyzeResponse response;
  v1::ScalingResponse& s = *response.mutable_scaling();
  s.set_metric("examples_per_sec");
  s.set_field("intra_op_threads");
  for (const char* level : {"1", "2", "4"}) s.add_levels(level);
  for (const auto& [value, median] :
       std::vector<std::pair<std::string, double>>{{"1", 1}, {"2", 1.9}, {"4", 3.2}}) {
    v1::ScalingLevel& l = *s.add_summary();
    l.set_value(value);
    l.set_configs(2);
    l.set_median_speedup(median);
    l.set_min_speedup(median * 0.9);
    l.set_max_speedup(median * 1.1);
    l.set_median_efficiency(median / std::stod(value));
  }
  v1::ScalingConfig* c = s.add_configs();
  c->set_config("layer=4, node=32");
  for (double v : {100.0, 190.0, 320.0}) c->add_values(v);
  c = s.add_configs();
  c->set_config("layer=8 node=32");
  for (double v : {50.0, nan, 150.0}) c->add_values(v);
  return response;
}

TEST(AnalysisViewsTest, ScalingTableHasSummaryThenConfigurations) {
  const std::string text = FormatAnalysis(Scaling(), OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("examples_per_sec scaling over intra_op_threads"));
  const std::vector<std::string> four =
      absl::StrSplit(LineWith(text, "3.20×"), ' ', absl::SkipEmpty());
  EXPECT_THAT(four, ElementsAre("4", "2", "3.20×", "2.88×", "3.52×", "80.0%"));
  EXPECT_THAT(LineWith(text, "intra_op_threads=4"), ::testing::StartsWith("config  "));
  const std::vector<std::string> missing =
      absl::StrSplit(LineWith(text, "layer=8 node=32").substr(16), ' ', absl::SkipEmpty());
  EXPECT_THAT(missing, ElementsAre("50", "-", "150"));
}

TEST(AnalysisViewsTest, ScalingCsvLeavesUnmeasuredLevelsEmpty) {
  const auto records = ParseCsv(FormatAnalysis(Scaling(), OutputFormat::kCsv));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_THAT(records[0], ElementsAre("config", "intra_op_threads=1", "intra_op_threads=2",
                                      "intra_op_threads=4", "predicted_levels"));
  EXPECT_THAT(records[1], ElementsAre("layer=4, node=32", "100", "190", "320", ""));
  EXPECT_THAT(records[2], ElementsAre("layer=8 node=32", "50", "", "150", ""));
}

TEST(AnalysisViewsTest, JsonOfEveryKindParsesBack) {
  for (const v1::AnalyzeResponse& response :
       {Heatmap(), Roofline(), Boxplot(), Speedup(), Scaling()}) {
    const std::string text = FormatAnalysis(response, OutputFormat::kJson);
    ASSERT_EQ(text.back(), '\n');
    const nlohmann::json json = nlohmann::json::parse(text);
    EXPECT_TRUE(json.contains("results"));
    EXPECT_EQ(json.size(), 3u) << "the analysis, results and predicted_results";
    v1::AnalyzeResponse back;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &back).ok());
    // NaN != NaN, so compare the serialized forms.
    EXPECT_EQ(back.SerializeAsString(), response.SerializeAsString());
  }
  const nlohmann::json heatmap =
      nlohmann::json::parse(FormatAnalysis(Heatmap(), OutputFormat::kJson));
  const auto& cells = heatmap.at("heatmap").at("panels")[0].at("cells");
  EXPECT_DOUBLE_EQ(cells[0].at("value").get<double>(), 1234.5);
  EXPECT_FALSE(cells[3].contains("value")) << "an unset optional value stays absent";
  EXPECT_EQ(cells[3].at("oom_results"), "2");
  EXPECT_EQ(heatmap.at("heatmap").at("x_values")[1], "512");
  EXPECT_EQ(heatmap.at("heatmap").at("panels")[1].at("panel_value"), "bfloat16");

  const nlohmann::json roofline =
      nlohmann::json::parse(FormatAnalysis(Roofline(), OutputFormat::kJson));
  EXPECT_EQ(roofline.at("roofline").at("points")[1].at("op"), true);
  EXPECT_EQ(roofline.at("roofline").at("roofs")[0].at("compute")[1].at("dtype"), "bfloat16");
  EXPECT_EQ(roofline.at("roofline").at("roofs")[0].at("compute")[0].at("datasheet_flops_per_sec"),
            0);

  const nlohmann::json scaling =
      nlohmann::json::parse(FormatAnalysis(Scaling(), OutputFormat::kJson));
  EXPECT_EQ(scaling.at("scaling").at("configs")[1].at("values")[1], "NaN");
}

TEST(AnalysisViewsTest, EmptyResponse) {
  const v1::AnalyzeResponse empty;
  EXPECT_EQ(FormatAnalysis(empty, OutputFormat::kCsv), "");
  EXPECT_THAT(FormatAnalysis(empty, OutputFormat::kTable), HasSubstr("no analysis"));
  EXPECT_EQ(nlohmann::json::parse(FormatAnalysis(empty, OutputFormat::kJson)).at("results"), "0");
}

}  // namespace
}  // namespace paradnn::client
