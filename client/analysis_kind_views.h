// Each kind's table and CSV text and its metric values in display units:
// what the client's table of kinds (client/analysis_kinds.cc) points at for
// FormatAnalysis and ToDisplayUnits, which client/analysis_views.h
// describes. The kinds over one sweep's results are in
// single_sweep_views.cc, the comparisons (speedup, history, scaling) in
// comparison_views.cc, the text they share in analysis_views.cc. Internal
// to the analysis views; pure functions, thread-safe.
#ifndef PARADNN_CLIENT_ANALYSIS_KIND_VIEWS_H_
#define PARADNN_CLIENT_ANALYSIS_KIND_VIEWS_H_

#include <google/protobuf/repeated_field.h>

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::internal {

// ---- Shared text (analysis_views.cc) ----

// The rows of an AlignColumns table.
using Rows = std::vector<std::vector<std::string>>;

// Marks a value that is (or includes) a budgeted sweep's prediction.
inline constexpr char kPredictedMark[] = "~";

// A metric value in human units. `unit` is as the analyses name it (after
// ToDisplayUnits): "%" a percentage, "fraction" a fraction (0.42 prints
// 42.0%), "s" seconds, "bytes" bytes; any other unit (examples/s, GFLOP/s,
// FLOP/B, "") gets SI suffixes.
std::string HumanValue(double value, const std::string& unit);
// "247 GFLOP/s", "45.0 GB/s": HumanCount's suffix becomes the unit's prefix.
std::string WithPrefix(double value, absl::string_view unit);
// "1.52×"; "-" when not finite.
std::string Times(double ratio);
// A fraction in percent, "42.0%"; "-" when not finite.
std::string Percent(double fraction);
// "gflops (GFLOP/s)", or the bare metric when `unit` is empty.
std::string WithUnit(const std::string& metric, const std::string& unit);

// ---- Display units (analysis_views.cc) ----

inline constexpr double kPercentPerFraction = 100;
// Whether `unit` names fractions (mfu, hfu, step_cv: "fraction").
bool IsFraction(const std::string& unit);
// Whether the metric called `metric` is a fraction.
bool IsFractionMetric(const std::string& metric);
// Multiplies every value by kPercentPerFraction.
void ScaleToPercent(google::protobuf::RepeatedField<double>* values);

// ---- One sweep's results (single_sweep_views.cc) ----
std::string HeatmapTable(const v1::HeatmapResponse& h);
std::string HeatmapCsv(const v1::HeatmapResponse& h);
void HeatmapToDisplayUnits(v1::HeatmapResponse* heatmap);
std::string SensitivityTable(const v1::SensitivityResponse& s);
std::string SensitivityCsv(const v1::SensitivityResponse& s);
std::string RooflineTable(const v1::RooflineResponse& r);
std::string RooflineCsv(const v1::RooflineResponse& r);
std::string BoxplotTable(const v1::BoxplotResponse& b);
std::string BoxplotCsv(const v1::BoxplotResponse& b);
void BoxplotToDisplayUnits(v1::BoxplotResponse* boxplot);

// ---- Comparisons (comparison_views.cc) ----
std::string SpeedupTable(const v1::SpeedupResponse& s);
std::string SpeedupCsv(const v1::SpeedupResponse& s);
void SpeedupToDisplayUnits(v1::SpeedupResponse* speedup);
std::string HistoryTable(const v1::HistoryResponse& h);
std::string HistoryCsv(const v1::HistoryResponse& h);
std::string ScalingTable(const v1::ScalingResponse& s);
std::string ScalingCsv(const v1::ScalingResponse& s);
void ScalingToDisplayUnits(v1::ScalingResponse* scaling);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_ANALYSIS_KIND_VIEWS_H_
