#include "server/analysis/analyzer.h"

#include <iterator>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/analysis/analysis_kinds.h"
#include "server/analysis/bisect_step.h"

namespace paradnn::server::analysis {
namespace {

// Moves a kind's answer into its case of the response.
template <typename Response>
absl::Status Into(absl::StatusOr<Response> answer, Response* out) {
  if (!answer.ok()) return answer.status();
  *out = *std::move(answer);
  return absl::OkStatus();
}

constexpr bool kReadsResults = true;

// The one table of kinds: Analyzer dispatches through it, and
// analysis_kinds_test checks it against AnalyzeRequest's oneof.
constexpr AnalysisKind kAnalysisKinds[] = {
    {v1::AnalyzeRequest::kHeatmap, "heatmap", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Heatmap(context, request.heatmap()), response->mutable_heatmap());
     }},
    {v1::AnalyzeRequest::kSensitivity, "sensitivity", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Sensitivity(context, request.sensitivity()), response->mutable_sensitivity());
     }},
    {v1::AnalyzeRequest::kRoofline, "roofline", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Roofline(context, request.roofline()), response->mutable_roofline());
     }},
    {v1::AnalyzeRequest::kBoxplot, "boxplot", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Boxplot(context, request.boxplot()), response->mutable_boxplot());
     }},
    {v1::AnalyzeRequest::kSpeedup, "speedup", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Speedup(context, request.speedup()), response->mutable_speedup());
     }},
    {v1::AnalyzeRequest::kScaling, "scaling", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Scaling(context, request.scaling()), response->mutable_scaling());
     }},
    {v1::AnalyzeRequest::kHistory, "history", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(History(context, request.history()), response->mutable_history());
     }},
    // Reads no results: the request carries the measurements.
    {v1::AnalyzeRequest::kBisect, "bisect", !kReadsResults,
     [](const KindContext&, const v1::AnalyzeRequest& request, v1::AnalyzeResponse* response) {
       return Into(BisectStep(request.bisect()), response->mutable_bisect());
     }},
    {v1::AnalyzeRequest::kScaleOut, "scale_out", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(ScaleOut(context, request.scale_out()), response->mutable_scale_out());
     }},
    {v1::AnalyzeRequest::kAllreduce, "allreduce", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Allreduce(context, request.allreduce()), response->mutable_allreduce());
     }},
    {v1::AnalyzeRequest::kTuning, "tuning", kReadsResults,
     [](const KindContext& context, const v1::AnalyzeRequest& request,
        v1::AnalyzeResponse* response) {
       return Into(Tuning(context, request.tuning()), response->mutable_tuning());
     }},
};

const AnalysisKind* FindKind(v1::AnalyzeRequest::AnalysisCase request_case) {
  for (const AnalysisKind& kind : kAnalysisKinds) {
    if (kind.request_case == request_case) return &kind;
  }
  return nullptr;
}

std::string KindNames() {
  std::vector<std::string> names;
  for (const AnalysisKind& kind : kAnalysisKinds) names.emplace_back(kind.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

const std::vector<AnalysisKind>& AnalysisKinds() {
  static const std::vector<AnalysisKind> kinds(std::begin(kAnalysisKinds),
                                               std::end(kAnalysisKinds));
  return kinds;
}

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
  if (request.analysis_case() == v1::AnalyzeRequest::ANALYSIS_NOT_SET) {
    return absl::InvalidArgumentError(absl::StrCat("analysis: set one of ", KindNames()));
  }
  const AnalysisKind* kind = FindKind(request.analysis_case());
  if (kind == nullptr) {  // a kind the proto has and this table lacks (analysis_kinds_test)
    return absl::UnimplementedError(absl::StrCat("analysis: case ", request.analysis_case(),
                                                 " is not computed here; one of ", KindNames()));
  }
  if (!kind->reads_results && request.has_selection()) {
    return absl::InvalidArgumentError(
        absl::StrCat("selection: ", kind->name,
                     " reads no stored results (its request carries what it needs); leave "
                     "selection unset"));
  }
  v1::AnalyzeResponse response;
  Outline outline;
  if (absl::Status s =
          kind->compute({database_, request.selection(), &outline}, request, &response);
      !s.ok()) {
    return s;
  }
  response.set_results(outline.results);
  response.set_predicted_results(outline.predicted);
  *response.mutable_scope() = std::move(outline.scope);
  return response;
}

}  // namespace paradnn::server::analysis
