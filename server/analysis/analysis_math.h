// The arithmetic of the ParaDnn analyses on rows already selected from the
// database (server/analysis/analyzer.h does the SQL): heat-map pivots,
// standardized least-squares sensitivities (Eigen; sensitivity_fit.h, which
// this header includes), the paper's box-plot percentiles, speedup joins,
// thread scaling and roofline points. Pure functions of their inputs;
// thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_ANALYSIS_MATH_H_
#define PARADNN_SERVER_ANALYSIS_ANALYSIS_MATH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/analysis.pb.h"
#include "paradnn/v1/metrics.pb.h"
#include "server/analysis/sensitivity_fit.h"

namespace paradnn::server::analysis {

// ---- Bounds ----------------------------------------------------------------

// What one analysis may compute, so that no request exhausts the
// coordinator's memory (RESOURCE_EXHAUSTED naming the limit past them).
// kMaxSensitivityTerms (features + interactions) is in sensitivity_fit.h.
inline constexpr size_t kMaxHeatmapCells = 1'000'000;  // panels x y values x x values
inline constexpr size_t kMaxAnalysisGroups = 100'000;  // distinct levels, configurations, boxes

// ---- Ordering of field values ---------------------------------------------

// `text` as a finite number; nullopt otherwise (SimpleAtod accepts "nan"
// and "inf"; neither orders nor scales, so neither counts as a number here).
std::optional<double> ParseNumber(absl::string_view text);

// True when every value parses as a number (integers or decimals).
bool AllNumeric(const std::vector<std::string>& values);

// The distinct values, sorted numerically when all but the empty value are
// numeric (the empty value, a row without the field, then last), else
// lexicographically.
std::vector<std::string> SortedDistinct(std::vector<std::string> values);

// ---- Percentiles ----------------------------------------------------------

// The p-th percentile (0..100) of `sorted` (ascending, non-empty) by linear
// interpolation between closest ranks (numpy's default "linear" method).
double Percentile(const std::vector<double>& sorted, double p);

// Median of `values` (non-empty; copied and sorted).
double Median(std::vector<double> values);

// ---- Heat map -------------------------------------------------------------

// One result as the heat map sees it.
struct HeatmapRow {
  std::string x;
  std::string y;
  std::string panel;  // "" without a panel field
  v1::Outcome outcome = v1::OUTCOME_UNSPECIFIED;
  double metric = 0;  // meaningful only for OK results
};

// Pivots `rows` into panels of cells (every x × y pair of the axis values,
// y outer, x inner; panels in SortedDistinct order). A cell's value is the
// median metric of its OK rows; OOM / PREDICTED_OOM / other outcomes are
// counted, never folded into the value. Fills x_values, y_values,
// x_numeric, y_numeric and panels; the caller fills metric, unit and names.
// InvalidArgument when `rows` is empty or an axis has a single value
// ("heat map axis 'x' (layer) is constant (4) over the selected results").
// With `own_axes`, each panel's grid spans only the axis values it has
// results at (panels of different families); otherwise every panel spans
// them all. Each panel's x_values and y_values say which.
absl::StatusOr<v1::HeatmapResponse> PivotHeatmap(const std::vector<HeatmapRow>& rows,
                                                 const std::string& x_field,
                                                 const std::string& y_field, bool own_axes = false);

// The results of one cell, already grouped (by a caller that groups on
// something cheaper than strings).
struct HeatmapTally {
  std::string x;
  std::string y;
  std::string panel;
  std::vector<double> ok_metrics;
  // Of ok_metrics, the predicted ones and their intervals' bounds.
  int64_t predicted = 0;
  std::vector<double> predicted_low;
  std::vector<double> predicted_high;
  int64_t oom = 0;
  int64_t predicted_oom = 0;
  int64_t failed = 0;
};

// Counts one result's outcome (and its metric when OK) into `tally`.
void CountInto(HeatmapTally* tally, v1::Outcome outcome, double metric);

// PivotHeatmap over tallies, at most one per (panel, y, x); the same
// response and errors as for the rows they were counted from.
absl::StatusOr<v1::HeatmapResponse> PivotHeatmapTallies(const std::vector<HeatmapTally>& tallies,
                                                        const std::string& x_field,
                                                        const std::string& y_field,
                                                        bool own_axes = false);

// ---- Sensitivity ----------------------------------------------------------
// SensitivityInput and FitSensitivity: server/analysis/sensitivity_fit.h.

// ---- Box plots ------------------------------------------------------------

// A box by Tukey's rule (quartiles, whiskers at the most extreme values
// within 1.5 IQR, the values beyond as outliers, ascending), its median and
// mean, and the paper's percentiles (2nd, 9th, 91st, 98th).
// `values` non-empty.
v1::BoxplotGroup SummarizeBox(const std::string& name, std::vector<double> values);

// ---- Speedup --------------------------------------------------------------

// One measured run of a configuration on one side, for the verdict: the
// repeat round it belongs to (runs of both sides in one round were measured
// close in time) and its metric.
struct SpeedupRun {
  std::string round;
  double value = 0;
};

// One configuration on one side as the speedup join sees it.
struct SpeedupRow {
  std::string side;    // the compared field's value (e.g. "bfloat16")
  std::string config;  // the configuration without the compared field
  int64_t params = 0;
  std::string color_value;
  double metric = 0;       // the median over its runs
  bool predicted = false;  // the metric is (or includes) a prediction
  std::vector<SpeedupRun> runs = {};
  // The re-run spread of one run on its platform (rerun_model.h), for a
  // side measured once; 0 = unknown.
  double rerun_rel_sd = 0;
};

// Joins `rows` config by config between `baseline` and `candidate` (the
// median over each side's repeats), speedup = candidate / baseline, or
// baseline / candidate when `lower_is_better` (step_time). Points sorted by
// params then config. Fills points, geomean/min/max, baseline_only,
// candidate_only; not the sensitivity. InvalidArgument when no
// configuration is measured on both sides ("no configuration was measured
// with both precision=float32 (12 configurations) and precision=bfloat16
// (0)").
absl::StatusOr<v1::SpeedupResponse> JoinSpeedup(const std::vector<SpeedupRow>& rows,
                                                const std::string& field,
                                                const std::string& baseline,
                                                const std::string& candidate, bool lower_is_better);

// ---- Scaling --------------------------------------------------------------

struct ScalingRow {
  std::string level;   // the scaled field's value, numeric (e.g. "4")
  std::string config;  // the configuration without it
  double metric = 0;
  bool predicted = false;  // the metric is (or includes) a prediction
};

// Per configuration the metric (median of repeats) at each level; per level
// the speedup over the smallest level across configurations measured at
// both, and the efficiency (speedup ÷ level ratio). `lower_is_better` as for
// JoinSpeedup. InvalidArgument when there are fewer than two levels or a
// level is not numeric.
absl::StatusOr<v1::ScalingResponse> SummarizeScaling(const std::vector<ScalingRow>& rows,
                                                     const std::string& field,
                                                     bool lower_is_better);

// ---- Roofline -------------------------------------------------------------

// The memory roofs of a calibration: for each copy plateau, the best
// bandwidth at working sets that fit the cache level named in
// `cache_sizes` ("L1d 48 KiB, L2 1 MiB, L3 32 MiB"), and DRAM as the best at
// working sets of at least 4× the last level; levels without a point are
// left out. Falls back to triad when there is no copy point.
std::vector<v1::BandwidthRoof> BandwidthRoofs(const v1::Platform& platform);

// Bytes of an operator's inputs from the profiler's shape text
// ("[[64, 1024], [1024], []]") at `element_bytes` each; 0 when unparsable.
double InputBytesFromShapes(const std::string& shapes, int element_bytes);

// Attainable FLOP/s at `intensity` under one compute and one memory roof:
// min(compute, intensity × bandwidth).
double Attainable(double intensity, double compute_flops_per_sec, double bytes_per_sec);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_ANALYSIS_MATH_H_
