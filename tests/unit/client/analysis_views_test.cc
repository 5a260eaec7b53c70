#include "client/analysis_views.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/support/csv_reader.h"
#include "tests/unit/client/analysis_views_test_support.h"

namespace paradnn::client {
namespace {

using ::paradnn::testing::ParseCsv;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using view_fixtures::Boxplot;
using view_fixtures::CellAt;
using view_fixtures::Heatmap;
using view_fixtures::Lines;
using view_fixtures::LineWith;
using view_fixtures::Roofline;
using view_fixtures::Scaling;
using view_fixtures::Sensitivity;
using view_fixtures::Speedup;

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
  v1::HeatmapCell cell = CellAt("32", "4");
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

TEST(AnalysisViewsTest, RooflineTableShowsRoofsThenPoints) {
  const std::string text = FormatAnalysis(Roofline(), OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("Xeon 8375C (platform 3): float32 247 GFLOP/s, bfloat16 958 GFLOP/s; "
                              "L2 (1 MiB) 347 GB/s, DRAM (256 MiB) 45.0 GB/s\n"));
  const std::string model = LineWith(text, "fc layer=4, node=1024");
  EXPECT_THAT(model, HasSubstr("12.3"));
  EXPECT_THAT(model, HasSubstr("124"));    // GFLOP/s
  EXPECT_THAT(model, HasSubstr("50.0%"));  // of the float32 roof
  EXPECT_THAT(LineWith(text, "aten::addmm"), HasSubstr("op"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("comm ceiling")));
}

// A data-parallel job on a platform with an all-reduce roof: the roof beside
// the platform's, and the ceiling its all-reduce sets in a column of its own.
TEST(AnalysisViewsTest, RooflineTableShowsCommunicationCeilings) {
  v1::AnalyzeResponse response = Roofline();
  v1::RooflineResponse* r = response.mutable_roofline();
  v1::AllreduceRoof* roof = r->mutable_roofs(0)->add_communication();
  roof->set_fitted(true);
  roof->set_backend("gloo");
  roof->set_ranks(4);
  roof->set_alpha_s(250e-6);
  roof->set_beta_bytes_per_sec(1.5e9);
  r->mutable_points(0)->set_communication_ceiling_flops_per_sec(80e9);
  const std::string text = FormatAnalysis(response, OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("; all-reduce gloo 4 ranks: 250 µs + bytes at 1.50 GB/s (bus)"));
  EXPECT_THAT(text, HasSubstr("comm ceiling GFLOP/s"));
  EXPECT_THAT(LineWith(text, "fc layer=4, node=1024"), ::testing::EndsWith("  80"));
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
