// Change points in the history of one configuration on one hardware class
// (issue 37, "regressions found and bisected"): the step times measured
// over time, each tagged with the stack fingerprint it ran on; where the
// level shifts, by how much (a ratio with a 95 % interval), how sure we are
// (a p-value), and whether the shift falls where the stack changed. Pure
// functions; thread-compatible; deterministic (the permutations draw from a
// seeded generator).
//
// The method: binary segmentation with a rank scan statistic calibrated by
// permutation. Within a segment of n points, every split t with at least k
// points on each side gets the standardized Mann-Whitney statistic of the
// left part against the right, Z_t = (W_t - t(n+1)/2) / sqrt(t(n-t)(n+1)/12)
// (W_t: the left part's rank sum); the segment's statistic is max |Z_t|,
// and its p-value is the share of random reorderings of the segment whose
// max |Z_t| is at least as large. A significant segment is split at its
// best split and both halves are searched again. Why this and not the two
// methods usually named:
//  - E-Divisive (Matteson & James 2014, MongoDB's choice for its CI) looks
//    for any change in distribution with an energy statistic of O(n^2) per
//    permutation whose distances let one far outlier weigh as much as many
//    points; here only a shift of level matters, and ranks give every
//    point one vote, so an outlier moves nothing, and one permutation
//    costs O(n) (prefix sums of shuffled ranks).
//  - A fixed sliding window tests each index on its own, which leaves the
//    multiplicity over indices to an ad hoc correction and the window size
//    to a guess; the max over splits with a permutation null accounts for
//    the search over indices exactly, with every point of the segment.
// The permutation null assumes the points of a segment exchangeable when
// its level does not change: a host that drifts independently from one
// measurement to the next (the 10-50 % these hosts move by over minutes,
// between measurements hours apart) satisfies it; a host that stays slow
// for many consecutive points is a level shift for any method that sees
// the series alone.
//
// Controls against false alarms:
//  - persistence: a change needs at least k (`min_points_each_side`)
//    points at each level, so splits leave k points a side; and evidence
//    that rests on fewer than k consecutive points is an excursion, not a
//    change: before a significant segment is split, the run of fewer than
//    k points whose ranks stand out most (grown over neighbours closer to
//    its level than to the rest's; k points or more are a level, not an
//    excursion) is taken out, and if what is left holds no significant
//    split, the run is set aside (reported, used in no estimate) and the
//    segment holds no change. A single outlier moves a rank statistic
//    little to begin with.
//  - label boundaries: when a split at a point where the stack fingerprint
//    changes explains the series about as well (the Gaussian log-likelihood
//    of the log step times, levels at the sides' medians, spread from their
//    MAD, loses at most chi-square(1) 95 % = 3.84 by moving the points
//    between), the change is placed there: a stack change is the likely
//    cause. Every change says whether it lies on a boundary.
//
// The ratio is after/before from the Hodges-Lehmann estimate of the shift
// of the log step times between the two adjacent segments, with the
// distribution-free interval from the Mann-Whitney distribution (exact for
// small segments, normal beyond): the ratio of the levels' medians where
// the shift is a common factor. The interval takes the index as given;
// the search chose it where the sides differ most, so it covers a little
// under its level (94 % at 95 % for a 12 % step in 3 % noise,
// change_points_test.cc).
#ifndef PARADNN_SERVER_ANALYSIS_CHANGE_POINTS_H_
#define PARADNN_SERVER_ANALYSIS_CHANGE_POINTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace paradnn::server::analysis {

// One measurement of the series, in time order.
struct SeriesPoint {
  double step_time = 0;  // seconds; non-positive or non-finite points are ignored
  std::string label;     // the stack fingerprint it was measured with
};

// A shift of location with its interval (Hodges-Lehmann).
struct ShiftEstimate {
  double shift = 0;
  double low = 0;
  double high = 0;
};

// The shift of `after` relative to `before`: the median of the pairwise
// differences after[j] - before[i], with the interval between the order
// statistics the Mann-Whitney distribution gives at `level` (as R's
// wilcox.test(after, before, conf.int = TRUE) does; exact when the two
// sizes multiply to at most 400, normal with continuity correction beyond).
// When the samples are too small for the level, the interval is the range
// of the differences. Both samples non-empty.
ShiftEstimate HodgesLehmannShift(const std::vector<double>& before,
                                 const std::vector<double>& after, double level = 0.95);

struct ChangePointOptions {
  // k: the points a level must hold for on each side of a change.
  size_t min_points_each_side = 5;
  // A segment is split when its permutation p-value is at most this. 1 %
  // rather than 5 %: a series is tested again after each split, and an
  // alarm costs a person's time.
  double significance = 0.01;
  int permutations = 999;
  uint64_t seed = 37;
  double interval_level = 0.95;
};

// A shift of the level between two adjacent segments.
struct ChangePoint {
  size_t index = 0;  // the first point (index into the series) at the new level
  // After over before (> 1: slower after), and its interval at
  // interval_level; the medians' ratio where the shift is a common factor.
  double ratio = 1;
  double low = 1;
  double high = 1;
  // The permutation p-value of the split in the segment it was found in.
  double p_value = 1;
  std::string label_before;  // of the last usable point before `index`
  std::string label_after;   // of the point at `index`
  bool at_label_boundary = false;
  // The segments the ratio compares: [before_begin, index) and
  // [index, after_end), less ignored and set-aside points.
  size_t before_begin = 0;
  size_t after_end = 0;
};

struct ChangePointAnalysis {
  std::vector<ChangePoint> change_points;  // by index
  // Points of short excursions (fewer than k in a row) that would
  // otherwise have made a change, by index: in no estimate.
  std::vector<size_t> set_aside;
};

// The change points of `series` (in time order). Fewer than
// 2 x min_points_each_side usable points: none.
ChangePointAnalysis FindChangePoints(const std::vector<SeriesPoint>& series,
                                     const ChangePointOptions& options = {});

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_CHANGE_POINTS_H_
