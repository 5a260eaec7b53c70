// Change points in a step-time series (server/analysis/change_points.h)
// against known values and by simulation: no alarms on a host drifting
// 25 % between measurements, a 12 % step found where it happened with an
// interval that covers it, excursions and outliers left alone, and label
// boundaries reported and preferred.
#include "server/analysis/change_points.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace paradnn::server::analysis {
namespace {

TEST(HodgesLehmannShiftTest, MatchesTheExactMannWhitneyInterval) {
  // R: wilcox.test(6:10, 1:5, conf.int = TRUE) gives 5 and [2, 8]: the 3rd
  // and 23rd of the 25 differences, since P(U <= 2) = 4/252 <= 2.5 % <
  // P(U <= 3) = 7/252.
  const ShiftEstimate shift = HodgesLehmannShift({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(shift.shift, 5);
  EXPECT_DOUBLE_EQ(shift.low, 2);
  EXPECT_DOUBLE_EQ(shift.high, 8);
  // Two against two cannot reach 95 %: the range of the differences.
  const ShiftEstimate tiny = HodgesLehmannShift({0, 1}, {3, 5});
  EXPECT_DOUBLE_EQ(tiny.shift, 3.5);
  EXPECT_DOUBLE_EQ(tiny.low, 2);
  EXPECT_DOUBLE_EQ(tiny.high, 5);
}

// The exact interval (20 x 20 = 400 pairs) and the normal one (21 x 21)
// agree on equally spread data to within one order statistic's step.
TEST(HodgesLehmannShiftTest, ExactAndNormalIntervalsAgreeWhereTheyMeet) {
  std::vector<double> before, after, before21, after21;
  for (int i = 0; i < 21; ++i) {
    before21.push_back(i);
    after21.push_back(i + 10.5);
    if (i < 20) before.push_back(i), after.push_back(i + 10.5);
  }
  const ShiftEstimate exact = HodgesLehmannShift(before, after);
  const ShiftEstimate normal = HodgesLehmannShift(before21, after21);
  EXPECT_DOUBLE_EQ(exact.shift, 10.5);
  EXPECT_DOUBLE_EQ(normal.shift, 10.5);
  EXPECT_NEAR(exact.high - exact.low, normal.high - normal.low, 2.0);
  EXPECT_GT(exact.low, 4);
  EXPECT_LT(exact.high, 17);
}

// log-normal step times around `level` (sd `spread` in log terms).
std::vector<SeriesPoint> SimulatedSeries(std::mt19937_64& random, const std::vector<double>& levels,
                                         double spread, const std::vector<std::string>& labels) {
  std::normal_distribution<double> noise(0, spread);
  std::vector<SeriesPoint> out;
  for (size_t i = 0; i < levels.size(); ++i) {
    out.push_back({0.010 * levels[i] * std::exp(noise(random)), labels[i]});
  }
  return out;
}

// `n` levels of 1, from `change` on `ratio`.
std::vector<double> StepLevels(size_t n, size_t change, double ratio) {
  std::vector<double> levels(n, 1.0);
  for (size_t i = change; i < n; ++i) levels[i] = ratio;
  return levels;
}

// FingerprintLabels "A" before `boundary`, "B" from it on.
std::vector<std::string> FingerprintLabels(size_t n, size_t boundary) {
  std::vector<std::string> labels(n, "A");
  for (size_t i = boundary; i < n; ++i) labels[i] = "B";
  return labels;
}

// 500 series of 48 points with no change, on a host whose speed moves
// 25 % (log sd) from one measurement to the next, a stack change halfway
// that changes nothing: a change reported in at most 5 % of them.
TEST(FindChangePointsTest, DriftAloneRaisesFewAlarms) {
  std::mt19937_64 random(371);
  constexpr int kSeries = 500;
  int alarms = 0;
  for (int s = 0; s < kSeries; ++s) {
    const std::vector<SeriesPoint> series =
        SimulatedSeries(random, StepLevels(48, 0, 1.0), 0.25, FingerprintLabels(48, 24));
    alarms += FindChangePoints(series).change_points.empty() ? 0 : 1;
  }
  const double rate = static_cast<double>(alarms) / kSeries;
  std::printf("no change, 25 %% drift: false alarms in %.1f %% of %d series\n", 100 * rate,
              kSeries);
  EXPECT_LE(rate, 0.05);
}

// 500 series of 40 points, 3 % noise, one 12 % step at an index drawn from
// [10, 30], no labels to help: found within one point in at least 95 %,
// and the 95 % interval of its ratio covers 1.12 in about 95 %.
TEST(FindChangePointsTest, FindsATwelvePercentStepAndItsIntervalCoversIt) {
  std::mt19937_64 random(372);
  std::uniform_int_distribution<size_t> where(10, 30);
  constexpr int kSeries = 500;
  int found = 0, exact = 0, extra = 0, covered = 0;
  for (int s = 0; s < kSeries; ++s) {
    const size_t change = where(random);
    const std::vector<SeriesPoint> series = SimulatedSeries(
        random, StepLevels(40, change, 1.12), 0.03, std::vector<std::string>(40, "A"));
    const std::vector<ChangePoint> changes = FindChangePoints(series).change_points;
    bool hit = false;
    for (const ChangePoint& c : changes) {
      if (hit || std::abs(static_cast<long>(c.index) - static_cast<long>(change)) > 1) continue;
      hit = true;
      exact += c.index == change ? 1 : 0;
      covered += c.low <= 1.12 && 1.12 <= c.high ? 1 : 0;
      EXPECT_LT(c.p_value, 0.01);
      EXPECT_FALSE(c.at_label_boundary);
    }
    found += hit ? 1 : 0;
    // Changes besides the one found: chance splits, or the step itself
    // placed further than one point away.
    extra += changes.size() > (hit ? 1u : 0u) ? 1 : 0;
  }
  const double detection = static_cast<double>(found) / kSeries;
  const double coverage = static_cast<double>(covered) / found;
  std::printf(
      "12 %% step, 3 %% noise: found within +-1 in %.1f %% (exactly in %.1f %%), other changes "
      "in %.1f %%, interval covers 1.12 in %.1f %%\n",
      100 * detection, 100.0 * exact / kSeries, 100.0 * extra / kSeries, 100 * coverage);
  EXPECT_GE(detection, 0.95);
  EXPECT_GE(coverage, 0.92);
  EXPECT_LE(coverage, 0.99);
  EXPECT_LE(extra, kSeries * 8 / 100);
}

// 500 quiet series (3 % noise) with 3 points 30 % slower somewhere, edges
// included: the excursion is not a change.
TEST(FindChangePointsTest, AShortExcursionIsNotAChange) {
  std::mt19937_64 random(373);
  std::uniform_int_distribution<size_t> where(0, 37);
  constexpr int kSeries = 500;
  int alarms = 0;
  for (int s = 0; s < kSeries; ++s) {
    std::vector<double> levels(40, 1.0);
    const size_t start = where(random);
    for (size_t i = start; i < start + 3; ++i) levels[i] = 1.3;
    const ChangePointAnalysis analysis =
        FindChangePoints(SimulatedSeries(random, levels, 0.03, std::vector<std::string>(40, "A")));
    alarms += analysis.change_points.empty() ? 0 : 1;
  }
  std::printf("3-point excursion of 30 %%: reported as a change in %.1f %% of %d series\n",
              100.0 * alarms / kSeries, kSeries);
  EXPECT_LE(alarms, kSeries / 50);
}

// With k = 8, seven slow points at the start of a quiet series make a
// significant split (seven of the eight points left of it stand out), but
// nothing is left once they are taken out: they are set aside.
TEST(FindChangePointsTest, AnExcursionThatWouldMakeAChangeIsSetAside) {
  std::mt19937_64 random(374);
  std::vector<double> levels(60, 1.0);
  for (size_t i = 0; i < 7; ++i) levels[i] = 1.3;
  ChangePointOptions options;
  options.min_points_each_side = 8;
  const std::vector<SeriesPoint> series =
      SimulatedSeries(random, levels, 0.01, std::vector<std::string>(60, "A"));
  const ChangePointAnalysis analysis = FindChangePoints(series, options);
  EXPECT_TRUE(analysis.change_points.empty());
  EXPECT_EQ(analysis.set_aside, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6}));
  options.min_points_each_side = 7;
  ASSERT_EQ(FindChangePoints(series, options).change_points.size(), 1u)
      << "seven points are a level when k is 7";
  EXPECT_EQ(FindChangePoints(series, options).change_points[0].index, 7u);
}

TEST(FindChangePointsTest, AChangeNextToAnExcursionIsStillFound) {
  std::mt19937_64 random(374);
  std::vector<double> levels = StepLevels(40, 20, 1.12);
  levels[0] = levels[1] = levels[2] = 1.4;
  levels[23] = levels[24] = 1.5;
  const ChangePointAnalysis analysis =
      FindChangePoints(SimulatedSeries(random, levels, 0.02, std::vector<std::string>(40, "A")));
  ASSERT_EQ(analysis.change_points.size(), 1u);
  EXPECT_EQ(analysis.change_points[0].index, 20u);
  EXPECT_NEAR(analysis.change_points[0].ratio, 1.12, 0.03);
}

TEST(FindChangePointsTest, OneOutlierAndBadPointsChangeNothing) {
  std::mt19937_64 random(375);
  std::vector<SeriesPoint> series =
      SimulatedSeries(random, StepLevels(30, 0, 1.0), 0.03, std::vector<std::string>(30, "A"));
  series[15].step_time *= 5;
  series[7].step_time = 0;
  series[8].step_time = -1;
  series[9].step_time = std::nan("");
  EXPECT_TRUE(FindChangePoints(series).change_points.empty());
  EXPECT_TRUE(FindChangePoints({}).change_points.empty());
  EXPECT_TRUE(FindChangePoints({{0.01, "A"}, {0.02, "B"}}).change_points.empty()) << "too short";
}

TEST(FindChangePointsTest, ReportsTheLabelsOnEachSide) {
  std::mt19937_64 random(376);
  std::vector<std::string> labels = FingerprintLabels(40, 20);
  for (size_t i = 20; i < 40; ++i) labels[i] = "fingerprint-B";
  for (size_t i = 0; i < 20; ++i) labels[i] = "fingerprint-A";
  const ChangePointAnalysis analysis =
      FindChangePoints(SimulatedSeries(random, StepLevels(40, 20, 1.12), 0.03, labels));
  ASSERT_EQ(analysis.change_points.size(), 1u);
  const ChangePoint& change = analysis.change_points[0];
  EXPECT_EQ(change.index, 20u);
  EXPECT_EQ(change.label_before, "fingerprint-A");
  EXPECT_EQ(change.label_after, "fingerprint-B");
  EXPECT_TRUE(change.at_label_boundary);
  EXPECT_EQ(change.before_begin, 0u);
  EXPECT_EQ(change.after_end, 40u);
  EXPECT_LT(change.low, 1.12);
  EXPECT_GT(change.high, 1.12);
  EXPECT_GT(change.low, 1.05);
}

// A sharp step one point before a stack change: the step's own point is
// clearly at the new level, so the change stays where it is and is not
// said to be the stack's.
TEST(FindChangePointsTest, AClearChangeIsNotMovedOntoANearbyLabelBoundary) {
  std::mt19937_64 random(377);
  const ChangePointAnalysis analysis = FindChangePoints(
      SimulatedSeries(random, StepLevels(40, 20, 1.12), 0.01, FingerprintLabels(40, 21)));
  ASSERT_EQ(analysis.change_points.size(), 1u);
  EXPECT_EQ(analysis.change_points[0].index, 20u);
  EXPECT_FALSE(analysis.change_points[0].at_label_boundary);
  EXPECT_EQ(analysis.change_points[0].label_before, "A");
  EXPECT_EQ(analysis.change_points[0].label_after, "A");
}

// Noisy series (10 % noise, a 20 % step at a stack change): with the labels
// the change lands on the boundary far more often than the rank scan alone
// puts it there.
TEST(FindChangePointsTest, PrefersTheLabelBoundaryWhereTheEvidenceIsSimilar) {
  std::mt19937_64 random(378);
  constexpr int kSeries = 300;
  int with_labels = 0, without_labels = 0;
  for (int s = 0; s < kSeries; ++s) {
    const std::vector<SeriesPoint> labelled =
        SimulatedSeries(random, StepLevels(40, 20, 1.2), 0.10, FingerprintLabels(40, 20));
    std::vector<SeriesPoint> unlabelled = labelled;
    for (SeriesPoint& point : unlabelled) point.label = "A";
    for (const ChangePoint& c : FindChangePoints(labelled).change_points) {
      with_labels += c.index == 20 && c.at_label_boundary ? 1 : 0;
    }
    for (const ChangePoint& c : FindChangePoints(unlabelled).change_points) {
      without_labels += c.index == 20 ? 1 : 0;
    }
  }
  std::printf("20 %% step, 10 %% noise: at the true index %.1f %% with labels, %.1f %% without\n",
              100.0 * with_labels / kSeries, 100.0 * without_labels / kSeries);
  EXPECT_GT(with_labels, without_labels + kSeries / 10);
}

TEST(FindChangePointsTest, FindsTwoChangesAndIsDeterministic) {
  std::mt19937_64 random(379);
  std::vector<double> levels = StepLevels(60, 20, 1.15);
  for (size_t i = 40; i < 60; ++i) levels[i] = 0.95;
  const std::vector<SeriesPoint> series =
      SimulatedSeries(random, levels, 0.02, std::vector<std::string>(60, "A"));
  const ChangePointAnalysis first = FindChangePoints(series);
  ASSERT_EQ(first.change_points.size(), 2u);
  EXPECT_EQ(first.change_points[0].index, 20u);
  EXPECT_EQ(first.change_points[1].index, 40u);
  EXPECT_EQ(first.change_points[0].after_end, 40u);
  EXPECT_EQ(first.change_points[1].before_begin, 20u);
  EXPECT_NEAR(first.change_points[0].ratio, 1.15, 0.02);
  EXPECT_NEAR(first.change_points[1].ratio, 0.95 / 1.15, 0.02);
  const ChangePointAnalysis again = FindChangePoints(series);
  ASSERT_EQ(again.change_points.size(), 2u);
  EXPECT_EQ(again.change_points[0].p_value, first.change_points[0].p_value);
  EXPECT_EQ(again.change_points[1].low, first.change_points[1].low);
}

}  // namespace
}  // namespace paradnn::server::analysis
