// What an analysis was computed over (v1::AnalysisScope): the selection, the
// platforms, and the fields that vary over the results without being shown
// apart, which the analysis aggregated across. Titles and captions state
// it, so that no figure silently takes medians over thread counts or sweeps.
#ifndef PARADNN_SERVER_ANALYSIS_ANALYSIS_SCOPE_H_
#define PARADNN_SERVER_ANALYSIS_ANALYSIS_SCOPE_H_

#include <string>
#include <utility>
#include <vector>

#include "paradnn/v1/analysis.pb.h"
#include "server/analysis/result_selection.h"

namespace paradnn::server::analysis {

// Adds to `plan` what ScopeOf reads: every hyper-parameter and the
// built-in fields a result can differ in within a selection.
void PlanScope(LoadPlan* plan);

// The scope of `selected` (loaded with a plan PlanScope saw) under
// `selection`: its platforms, and each field outside `shown` with more
// than one value, combined as `aggregation` says ("" when the analysis
// shows every result).
v1::AnalysisScope ScopeOf(const Selected& selected, const v1::ResultSelection& selection,
                          const std::vector<std::string>& shown, const std::string& aggregation);

// The distinct values of carried `field` over every selected record,
// sorted (numerically where numeric).
std::vector<std::string> DistinctOverRecords(const Selected& selected, const std::string& field);

// The same over `measured` only. Groups on dictionary ids: cheap for a
// million records.
std::vector<std::string> DistinctValues(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::string& field);

// The `candidates` a sensitivity fit left out of `features`, each with why:
// "block_fn: not numeric (...)" or "layer: constant over the selection"
// (constant thread counts are not mentioned).
std::vector<std::string> DroppedFeatures(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& candidates, const std::vector<std::string>& features);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_ANALYSIS_SCOPE_H_
