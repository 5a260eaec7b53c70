#include "server/analysis/analysis_scope.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/analysis/analysis_math.h"

namespace paradnn::server::analysis {
namespace {

// Built-in fields that can vary within a selection and change a result.
// (worker, hostname and fingerprint follow from these on one platform.)
const char* const kScopeFields[] = {"family",           "precision",        "optimizer",  "sweep",
                                    "intra_op_threads", "inter_op_threads", "device_name"};

}  // namespace

void PlanScope(LoadPlan* plan) {
  plan->all_hyper = true;
  for (const char* field : kScopeFields) {
    if (std::find(plan->fields.begin(), plan->fields.end(), field) == plan->fields.end()) {
      plan->fields.emplace_back(field);
    }
  }
}

std::vector<std::string> DistinctOverRecords(const Selected& selected, const std::string& field) {
  const int index = FieldIndex(selected, field);
  absl::flat_hash_set<uint32_t> ids;
  for (const Record& record : selected.records) ids.insert(ValueId(selected, record, index));
  std::vector<std::string> values;
  values.reserve(ids.size());
  for (uint32_t id : ids) values.push_back(selected.dictionary[id]);
  return SortedDistinct(std::move(values));
}

std::vector<std::string> DistinctValues(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::string& field) {
  const int index = FieldIndex(selected, field);
  absl::flat_hash_set<uint32_t> ids;
  for (const auto& [record, value] : measured) ids.insert(ValueId(selected, *record, index));
  std::vector<std::string> values;
  for (uint32_t id : ids) values.push_back(selected.dictionary[id]);
  return SortedDistinct(std::move(values));
}

std::vector<std::string> DroppedFeatures(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& candidates, const std::vector<std::string>& features) {
  std::vector<std::string> dropped;
  for (const std::string& candidate : candidates) {
    if (std::find(features.begin(), features.end(), candidate) != features.end()) continue;
    std::vector<std::string> values = DistinctValues(selected, measured, candidate);
    values.erase(std::remove(values.begin(), values.end(), ""), values.end());
    if (values.size() >= 2) {
      dropped.push_back(absl::StrCat(candidate, ": not numeric (", absl::StrJoin(values, ", "),
                                     "); compare its values in a heat map panel or box plot "
                                     "groups"));
    } else if (candidate.find("_op_threads") == std::string::npos) {
      // A constant thread count is no news; a constant hyper-parameter is.
      dropped.push_back(absl::StrCat(candidate, ": constant over the selection"));
    }
  }
  return dropped;
}

v1::AnalysisScope ScopeOf(const Selected& selected, const v1::ResultSelection& selection,
                          const std::vector<std::string>& shown, const std::string& aggregation) {
  v1::AnalysisScope scope;
  std::vector<int64_t> sweep_ids(selection.sweep_ids().begin(), selection.sweep_ids().end());
  std::sort(sweep_ids.begin(), sweep_ids.end());
  sweep_ids.erase(std::unique(sweep_ids.begin(), sweep_ids.end()), sweep_ids.end());
  for (int64_t id : sweep_ids) scope.add_sweep_ids(id);
  *scope.mutable_where() = selection.where();
  for (std::string& platform : DistinctOverRecords(selected, "device_name")) {
    if (!platform.empty()) scope.add_platforms(std::move(platform));
  }
  scope.set_aggregation(aggregation);
  if (aggregation.empty()) return scope;

  std::vector<std::string> candidates = selected.all_keys;
  candidates.insert(candidates.end(), std::begin(kScopeFields), std::end(kScopeFields));
  for (const std::string& field : candidates) {
    if (std::find(shown.begin(), shown.end(), field) != shown.end()) continue;
    std::vector<std::string> values = DistinctOverRecords(selected, field);
    // A hyper-parameter one family lacks reads as "" there: not a value.
    values.erase(std::remove(values.begin(), values.end(), ""), values.end());
    if (values.size() < 2) continue;
    v1::FieldValues* aggregated = scope.add_aggregated();
    aggregated->set_field(field);
    for (std::string& value : values) aggregated->add_values(std::move(value));
  }
  return scope;
}

}  // namespace paradnn::server::analysis
