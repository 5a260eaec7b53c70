// The analyses the Analyzer (analyzer.h) dispatches to, one function per
// kind of AnalyzeRequest, and what more than one of them uses. Internal to
// server/analysis: the single-sweep kinds are in single_sweep_analyses.cc,
// the comparisons (speedup, scaling, history) in comparison_analyses.cc.
// A new kind adds its function here and its case to Analyzer's dispatch.
#ifndef PARADNN_SERVER_ANALYSIS_ANALYSIS_KINDS_H_
#define PARADNN_SERVER_ANALYSIS_ANALYSIS_KINDS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/analysis.pb.h"
#include "server/analysis/analysis_math.h"
#include "server/analysis/result_selection.h"

namespace paradnn::server::analysis {

// What every analysis reports beside its answer.
struct Outline {
  int64_t results = 0;    // records selected, any outcome
  int64_t predicted = 0;  // of those, predictions (include_predicted)
  v1::AnalysisScope scope;
};

// Counts `selected` into `outline`.
void CountSelected(const Selected& selected, Outline* outline);

// The numeric fields that vary over `measured` among `candidates`.
std::vector<std::string> VaryingNumericFields(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& candidates);

// The points of a sensitivity fit of `features` over `measured`.
absl::StatusOr<SensitivityInput> SensitivityPoints(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& features);

// ---- One sweep's results (single_sweep_analyses.cc) ----
absl::StatusOr<v1::HeatmapResponse> Heatmap(const db::Database* database,
                                            const v1::HeatmapRequest& request, Outline* outline);
absl::StatusOr<v1::SensitivityResponse> Sensitivity(const db::Database* database,
                                                    const v1::SensitivityRequest& request,
                                                    Outline* outline);
absl::StatusOr<v1::RooflineResponse> Roofline(const db::Database* database,
                                              const v1::RooflineRequest& request, Outline* outline);
absl::StatusOr<v1::BoxplotResponse> Boxplot(const db::Database* database,
                                            const v1::BoxplotRequest& request, Outline* outline);

// ---- Comparisons (comparison_analyses.cc) ----
absl::StatusOr<v1::SpeedupResponse> Speedup(const db::Database* database,
                                            const v1::SpeedupRequest& request, Outline* outline);
absl::StatusOr<v1::ScalingResponse> Scaling(const db::Database* database,
                                            const v1::ScalingRequest& request, Outline* outline);
absl::StatusOr<v1::HistoryResponse> History(const db::Database* database,
                                            const v1::HistoryRequest& request, Outline* outline);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_ANALYSIS_KINDS_H_
