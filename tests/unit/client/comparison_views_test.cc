// The text `paradnn analyze` prints for the comparisons: speedup, history
// and scaling (client/comparison_views.cc, through FormatAnalysis).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/analysis_views.h"
#include "tests/support/csv_reader.h"
#include "tests/unit/client/analysis_views_test_support.h"

namespace paradnn::client {
namespace {

using ::paradnn::testing::ParseCsv;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using view_fixtures::Lines;
using view_fixtures::LineWith;
using view_fixtures::Scaling;
using view_fixtures::Speedup;

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

}  // namespace
}  // namespace paradnn::client
