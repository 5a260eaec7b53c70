// The analyses of one sweep's results (or several, pooled): heat maps,
// sensitivity, rooflines and box plots (analysis_kinds.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "nlohmann/json.hpp"
#include "platform/silicon_peak.h"
#include "platform/stack_findings.h"
#include "server/analysis/analysis_kinds.h"
#include "server/analysis/analysis_math.h"
#include "server/analysis/analysis_scope.h"
#include "server/analysis/bisect_step.h"
#include "server/analysis/communication_roofs.h"
#include "server/analysis/history_series.h"
#include "server/analysis/rerun_intervals.h"
#include "server/analysis/result_selection.h"
#include "server/analysis/speedup_verdicts.h"

namespace paradnn::server::analysis {

void CountSelected(const Selected& selected, Outline* outline) {
  outline->results = static_cast<int64_t>(selected.records.size());
  outline->predicted = PredictedCount(selected);
}

absl::StatusOr<v1::HeatmapResponse> Heatmap(const KindContext& context,
                                            const v1::HeatmapRequest& request) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric());
  if (!metric.ok()) return metric.status();
  if (request.x().empty() || request.y().empty()) {
    return absl::InvalidArgumentError("heat map needs both axes: x and y (fields)");
  }
  if (request.x() == request.y() || request.x() == request.panel() ||
      request.y() == request.panel()) {
    return absl::InvalidArgumentError("heat map x, y and panel must be different fields");
  }
  LoadPlan plan;
  plan.fields = {request.x(), request.y()};
  if (!request.panel().empty()) plan.fields.push_back(request.panel());
  plan.metrics = {(*metric)->name};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  if (request.panel() != "family" && request.x() != "family" && request.y() != "family") {
    // Families have different hyper-parameters: one grid would mix cells of
    // unlike models and leave blank the columns only one family has.
    if (std::vector<std::string> families = DistinctOverRecords(*selected, "family");
        families.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the selection holds results of ", families.size(), " families (",
          absl::StrJoin(families, ", "),
          "); a heat map of them in one grid mixes unlike models: panel by family (--panel "
          "family) or select one (--where family=",
          families.front(), ")"));
    }
  }
  std::vector<std::string> shown = {request.x(), request.y()};
  if (!request.panel().empty()) shown.push_back(request.panel());
  context.outline->scope = ScopeOf(*selected, context.selection, shown, "median of each cell");

  // Cells grouped on dictionary ids; strings only once per cell.
  const int x = FieldIndex(*selected, request.x());
  const int y = FieldIndex(*selected, request.y());
  const int panel = request.panel().empty() ? -1 : FieldIndex(*selected, request.panel());
  absl::flat_hash_map<std::array<uint32_t, 3>, HeatmapTally> cells;
  for (const Record& record : selected->records) {
    double value = 0;
    if (record.outcome == v1::OK) {
      std::optional<double> metric_value = MetricValue(*selected, record, (*metric)->name);
      if (!metric_value) continue;  // e.g. no roof for MFU: no value, not a failure
      value = *metric_value;
    }
    const std::array<uint32_t, 3> key = {panel < 0 ? 0 : ValueId(*selected, record, panel),
                                         ValueId(*selected, record, y),
                                         ValueId(*selected, record, x)};
    HeatmapTally& tally = cells[key];
    CountInto(&tally, record.outcome, value);
    if (record.predicted && record.outcome == v1::OK) {
      ++tally.predicted;
      if (auto interval = PredictedInterval(record, (*metric)->name, value)) {
        tally.predicted_low.push_back(interval->first);
        tally.predicted_high.push_back(interval->second);
      }
    }
  }
  std::vector<HeatmapTally> tallies;
  tallies.reserve(cells.size());
  for (auto& [key, tally] : cells) {
    tally.panel = selected->dictionary[key[0]];
    tally.y = selected->dictionary[key[1]];
    tally.x = selected->dictionary[key[2]];
    tallies.push_back(std::move(tally));
  }
  absl::StatusOr<v1::HeatmapResponse> response =
      PivotHeatmapTallies(tallies, request.x(), request.y(), request.panel() == "family");
  if (!response.ok()) return response.status();
  response->set_metric((*metric)->name);
  response->set_unit((*metric)->unit);
  response->set_x(request.x());
  response->set_y(request.y());
  response->set_panel(request.panel());
  return response;
}

// The numeric fields that vary over `measured` among `candidates`.
std::vector<std::string> VaryingNumericFields(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& candidates) {
  std::vector<std::string> varying;
  for (const std::string& field : candidates) {
    std::vector<std::string> distinct = DistinctValues(selected, measured, field);
    if (distinct.size() > 1 && AllNumeric(distinct)) varying.push_back(field);
  }
  return varying;
}

absl::StatusOr<SensitivityInput> SensitivityPoints(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& features) {
  SensitivityInput input;
  input.feature_names = features;
  std::vector<int> indexes;
  indexes.reserve(features.size());
  for (const std::string& feature : features) indexes.push_back(FieldIndex(selected, feature));
  // Each distinct value parsed once (NaN: not a number).
  std::vector<double> numbers(selected.dictionary.size());
  for (size_t id = 0; id < numbers.size(); ++id) {
    if (!absl::SimpleAtod(selected.dictionary[id], &numbers[id])) {
      numbers[id] = std::numeric_limits<double>::quiet_NaN();
    }
  }
  input.features.reserve(measured.size());
  input.target.reserve(measured.size());
  for (const auto& [record, value] : measured) {
    std::vector<double> row;
    row.reserve(features.size());
    for (size_t f = 0; f < features.size(); ++f) {
      const uint32_t id = ValueId(selected, *record, indexes[f]);
      if (std::isnan(numbers[id])) {
        const std::string& text = selected.dictionary[id];
        return absl::InvalidArgumentError(absl::StrCat(
            "feature '", features[f], "' is not numeric (job ", record->job_id, " has '", text,
            "'); sensitivity needs numeric features: fix categorical ones with "
            "selection.where (e.g. --where ",
            features[f], "=", text, ")"));
      }
      row.push_back(numbers[id]);
    }
    input.features.push_back(std::move(row));
    input.target.push_back(value);
  }
  return input;
}

namespace {

// With predicted points in the fit: the same fit over the measured points
// alone, so that a reader sees how much the weights owe to the model. Left
// out when the measured points alone cannot be fitted (too few, or a
// feature constant over them).
void FitMeasuredOnly(const Selected& selected,
                     const std::vector<std::pair<const Record*, double>>& points,
                     const std::vector<std::string>& features, const SensitivityInput& full,
                     v1::SensitivityResponse* response) {
  std::vector<std::pair<const Record*, double>> measured;
  for (const auto& point : points) {
    if (!point.first->predicted) measured.push_back(point);
  }
  response->set_predicted_points(static_cast<int64_t>(points.size() - measured.size()));
  if (measured.size() == points.size() || measured.empty()) return;
  absl::StatusOr<SensitivityInput> input = SensitivityPoints(selected, measured, features);
  if (!input.ok()) return;
  input->log2_features = full.log2_features;
  input->log2_target = full.log2_target;
  input->interactions = full.interactions;
  absl::StatusOr<v1::SensitivityResponse> fit = FitSensitivity(*input);
  if (!fit.ok()) return;
  fit->set_metric(response->metric());
  *response->mutable_measured_only() = *std::move(fit);
}

}  // namespace

absl::StatusOr<v1::SensitivityResponse> Sensitivity(const KindContext& context,
                                                    const v1::SensitivityRequest& request) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric());
  if (!metric.ok()) return metric.status();
  LoadPlan plan;
  plan.fields.assign(request.features().begin(), request.features().end());
  plan.all_hyper = request.features().empty();
  // Threads vary like hyper-parameters when a sweep varies them.
  if (plan.all_hyper) plan.fields = {"intra_op_threads", "inter_op_threads"};
  plan.metrics = {(*metric)->name};
  const bool chosen_features = request.features().empty();
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();

  std::vector<std::string> features(request.features().begin(), request.features().end());
  std::vector<std::string> dropped;
  if (chosen_features) {
    std::vector<std::string> candidates = selected->all_keys;
    candidates.insert(candidates.end(), {"intra_op_threads", "inter_op_threads"});
    features = VaryingNumericFields(*selected, *measured, candidates);
    dropped = DroppedFeatures(*selected, *measured, candidates, features);
    if (features.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no numeric hyper-parameter varies over the ", measured->size(),
          " measured results; name features explicitly (", FieldNames(selected->all_keys), ")"));
    }
  }
  absl::StatusOr<SensitivityInput> input = SensitivityPoints(*selected, *measured, features);
  if (!input.ok()) return input.status();
  input->log2_features = request.log2_features();
  input->log2_target = request.log2_target();
  input->interactions = request.interactions();
  absl::StatusOr<v1::SensitivityResponse> response = FitSensitivity(*input);
  if (!response.ok()) return response.status();
  response->set_metric((*metric)->name);
  for (std::string& why : dropped) response->add_dropped(std::move(why));
  FitMeasuredOnly(*selected, *measured, features, *input, &*response);
  context.outline->scope =
      ScopeOf(*selected, context.selection, features, "every result one point of the fit");
  return response;
}

namespace {

int ElementBytes(const std::string& precision) { return precision == "float32" ? 4 : 2; }

}  // namespace

namespace {

// Each of `platform_ids`' calibrated compute and memory roofs.
absl::Status AddPlatformRoofs(const db::Database& database, const std::set<int64_t>& platform_ids,
                              v1::RooflineResponse* response) {
  for (int64_t platform_id : platform_ids) {
    absl::StatusOr<v1::Platform> platform = db::ReadPlatform(database, platform_id);
    if (absl::IsNotFound(platform.status())) continue;
    if (!platform.ok()) return platform.status();
    v1::PlatformRoofs* roofs = response->add_roofs();
    roofs->set_platform_id(platform_id);
    roofs->set_device_name(platform->device_name());
    roofs->set_fingerprint(platform->fingerprint());
    for (const v1::MatmulRoof& roof : platform->matmul_roofs()) {
      v1::MatmulRoofValue* value = roofs->add_compute();
      value->set_dtype(roof.dtype());
      value->set_flops_per_sec(roof.flops_per_sec());
      value->set_datasheet_flops_per_sec(roof.datasheet_flops_per_sec());
      value->set_kernel(platform::RoofKernel(roof));
      value->set_theoretical_flops_per_sec(roof.theoretical_flops_per_sec());
    }
    for (v1::BandwidthRoof& level : BandwidthRoofs(*platform)) {
      *roofs->add_bandwidth() = std::move(level);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::RooflineResponse> Roofline(const KindContext& context,
                                              const v1::RooflineRequest& request) {
  LoadPlan plan;
  plan.config_without = std::vector<std::string>{};
  plan.metrics = {"intensity"};
  plan.columns = {Column::kExecutedFlopsPerSec};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  context.outline->scope =
      ScopeOf(*selected, context.selection, {}, "");  // every job its own point

  v1::RooflineResponse response;
  std::set<int64_t> platform_ids;
  std::vector<const Record*> measured;
  for (const Record& record : selected->records) {
    if (record.predicted) {
      response.set_predicted_left_out(response.predicted_left_out() + 1);
      continue;
    }
    std::optional<double> intensity = MetricValue(*selected, record, "intensity");
    std::optional<double> flops = ColumnValue(*selected, record, Column::kExecutedFlopsPerSec);
    if (record.outcome != v1::OK || !intensity || !flops) continue;
    v1::RooflinePoint* point = response.add_points();
    point->set_job_id(record.job_id);
    point->set_label(ConfigLabel(*selected, record, ""));
    point->set_precision(FieldValue(*selected, record, "precision"));
    point->set_platform_id(record.platform_id);
    point->set_intensity(*intensity);
    point->set_flops_per_sec(*flops);
    if (record.platform_id > 0) platform_ids.insert(record.platform_id);
    measured.push_back(&record);
  }
  if (measured.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no selected result has executed FLOPs and bytes per step (",
                     selected->records.size(), " results selected)"));
  }

  if (absl::Status s = AddPlatformRoofs(*context.database, platform_ids, &response); !s.ok()) {
    return s;
  }
  // Data-parallel jobs under their platform's communication roof.
  if (absl::Status s = AddCommunicationCeilings(*context.database, &response); !s.ok()) return s;
  if (request.include_ops()) {
    for (const Record* record : measured) {
      absl::StatusOr<std::optional<v1::Measurement>> measurement =
          db::ReadMeasurementOfJob(*context.database, record->job_id);
      if (!measurement.ok()) return measurement.status();
      if (!measurement->has_value()) continue;
      for (const v1::OpProfile& op : (*measurement)->op_profile()) {
        const double bytes = InputBytesFromShapes(
            op.input_shapes(), ElementBytes(FieldValue(*selected, *record, "precision")));
        if (op.flops() <= 0 || op.self_seconds() <= 0 || bytes <= 0) continue;
        v1::RooflinePoint* point = response.add_points();
        point->set_job_id(record->job_id);
        point->set_label(absl::StrCat(op.name(), " ", op.input_shapes()));
        point->set_op(true);
        point->set_precision(FieldValue(*selected, *record, "precision"));
        point->set_platform_id(record->platform_id);
        point->set_intensity(op.flops() / bytes);
        point->set_flops_per_sec(op.flops() / op.self_seconds());
      }
    }
  }
  return response;
}

absl::StatusOr<v1::BoxplotResponse> Boxplot(const KindContext& context,
                                            const v1::BoxplotRequest& request) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric());
  if (!metric.ok()) return metric.status();
  std::vector<std::string> group_by(request.group_by().begin(), request.group_by().end());
  if (group_by.empty()) group_by = {"family", "device_name"};
  LoadPlan plan;
  plan.fields = group_by;
  plan.metrics = {(*metric)->name};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  context.outline->scope = ScopeOf(*selected, context.selection, group_by, "pooled into each box");
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();

  std::vector<int> indexes;
  indexes.reserve(group_by.size());
  for (const std::string& field : group_by) indexes.push_back(FieldIndex(*selected, field));
  // Each box's values and how many of them are predicted.
  absl::flat_hash_map<std::vector<uint32_t>, std::pair<std::vector<double>, int64_t>> by_ids;
  for (const auto& [record, value] : *measured) {
    std::vector<uint32_t> ids;
    ids.reserve(indexes.size());
    for (int index : indexes) ids.push_back(ValueId(*selected, *record, index));
    auto& box = by_ids[ids];
    box.first.push_back(value);
    if (record->predicted) ++box.second;
  }
  // By name, for a stable order.
  std::map<std::string, std::pair<std::vector<double>, int64_t>> groups;
  for (auto& [ids, box] : by_ids) {
    std::vector<std::string> names;
    for (uint32_t id : ids) names.push_back(selected->dictionary[id]);
    groups[absl::StrJoin(names, " / ")] = std::move(box);
  }
  v1::BoxplotResponse response;
  response.set_metric((*metric)->name);
  response.set_unit((*metric)->unit);
  for (const std::string& field : group_by) response.add_group_by(field);
  for (auto& [name, box] : groups) {
    v1::BoxplotGroup* group = response.add_groups();
    *group = SummarizeBox(name, std::move(box.first));
    group->set_predicted(box.second);
  }
  return response;
}

}  // namespace paradnn::server::analysis
