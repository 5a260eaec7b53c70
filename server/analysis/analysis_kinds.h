// The analyses the Analyzer (analyzer.h) dispatches to, one function per
// kind of AnalyzeRequest, the one table of kinds it dispatches through, and
// what more than one of them uses. Internal to server/analysis: the
// single-sweep kinds are in single_sweep_analyses.cc, the comparisons
// (speedup, scaling, history) in comparison_analyses.cc, the data-parallel
// scale-out in scaling_analysis.cc, the all-reduce roof in
// allreduce_analysis.cc, the thread-setting findings in tuning_analysis.cc,
// the table in analyzer.cc. A new kind adds its function here and
// its row to the table (docs/extending.md "Add an analysis kind"); analysis_kinds_test fails,
// naming the kind, while the proto has a kind the table lacks.
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

// What a kind reads besides its own part of the request: the database,
// the request's selection (AnalyzeRequest.selection) and the outline it
// fills. `database` and `outline` are not null.
struct KindContext {
  const db::Database* database;
  const v1::ResultSelection& selection;
  Outline* outline;
};

// One kind of analysis: the AnalyzeRequest oneof case that asks for it and
// how it is computed.
struct AnalysisKind {
  v1::AnalyzeRequest::AnalysisCase request_case;
  const char* name;    // the oneof field's name, in both AnalyzeRequest and AnalyzeResponse
  bool reads_results;  // it reads the results `selection` names (bisect does not)
  // Computes the kind `request` holds and sets the same case of `response`;
  // the errors of the kind's function below.
  absl::Status (*compute)(const KindContext& context, const v1::AnalyzeRequest& request,
                          v1::AnalyzeResponse* response);
};

// Every kind the coordinator computes, in the proto's order.
const std::vector<AnalysisKind>& AnalysisKinds();

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
absl::StatusOr<v1::HeatmapResponse> Heatmap(const KindContext& context,
                                            const v1::HeatmapRequest& request);
absl::StatusOr<v1::SensitivityResponse> Sensitivity(const KindContext& context,
                                                    const v1::SensitivityRequest& request);
absl::StatusOr<v1::RooflineResponse> Roofline(const KindContext& context,
                                              const v1::RooflineRequest& request);
absl::StatusOr<v1::BoxplotResponse> Boxplot(const KindContext& context,
                                            const v1::BoxplotRequest& request);

// ---- Comparisons (comparison_analyses.cc) ----
absl::StatusOr<v1::SpeedupResponse> Speedup(const KindContext& context,
                                            const v1::SpeedupRequest& request);
absl::StatusOr<v1::ScalingResponse> Scaling(const KindContext& context,
                                            const v1::ScalingRequest& request);
absl::StatusOr<v1::HistoryResponse> History(const KindContext& context,
                                            const v1::HistoryRequest& request);

// ---- Data-parallel scale-out over hosts or devices (scaling_analysis.cc) ----
absl::StatusOr<v1::ScaleOutResponse> ScaleOut(const KindContext& context,
                                              const v1::ScaleOutRequest& request);

// ---- A platform's communication roof (allreduce_analysis.cc) ----
absl::StatusOr<v1::AllreduceResponse> Allreduce(const KindContext& context,
                                                const v1::AllreduceRequest& request);

// ---- The paper's thread-setting findings as checks (tuning_analysis.cc) ----
absl::StatusOr<v1::TuningResponse> Tuning(const KindContext& context,
                                          const v1::TuningRequest& request);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_ANALYSIS_KINDS_H_
