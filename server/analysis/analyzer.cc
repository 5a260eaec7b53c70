#include "server/analysis/analyzer.h"

#include <new>
#include <stdexcept>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/analysis/analysis_kinds.h"
#include "server/analysis/bisect_step.h"

namespace paradnn::server::analysis {

absl::StatusOr<v1::AnalyzeResponse> Analyzer::Analyze(const v1::AnalyzeRequest& request) const {
  // The bounds (analysis_math.h) keep analyses small; an allocation that
  // fails anyway fails this request, never the coordinator.
  try {
    return AnalyzeUnguarded(request);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        "the analysis ran out of memory; select fewer sweeps or results (--where) and try again");
  } catch (const std::length_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the analysis is too large (", e.what(), "); select fewer sweeps or results"));
  }
}

absl::StatusOr<v1::AnalyzeResponse> Analyzer::AnalyzeUnguarded(
    const v1::AnalyzeRequest& request) const {
  v1::AnalyzeResponse response;
  Outline outline;
  // Runs one analysis and moves its answer into `out`.
  auto run = [&](auto analysis, const auto& part, auto* out) -> absl::Status {
    auto answer = analysis(database_, part, &outline);
    if (!answer.ok()) return answer.status();
    *out = *std::move(answer);
    return absl::OkStatus();
  };
  absl::Status status;
  switch (request.analysis_case()) {
    case v1::AnalyzeRequest::kHeatmap:
      status = run(Heatmap, request.heatmap(), response.mutable_heatmap());
      break;
    case v1::AnalyzeRequest::kSensitivity:
      status = run(Sensitivity, request.sensitivity(), response.mutable_sensitivity());
      break;
    case v1::AnalyzeRequest::kRoofline:
      status = run(Roofline, request.roofline(), response.mutable_roofline());
      break;
    case v1::AnalyzeRequest::kBoxplot:
      status = run(Boxplot, request.boxplot(), response.mutable_boxplot());
      break;
    case v1::AnalyzeRequest::kSpeedup:
      status = run(Speedup, request.speedup(), response.mutable_speedup());
      break;
    case v1::AnalyzeRequest::kScaling:
      status = run(Scaling, request.scaling(), response.mutable_scaling());
      break;
    case v1::AnalyzeRequest::kHistory:
      status = run(History, request.history(), response.mutable_history());
      break;
    case v1::AnalyzeRequest::kBisect: {  // reads no results: the request carries them
      absl::StatusOr<v1::BisectResponse> step = BisectStep(request.bisect());
      status = step.status();
      if (step.ok()) *response.mutable_bisect() = *std::move(step);
      break;
    }
    case v1::AnalyzeRequest::ANALYSIS_NOT_SET:
      return absl::InvalidArgumentError(
          "analysis: set one of heatmap, sensitivity, roofline, boxplot, speedup, scaling, "
          "history, bisect");
  }
  if (!status.ok()) return status;
  response.set_results(outline.results);
  response.set_predicted_results(outline.predicted);
  *response.mutable_scope() = std::move(outline.scope);
  return response;
}

}  // namespace paradnn::server::analysis
