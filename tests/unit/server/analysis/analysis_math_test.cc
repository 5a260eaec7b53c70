#include "server/analysis/analysis_math.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "server/analysis/sensitivity_fit.h"
#include "tests/unit/server/analysis/analysis_math_test_support.h"

namespace paradnn::server::analysis {
namespace {

using ::testing::ElementsAre;
using testing_support::ExpectInvalid;

// ---- Ordering -------------------------------------------------------------

TEST(OrderingTest, AllNumericAcceptsIntegersAndDecimalsOnly) {
  EXPECT_TRUE(AllNumeric({"1", "2.5", "-3", "1e3"}));
  EXPECT_FALSE(AllNumeric({"1", "relu"}));
  EXPECT_FALSE(AllNumeric({"1", ""}));
  EXPECT_FALSE(AllNumeric({"nan"}));
  EXPECT_FALSE(AllNumeric({"inf"}));
}

TEST(OrderingTest, SortedDistinctSortsNumbersByValue) {
  EXPECT_THAT(SortedDistinct({"128", "64", "1024", "64", "8"}),
              ElementsAre("8", "64", "128", "1024"));
  EXPECT_THAT(SortedDistinct({"0.5", "2", "1.0", "1"}), ElementsAre("0.5", "1", "1.0", "2"));
}

// Over two families a field one of them lacks has the empty value for the
// other's rows: the numbers still sort by value (not "128 256 512 64"), the
// empty value last.
TEST(OrderingTest, SortedDistinctKeepsNumbersNumericBesideTheEmptyValue) {
  EXPECT_THAT(SortedDistinct({"512", "", "64", "128", "256", ""}),
              ElementsAre("64", "128", "256", "512", ""));
  EXPECT_THAT(SortedDistinct({""}), ElementsAre(""));
}

TEST(OrderingTest, SortedDistinctSortsTextLexicographically) {
  EXPECT_THAT(SortedDistinct({"relu", "64", "gelu", "relu"}), ElementsAre("64", "gelu", "relu"));
  EXPECT_TRUE(SortedDistinct({}).empty());
}

// ---- Percentiles ----------------------------------------------------------

TEST(PercentileTest, MatchesNumpyLinearOnOneToHundred) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  // rank = p/100 × 99; e.g. p2: rank 1.98 → 2 + 0.98 × (3 - 2).
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 2), 2.98);
  EXPECT_DOUBLE_EQ(Percentile(v, 9), 9.91);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 50.5);
  EXPECT_DOUBLE_EQ(Percentile(v, 91), 91.09);
  EXPECT_DOUBLE_EQ(Percentile(v, 98), 98.02);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 100);
}

TEST(PercentileTest, SmallSets) {
  // numpy.percentile([1, 2, 10, 20], [25, 75]) = [1.75, 12.5]
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 10, 20}, 25), 1.75);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 10, 20}, 75), 12.5);
  EXPECT_DOUBLE_EQ(Percentile({7}, 37), 7);
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
}

// ---- Box plots ------------------------------------------------------------

TEST(BoxTest, SummarizesOneToHundred) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const v1::BoxplotGroup box = SummarizeBox("fc", v);
  EXPECT_EQ(box.name(), "fc");
  EXPECT_EQ(box.count(), 100);
  EXPECT_DOUBLE_EQ(box.p2(), 2.98);
  EXPECT_DOUBLE_EQ(box.p9(), 9.91);
  EXPECT_DOUBLE_EQ(box.p50(), 50.5);
  EXPECT_DOUBLE_EQ(box.p91(), 91.09);
  EXPECT_DOUBLE_EQ(box.p98(), 98.02);
  EXPECT_DOUBLE_EQ(box.mean(), 50.5);
  // Tukey: q1 25.75, q3 75.25, fences -48.5 and 149.5: no outliers, the
  // whiskers at the extremes.
  EXPECT_DOUBLE_EQ(box.q1(), 25.75);
  EXPECT_DOUBLE_EQ(box.q3(), 75.25);
  EXPECT_DOUBLE_EQ(box.whisker_low(), 1);
  EXPECT_DOUBLE_EQ(box.whisker_high(), 100);
  EXPECT_THAT(box.outliers(), ElementsAre());
}

TEST(BoxTest, OutliersBeyondOneAndAHalfIqr) {
  // 1..50 and 1000: q1 13.5, q3 38.5, IQR 25, fences -24 and 76: only 1000
  // is an outlier; the whiskers end at the data inside the fences.
  std::vector<double> v = {1000};
  for (int i = 1; i <= 50; ++i) v.push_back(i);
  const v1::BoxplotGroup box = SummarizeBox("cnn", v);
  EXPECT_DOUBLE_EQ(box.q1(), 13.5);
  EXPECT_DOUBLE_EQ(box.q3(), 38.5);
  EXPECT_DOUBLE_EQ(box.whisker_low(), 1);
  EXPECT_DOUBLE_EQ(box.whisker_high(), 50);
  EXPECT_THAT(box.outliers(), ElementsAre(1000));
  // The paper's percentiles are kept: p2 at rank 1 (= 2), p98 at rank 49 (= 50).
  EXPECT_DOUBLE_EQ(box.p2(), 2);
  EXPECT_DOUBLE_EQ(box.p98(), 50);
}

// The old p2/p98 rule made every group's minimum and maximum outliers; a
// group without far values has none.
TEST(BoxTest, TightGroupsHaveNoOutliers) {
  const v1::BoxplotGroup box = SummarizeBox("rnn", {10, 11, 12, 13, 14, 15, 16});
  EXPECT_THAT(box.outliers(), ElementsAre());
  EXPECT_DOUBLE_EQ(box.whisker_low(), 10);
  EXPECT_DOUBLE_EQ(box.whisker_high(), 16);
  const v1::BoxplotGroup one = SummarizeBox("one", {7});
  EXPECT_DOUBLE_EQ(one.q1(), 7);
  EXPECT_DOUBLE_EQ(one.whisker_low(), 7);
  EXPECT_DOUBLE_EQ(one.whisker_high(), 7);
  EXPECT_THAT(one.outliers(), ElementsAre());
}

// ---- Heat map -------------------------------------------------------------

const v1::HeatmapCell& CellAt(const v1::HeatmapPanel& panel, const v1::HeatmapResponse& r,
                              const std::string& y, const std::string& x) {
  for (const v1::HeatmapCell& cell : panel.cells()) {
    if (cell.x() == x && cell.y() == y) return cell;
  }
  ADD_FAILURE() << "no cell " << y << "/" << x << " among " << r.DebugString();
  return v1::HeatmapCell::default_instance();
}

TEST(HeatmapTest, PivotsMediansAndCountsOutcomes) {
  const std::vector<HeatmapRow> rows = {
      {"64", "relu", "", v1::OK, 10},    {"64", "relu", "", v1::OK, 30},
      {"64", "relu", "", v1::OK, 20},    {"128", "relu", "", v1::OK, 5},
      {"128", "relu", "", v1::OOM, 0},   {"1024", "relu", "", v1::PREDICTED_OOM, 0},
      {"64", "gelu", "", v1::OK, 1},     {"64", "gelu", "", v1::OK, 2},
      {"128", "gelu", "", v1::ERROR, 0}, {"128", "gelu", "", v1::TIMEOUT, 0},
      {"128", "gelu", "", v1::OOM, 0},
      // (gelu, 1024) never measured.
  };
  absl::StatusOr<v1::HeatmapResponse> r = PivotHeatmap(rows, "node", "activation");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->x_values(), ElementsAre("64", "128", "1024"));
  EXPECT_THAT(r->y_values(), ElementsAre("gelu", "relu"));
  EXPECT_TRUE(r->x_numeric());
  EXPECT_FALSE(r->y_numeric());
  ASSERT_EQ(r->panels_size(), 1);
  const v1::HeatmapPanel& panel = r->panels(0);
  EXPECT_EQ(panel.panel_value(), "");
  ASSERT_EQ(panel.cells_size(), 6);
  // y outer, x inner.
  EXPECT_EQ(panel.cells(0).y(), "gelu");
  EXPECT_EQ(panel.cells(0).x(), "64");
  EXPECT_EQ(panel.cells(2).x(), "1024");
  EXPECT_EQ(panel.cells(3).y(), "relu");
  EXPECT_EQ(panel.cells(3).x(), "64");

  const v1::HeatmapCell& relu64 = CellAt(panel, *r, "relu", "64");
  ASSERT_TRUE(relu64.has_value());
  EXPECT_DOUBLE_EQ(relu64.value(), 20);
  EXPECT_EQ(relu64.ok_results(), 3);

  const v1::HeatmapCell& relu128 = CellAt(panel, *r, "relu", "128");
  EXPECT_DOUBLE_EQ(relu128.value(), 5);
  EXPECT_EQ(relu128.ok_results(), 1);
  EXPECT_EQ(relu128.oom_results(), 1);

  const v1::HeatmapCell& relu1024 = CellAt(panel, *r, "relu", "1024");
  EXPECT_FALSE(relu1024.has_value());
  EXPECT_EQ(relu1024.predicted_oom_results(), 1);
  EXPECT_EQ(relu1024.oom_results(), 0);

  EXPECT_DOUBLE_EQ(CellAt(panel, *r, "gelu", "64").value(), 1.5);

  const v1::HeatmapCell& gelu128 = CellAt(panel, *r, "gelu", "128");
  EXPECT_FALSE(gelu128.has_value());
  EXPECT_EQ(gelu128.failed_results(), 2);
  EXPECT_EQ(gelu128.oom_results(), 1);

  const v1::HeatmapCell& missing = CellAt(panel, *r, "gelu", "1024");
  EXPECT_FALSE(missing.has_value());
  EXPECT_EQ(missing.ok_results() + missing.oom_results() + missing.predicted_oom_results() +
                missing.failed_results(),
            0);
}

TEST(HeatmapTest, OnePanelPerValueWithTheFullGrid) {
  const std::vector<HeatmapRow> rows = {
      {"1", "8", "float32", v1::OK, 4},
      {"2", "8", "float32", v1::OK, 6},
      {"1", "16", "float32", v1::OK, 8},
      {"1", "8", "bfloat16", v1::OK, 9},
  };
  absl::StatusOr<v1::HeatmapResponse> r = PivotHeatmap(rows, "layer", "batch");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->y_values(), ElementsAre("8", "16"));
  EXPECT_TRUE(r->y_numeric());
  ASSERT_EQ(r->panels_size(), 2);
  EXPECT_EQ(r->panels(0).panel_value(), "bfloat16");
  EXPECT_EQ(r->panels(1).panel_value(), "float32");
  for (const v1::HeatmapPanel& panel : r->panels()) EXPECT_EQ(panel.cells_size(), 4);
  EXPECT_DOUBLE_EQ(CellAt(r->panels(0), *r, "8", "1").value(), 9);
  EXPECT_FALSE(CellAt(r->panels(0), *r, "8", "2").has_value());
  EXPECT_DOUBLE_EQ(CellAt(r->panels(1), *r, "8", "2").value(), 6);
  EXPECT_DOUBLE_EQ(CellAt(r->panels(1), *r, "16", "1").value(), 8);
}

TEST(HeatmapTest, OwnAxesGiveEachPanelOnlyTheValuesItHas) {
  // Two families sharing the batch axis at different values: each panel
  // has its own columns, none blank for the other's values.
  const std::vector<HeatmapRow> rows = {
      {"4", "float32", "cnn", v1::OK, 70},   {"16", "float32", "cnn", v1::OK, 80},
      {"4", "bfloat16", "cnn", v1::OK, 5},   {"64", "float32", "fc", v1::OK, 120},
      {"512", "float32", "fc", v1::OK, 190}, {"512", "bfloat16", "fc", v1::OK, 3},
  };
  absl::StatusOr<v1::HeatmapResponse> r = PivotHeatmap(rows, "batch", "precision", true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->x_values(), ElementsAre("4", "16", "64", "512"));  // numeric order
  ASSERT_EQ(r->panels_size(), 2);
  const v1::HeatmapPanel& cnn = r->panels(0);
  const v1::HeatmapPanel& fc = r->panels(1);
  EXPECT_THAT(cnn.x_values(), ElementsAre("4", "16"));
  EXPECT_THAT(fc.x_values(), ElementsAre("64", "512"));
  EXPECT_THAT(fc.y_values(), ElementsAre("bfloat16", "float32"));
  EXPECT_EQ(cnn.cells_size(), 4);
  EXPECT_EQ(fc.cells_size(), 4);
  for (const v1::HeatmapCell& cell : fc.cells()) EXPECT_NE(cell.x(), "4");
  // A pair of the panel's own values without results is still a cell.
  int unmeasured = 0;
  for (const v1::HeatmapCell& cell : cnn.cells()) unmeasured += cell.has_value() ? 0 : 1;
  EXPECT_EQ(unmeasured, 1);  // bfloat16 at batch 16

  // Without own axes every panel spans every value.
  absl::StatusOr<v1::HeatmapResponse> shared = PivotHeatmap(rows, "batch", "precision");
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_THAT(shared->panels(1).x_values(), ElementsAre("4", "16", "64", "512"));
  EXPECT_EQ(shared->panels(1).cells_size(), 8);
}

TEST(HeatmapTest, RejectsEmptySelectionAndConstantAxes) {
  ExpectInvalid(PivotHeatmap({}, "layer", "node").status(), "no results match the selection");
  const std::vector<HeatmapRow> constant_x = {{"4", "64", "", v1::OK, 1},
                                              {"4", "128", "", v1::OK, 2}};
  ExpectInvalid(PivotHeatmap(constant_x, "layer", "node").status(),
                "heat map axis 'x' (layer) is constant (4) over the selected results");
  const std::vector<HeatmapRow> constant_y = {{"4", "64", "", v1::OK, 1},
                                              {"8", "64", "", v1::OK, 2}};
  ExpectInvalid(PivotHeatmap(constant_y, "layer", "node").status(),
                "heat map axis 'y' (node) is constant (64) over the selected results");
}

// ---- Bounds ---------------------------------------------------------------

TEST(BoundsTest, OversizedAnalysesAreRefusedNamingTheLimit) {
  // 1,001 x 1,000 = 1,001,000 cells: past kMaxHeatmapCells.
  std::vector<HeatmapTally> tallies;
  for (int i = 0; i < 1001; ++i) {
    HeatmapTally t;
    t.x = std::to_string(i);
    t.y = std::to_string(i % 1000);
    tallies.push_back(t);
  }
  absl::StatusOr<v1::HeatmapResponse> map = PivotHeatmapTallies(tallies, "node", "batch");
  EXPECT_EQ(map.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(map.status().message().find("1 panel(s) x 1000 batch values x 1001 node values"),
            absl::string_view::npos)
      << map.status();
  EXPECT_NE(map.status().message().find("at most 1000000"), absl::string_view::npos);
  // 23 features and their 253 interactions: 276 terms, past 256.
  SensitivityInput in;
  for (int f = 0; f < 23; ++f) in.feature_names.push_back("f" + std::to_string(f));
  in.features.assign(10, std::vector<double>(23, 1.0));
  in.target.assign(10, 1.0);
  in.interactions = true;
  absl::StatusOr<v1::SensitivityResponse> fit = FitSensitivity(in);
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(fit.status().message().find("23 features and 253 interactions = 276 terms; at most "
                                        "256"),
            absl::string_view::npos)
      << fit.status();
}

// ---- Speedup --------------------------------------------------------------

std::vector<SpeedupRow> SpeedupRows() {
  return {
      {"float32", "A", 100, "4", 10},   {"float32", "A", 100, "8", 14},
      {"float32", "A", 100, "4", 12},   {"bfloat16", "A", 100, "4", 24},
      {"float16", "A", 100, "4", 9999},  // neither side: ignored
      {"float32", "B", 50, "2", 5},     {"bfloat16", "B", 50, "2", 20},
      {"bfloat16", "B", 50, "2", 30},   {"float32", "C", 100, "1", 8},
      {"bfloat16", "C", 100, "1", 4},   {"float32", "D", 10, "1", 3},
      {"bfloat16", "E", 10, "1", 3},    {"bfloat16", "F", 10, "1", 3},
  };
}

TEST(SpeedupTest, JoinsMediansSortedByParamsThenConfig) {
  absl::StatusOr<v1::SpeedupResponse> r =
      JoinSpeedup(SpeedupRows(), "precision", "float32", "bfloat16", false);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->points_size(), 3);
  EXPECT_EQ(r->points(0).config(), "B");
  EXPECT_EQ(r->points(0).params(), 50);
  EXPECT_DOUBLE_EQ(r->points(0).baseline_value(), 5);
  EXPECT_DOUBLE_EQ(r->points(0).candidate_value(), 25);
  EXPECT_DOUBLE_EQ(r->points(0).speedup(), 5);
  EXPECT_EQ(r->points(1).config(), "A");
  EXPECT_DOUBLE_EQ(r->points(1).baseline_value(), 12);
  EXPECT_DOUBLE_EQ(r->points(1).speedup(), 2);
  EXPECT_EQ(r->points(1).color_value(), "4");
  EXPECT_EQ(r->points(2).config(), "C");
  EXPECT_DOUBLE_EQ(r->points(2).speedup(), 0.5);
  EXPECT_NEAR(r->geomean_speedup(), std::cbrt(5.0), 1e-12);
  EXPECT_DOUBLE_EQ(r->min_speedup(), 0.5);
  EXPECT_DOUBLE_EQ(r->max_speedup(), 5);
  EXPECT_EQ(r->baseline_only(), 1);
  EXPECT_EQ(r->candidate_only(), 2);
  EXPECT_EQ(r->field(), "precision");
}

TEST(SpeedupTest, LowerIsBetterInvertsTheRatio) {
  absl::StatusOr<v1::SpeedupResponse> r =
      JoinSpeedup(SpeedupRows(), "precision", "float32", "bfloat16", true);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->points_size(), 3);
  EXPECT_DOUBLE_EQ(r->points(0).speedup(), 0.2);
  EXPECT_DOUBLE_EQ(r->points(1).speedup(), 0.5);
  EXPECT_DOUBLE_EQ(r->points(2).speedup(), 2);
  EXPECT_DOUBLE_EQ(r->min_speedup(), 0.2);
  EXPECT_DOUBLE_EQ(r->max_speedup(), 2);
}

TEST(SpeedupTest, RejectsNoCommonConfigurationAndEqualSides) {
  const std::vector<SpeedupRow> rows = {
      {"float32", "A", 1, "", 1}, {"float32", "B", 1, "", 1}, {"float16", "A", 1, "", 1}};
  ExpectInvalid(JoinSpeedup(rows, "precision", "float32", "bfloat16", false).status(),
                "no configuration was measured with both precision=float32 (2 configurations) "
                "and precision=bfloat16 (0); precision has the values float16, float32 in "
                "these results");
  ExpectInvalid(JoinSpeedup(rows, "precision", "float32", "float32", false).status(),
                "baseline and candidate are both 'float32'");
}

// ---- Scaling --------------------------------------------------------------

TEST(ScalingTest, SpeedupAndEfficiencyOverTheSmallestLevel) {
  const std::vector<ScalingRow> rows = {
      {"1", "X", 10},  {"2", "X", 18}, {"4", "X", 30}, {"4", "X", 34},
      {"4", "X", 32},  {"1", "Y", 20}, {"2", "Y", 40}, {"4", "Y", 60},
      {"8", "Y", 100}, {"2", "Z", 1},  {"16", "Z", 3},  // Z has no base measurement
  };
  absl::StatusOr<v1::ScalingResponse> r = SummarizeScaling(rows, "intra_op_threads", false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->field(), "intra_op_threads");
  EXPECT_THAT(r->levels(), ElementsAre("1", "2", "4", "8", "16"));

  ASSERT_EQ(r->configs_size(), 3);
  EXPECT_EQ(r->configs(0).config(), "X");
  ASSERT_EQ(r->configs(0).values_size(), 5);
  EXPECT_DOUBLE_EQ(r->configs(0).values(2), 32);
  EXPECT_TRUE(std::isnan(r->configs(0).values(3)));
  EXPECT_TRUE(std::isnan(r->configs(2).values(0)));

  ASSERT_EQ(r->summary_size(), 5);
  const v1::ScalingLevel& base = r->summary(0);
  EXPECT_EQ(base.value(), "1");
  EXPECT_EQ(base.configs(), 2);
  EXPECT_DOUBLE_EQ(base.median_speedup(), 1);
  EXPECT_DOUBLE_EQ(base.median_efficiency(), 1);

  const v1::ScalingLevel& two = r->summary(1);  // X 1.8, Y 2.0
  EXPECT_EQ(two.configs(), 2);
  EXPECT_DOUBLE_EQ(two.median_speedup(), 1.9);
  EXPECT_DOUBLE_EQ(two.min_speedup(), 1.8);
  EXPECT_DOUBLE_EQ(two.max_speedup(), 2.0);
  EXPECT_DOUBLE_EQ(two.median_efficiency(), 0.95);

  const v1::ScalingLevel& four = r->summary(2);  // X 3.2, Y 3.0
  EXPECT_DOUBLE_EQ(four.median_speedup(), 3.1);
  EXPECT_DOUBLE_EQ(four.median_efficiency(), 3.1 / 4);

  const v1::ScalingLevel& eight = r->summary(3);  // Y only: 5
  EXPECT_EQ(eight.configs(), 1);
  EXPECT_DOUBLE_EQ(eight.median_speedup(), 5);
  EXPECT_DOUBLE_EQ(eight.median_efficiency(), 0.625);

  const v1::ScalingLevel& sixteen = r->summary(4);  // only Z, never at the base
  EXPECT_EQ(sixteen.value(), "16");
  EXPECT_EQ(sixteen.configs(), 0);
  EXPECT_EQ(sixteen.median_speedup(), 0);
  EXPECT_EQ(sixteen.median_efficiency(), 0);
}

TEST(ScalingTest, LowerIsBetterUsesTimeRatios) {
  const std::vector<ScalingRow> rows = {{"1", "X", 8}, {"4", "X", 4}};
  absl::StatusOr<v1::ScalingResponse> r = SummarizeScaling(rows, "intra_op_threads", true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->summary(1).median_speedup(), 2);
  EXPECT_DOUBLE_EQ(r->summary(1).median_efficiency(), 0.5);
}

TEST(ScalingTest, RejectsFewLevelsAndNonNumericOrNonPositiveLevels) {
  ExpectInvalid(
      SummarizeScaling({{"4", "X", 1}, {"4", "Y", 2}}, "intra_op_threads", false).status(),
      "scaling needs at least two values of 'intra_op_threads' over the selected "
      "results, got 1 (4)");
  ExpectInvalid(SummarizeScaling({}, "intra_op_threads", false).status(), "got 0");
  ExpectInvalid(
      SummarizeScaling({{"4", "X", 1}, {"auto", "X", 2}}, "intra_op_threads", false).status(),
      "scaling field 'intra_op_threads' needs numeric values > 0, got 'auto'");
  ExpectInvalid(
      SummarizeScaling({{"0", "X", 1}, {"2", "X", 2}}, "intra_op_threads", false).status(),
      "got '0'");
}

// ---- Roofline -------------------------------------------------------------

constexpr int64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

void AddPoint(v1::Platform& platform, const std::string& kernel, int64_t bytes, double bw) {
  v1::BandwidthPoint* p = platform.add_bandwidth();
  p->set_kernel(kernel);
  p->set_bytes(bytes);
  p->set_bytes_per_sec(bw);
}

std::vector<std::pair<std::string, double>> Roofs(const v1::Platform& platform) {
  std::vector<std::pair<std::string, double>> out;
  for (const v1::BandwidthRoof& roof : BandwidthRoofs(platform)) {
    out.emplace_back(roof.level(), roof.bytes_per_sec());
  }
  return out;
}

using Roof = std::pair<std::string, double>;

TEST(RooflineTest, BestCopyBandwidthPerCacheLevelAndDram) {
  v1::Platform platform;
  platform.set_cache_sizes("L1d 48 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB");
  AddPoint(platform, "copy", 16 * kKiB, 300e9);
  AddPoint(platform, "copy", 48 * kKiB, 320e9);  // fits L1d exactly
  AddPoint(platform, "copy", 256 * kKiB, 200e9);
  AddPoint(platform, "copy", 1 * kMiB, 210e9);
  AddPoint(platform, "copy", 8 * kMiB, 100e9);
  AddPoint(platform, "copy", 64 * kMiB, 400e9);  // past L3, short of 4× L3: no roof
  AddPoint(platform, "copy", 256 * kMiB, 20e9);
  AddPoint(platform, "copy", 1 * kGiB, 22e9);
  AddPoint(platform, "triad", 16 * kKiB, 900e9);  // copy points exist: triad unused
  EXPECT_THAT(Roofs(platform),
              ElementsAre(Roof("L1d (48 KiB)", 320e9), Roof("L2 (1 MiB)", 210e9),
                          Roof("L3 (32 MiB)", 100e9), Roof("DRAM (≥ 256 MiB)", 22e9)));
}

TEST(RooflineTest, SkipsLevelsWithoutPointsAndFallsBackToTriad) {
  v1::Platform platform;
  platform.set_cache_sizes("L1d 32 KiB, L2 1 MiB, L3 16 MiB");
  AddPoint(platform, "triad", 16 * kKiB, 300e9);
  AddPoint(platform, "triad", 4 * kMiB, 100e9);  // no point in (32 KiB, 1 MiB]: no L2
  AddPoint(platform, "triad", 64 * kMiB, 30e9);
  EXPECT_THAT(Roofs(platform), ElementsAre(Roof("L1d (32 KiB)", 300e9), Roof("L3 (16 MiB)", 100e9),
                                           Roof("DRAM (≥ 64 MiB)", 30e9)));
}

TEST(RooflineTest, PartialOrMissingCacheSizes) {
  v1::Platform platform;
  platform.set_cache_sizes("L2 1536 KiB");
  AddPoint(platform, "copy", 16 * kKiB, 300e9);
  AddPoint(platform, "copy", 64 * kMiB, 25e9);
  EXPECT_THAT(Roofs(platform),
              ElementsAre(Roof("L2 (1536 KiB)", 300e9), Roof("DRAM (≥ 64 MiB)", 25e9)));

  // Without sizes only DRAM, from the largest working set.
  platform.set_cache_sizes("");
  AddPoint(platform, "copy", 64 * kMiB, 28e9);
  EXPECT_THAT(Roofs(platform), ElementsAre(Roof("DRAM (≥ 64 MiB)", 28e9)));

  EXPECT_TRUE(BandwidthRoofs(v1::Platform()).empty());
}

TEST(RooflineTest, InputBytesFromShapes) {
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[64, 1024], [1024], []]", 4), (64 * 1024 + 1024) * 4);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[2, 3]]", 2), 12);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[], []]", 4), 0);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[]", 4), 0);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[2, 3], [[4], [5]]]", 1), 15);  // a tensor list
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("", 4), 0);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[64, 1024]", 4), 0);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[64, x]]", 4), 0);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[64], 3]", 4), 0);
  EXPECT_DOUBLE_EQ(InputBytesFromShapes("[[64]] trailing", 4), 0);
}

TEST(RooflineTest, AttainableIsTheLowerRoof) {
  EXPECT_DOUBLE_EQ(Attainable(2, 1e12, 100e9), 200e9);  // memory bound
  EXPECT_DOUBLE_EQ(Attainable(50, 1e12, 100e9), 1e12);  // compute bound
}

}  // namespace
}  // namespace paradnn::server::analysis
