#include "server/analysis/analyzer.h"

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
#include "common/stack_findings.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "nlohmann/json.hpp"
#include "server/analysis/analysis_math.h"
#include "server/analysis/analysis_scope.h"
#include "server/analysis/bisect_step.h"
#include "server/analysis/history_series.h"
#include "server/analysis/rerun_intervals.h"
#include "server/analysis/result_selection.h"
#include "server/analysis/speedup_verdicts.h"

namespace paradnn::server::analysis {
namespace {

// What every analysis reports beside its answer.
struct Outline {
  int64_t results = 0;    // records selected, any outcome
  int64_t predicted = 0;  // of those, predictions (include_predicted)
  v1::AnalysisScope scope;
};

void CountSelected(const Selected& selected, Outline* outline) {
  outline->results = static_cast<int64_t>(selected.records.size());
  outline->predicted = PredictedCount(selected);
}

// ---- The analyses -----------------------------------------------------------

absl::StatusOr<v1::HeatmapResponse> Heatmap(const db::Database* database,
                                            const v1::HeatmapRequest& request, Outline* outline) {
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
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, outline);
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
  outline->scope = ScopeOf(*selected, request.selection(), shown, "median of each cell");

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

absl::StatusOr<v1::SensitivityResponse> Sensitivity(const db::Database* database,
                                                    const v1::SensitivityRequest& request,
                                                    Outline* outline) {
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
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, outline);
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
  outline->scope =
      ScopeOf(*selected, request.selection(), features, "every result one point of the fit");
  return response;
}

int ElementBytes(const std::string& precision) { return precision == "float32" ? 4 : 2; }

absl::StatusOr<v1::RooflineResponse> Roofline(const db::Database* database,
                                              const v1::RooflineRequest& request,
                                              Outline* outline) {
  LoadPlan plan;
  plan.config_without = std::vector<std::string>{};
  plan.metrics = {"intensity"};
  plan.columns = {Column::kExecutedFlopsPerSec};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, outline);
  outline->scope = ScopeOf(*selected, request.selection(), {}, "");  // every job its own point

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

  for (int64_t platform_id : platform_ids) {
    absl::StatusOr<v1::Platform> platform = db::ReadPlatform(*database, platform_id);
    if (absl::IsNotFound(platform.status())) continue;
    if (!platform.ok()) return platform.status();
    v1::PlatformRoofs* roofs = response.add_roofs();
    roofs->set_platform_id(platform_id);
    roofs->set_device_name(platform->device_name());
    roofs->set_fingerprint(platform->fingerprint());
    for (const v1::MatmulRoof& roof : platform->matmul_roofs()) {
      v1::MatmulRoofValue* value = roofs->add_compute();
      value->set_dtype(roof.dtype());
      value->set_flops_per_sec(roof.flops_per_sec());
      value->set_datasheet_flops_per_sec(roof.datasheet_flops_per_sec());
      value->set_kernel(roof.kernel().empty() ? "matmul" : roof.kernel());
      value->set_theoretical_flops_per_sec(roof.theoretical_flops_per_sec());
    }
    for (v1::BandwidthRoof& level : BandwidthRoofs(*platform)) {
      *roofs->add_bandwidth() = std::move(level);
    }
  }
  if (request.include_ops()) {
    for (const Record* record : measured) {
      absl::StatusOr<std::optional<v1::Measurement>> measurement =
          db::ReadMeasurementOfJob(*database, record->job_id);
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

absl::StatusOr<v1::BoxplotResponse> Boxplot(const db::Database* database,
                                            const v1::BoxplotRequest& request, Outline* outline) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric());
  if (!metric.ok()) return metric.status();
  std::vector<std::string> group_by(request.group_by().begin(), request.group_by().end());
  if (group_by.empty()) group_by = {"family", "device_name"};
  LoadPlan plan;
  plan.fields = group_by;
  plan.metrics = {(*metric)->name};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, outline);
  outline->scope = ScopeOf(*selected, request.selection(), group_by, "pooled into each box");
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

// The metric of one configuration on one side of `field` (the median over
// its repeats).
struct ConfigGroup {
  std::string side;      // the value of `field`
  std::string label;     // ConfigLabel without `field`
  const Record* record;  // one of the group's records
  double median;
  bool predicted;  // one of its records is a prediction
  std::vector<std::pair<const Record*, double>> members;
};

// Groups `measured` by (value of `field`, configuration without it) on
// dictionary ids; labels are built once per group, not per record.
std::vector<ConfigGroup> GroupByConfig(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::string& field) {
  const int side_index = FieldIndex(selected, field);
  const int family = FieldIndex(selected, "family");
  const int precision = FieldIndex(selected, "precision");
  const int optimizer = FieldIndex(selected, "optimizer");
  using Key = std::array<uint32_t, 5>;  // side, configuration, family, precision, optimizer
  struct Members {
    const Record* first = nullptr;
    std::vector<double> values;
    bool predicted = false;
    std::vector<std::pair<const Record*, double>> members;
  };
  absl::flat_hash_map<Key, Members> groups;
  for (const auto& [record, value] : measured) {
    const Key key = {ValueId(selected, *record, side_index), record->config,
                     ValueId(selected, *record, family), ValueId(selected, *record, precision),
                     ValueId(selected, *record, optimizer)};
    Members& group = groups[key];
    if (group.first == nullptr) group.first = record;
    group.values.push_back(value);
    group.predicted = group.predicted || record->predicted;
    group.members.emplace_back(record, value);
  }
  std::vector<ConfigGroup> out;
  out.reserve(groups.size());
  for (auto& [key, group] : groups) {
    out.push_back({selected.dictionary[key[0]], ConfigLabel(selected, *group.first, field),
                   group.first, Median(std::move(group.values)), group.predicted,
                   std::move(group.members)});
  }
  // Hash order is not stable across runs; the label order is.
  std::sort(out.begin(), out.end(), [](const ConfigGroup& a, const ConfigGroup& b) {
    return std::tie(a.label, a.side) < std::tie(b.label, b.side);
  });
  return out;
}

// The keys a configuration is matched without when `field` differs
// between the sides: the field, and for what a stack axis ran (blas_core)
// also the setting it asked for (stack.blas_core).
std::vector<std::string> ConfigWithout(const std::string& field) {
  std::vector<std::string> keys = {field};
  if (common::FindStackSettingInfo(field) != nullptr) {
    keys.push_back(absl::StrCat(common::kStackKeyPrefix, field));
  }
  return keys;
}

// What a configuration is matched on, with the compared `field`: every
// hyper-parameter, family, precision and optimizer. What else varies was
// combined by the medians. A device kind names its devices.
std::vector<std::string> ConfigFields(const Selected& selected, const std::string& field) {
  std::vector<std::string> fields = selected.all_keys;
  fields.insert(fields.end(), {field, "family", "precision", "optimizer"});
  if (field == "device_kind") fields.emplace_back("device_name");
  return fields;
}

// The two values of the compared field, baseline first.
struct SpeedupSides {
  std::string baseline;
  std::string candidate;
};

// The sides the request names, or when it leaves one out, the only two
// values of the field over `measured`; InvalidArgument when there are not
// exactly two.
absl::StatusOr<SpeedupSides> ChooseSpeedupSides(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const v1::SpeedupRequest& request) {
  SpeedupSides sides{request.baseline(), request.candidate()};
  if (!sides.baseline.empty() && !sides.candidate.empty()) return sides;
  std::vector<std::string> distinct = DistinctValues(selected, measured, request.field());
  if (distinct.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("speedup needs baseline and candidate values of '", request.field(),
                     "' (the selected results have ", distinct.size(), ": ",
                     absl::StrJoin(distinct, ", "), ")"));
  }
  // float32 is the natural baseline of a precision comparison.
  const bool swap = request.field() == "precision" && distinct[1] == "float32";
  sides.baseline = swap ? distinct[1] : distinct[0];
  sides.candidate = swap ? distinct[0] : distinct[1];
  return sides;
}

// The re-run spread of one run on each platform (fingerprint) at each
// record's step time, for sides measured once.
class RerunSpreads {
 public:
  RerunSpreads(const db::Database* database, const Selected& selected,
               const std::vector<std::pair<const Record*, double>>& step_times)
      : database_(database),
        selected_(selected),
        fingerprint_(FieldIndex(selected, "fingerprint")),
        step_times_(step_times.begin(), step_times.end()) {}

  // 0 when the record has no step time or its platform's model is unreadable.
  double Of(const Record& record) {
    auto step = step_times_.find(&record);
    if (step == step_times_.end()) return 0;
    // The field names a stack axis run as "<fingerprint>+<core>/<capability>";
    // the platform's results are stored under the fingerprint alone.
    const std::string& field = selected_.dictionary[ValueId(selected_, record, fingerprint_)];
    const std::string fingerprint = field.substr(0, field.find('+'));
    auto it = models_.find(fingerprint);
    if (it == models_.end()) {
      absl::StatusOr<PlatformRerunModel> model = LoadRerunModel(*database_, fingerprint);
      std::optional<PlatformRerunModel> loaded;
      if (model.ok()) loaded = *std::move(model);
      it = models_.emplace(fingerprint, std::move(loaded)).first;
    }
    if (!it->second.has_value()) return 0;
    return it->second->model.SpreadAt(step->second, 0, it->second->GroupOf(record.job_id)).rel_sd;
  }

 private:
  const db::Database* database_;
  const Selected& selected_;
  int fingerprint_;
  absl::flat_hash_map<const Record*, double> step_times_;
  std::map<std::string, std::optional<PlatformRerunModel>> models_;
};

// The round a run belongs to: its sweep and repeat (runs of both sides in
// one round ran close in time), or only its repeat when the sweeps are what
// is compared.
std::string RoundOf(const Selected& selected, const Record& record, const std::string& field) {
  const std::string repeat = FieldValue(selected, record, "repeat");
  return field == "sweep" ? repeat
                          : absl::StrCat(FieldValue(selected, record, "sweep"), "/", repeat);
}

// One row per (side, configuration) for JoinSpeedup; `config_record` gets
// one record of each configuration label, for the sensitivity after it.
std::vector<SpeedupRow> SpeedupRows(const Selected& selected,
                                    const std::vector<std::pair<const Record*, double>>& measured,
                                    const v1::SpeedupRequest& request, RerunSpreads* spreads,
                                    std::map<std::string, const Record*>* config_record) {
  std::vector<SpeedupRow> rows;
  for (const ConfigGroup& group : GroupByConfig(selected, measured, request.field())) {
    SpeedupRow row;
    row.side = group.side;
    row.config = group.label;
    row.params = group.record->params;
    if (!request.color_by().empty()) {
      row.color_value = FieldValue(selected, *group.record, request.color_by());
    }
    row.metric = group.median;
    row.predicted = group.predicted;
    for (const auto& [record, value] : group.members) {
      if (record->predicted) continue;
      row.runs.push_back({RoundOf(selected, *record, request.field()), value});
      row.rerun_rel_sd = std::max(row.rerun_rel_sd, spreads->Of(*record));
    }
    config_record->emplace(row.config, group.record);
    rows.push_back(std::move(row));
  }
  return rows;
}

// How the speedup depends on the hyper-parameters (log2 both sides, as
// the paper's Fig. 8-10 (a)). Too few points or no varying feature leaves
// it empty rather than failing the join.
void FitSpeedupSensitivity(const Selected& selected,
                           const std::map<std::string, const Record*>& config_record,
                           const std::string& field, v1::SpeedupResponse* response) {
  std::vector<std::pair<const Record*, double>> points;
  for (const v1::SpeedupPoint& point : response->points()) {
    points.emplace_back(config_record.at(point.config()), point.speedup());
  }
  std::vector<std::string> features = VaryingNumericFields(selected, points, selected.all_keys);
  features.erase(std::remove(features.begin(), features.end(), field), features.end());
  if (features.empty()) return;
  absl::StatusOr<SensitivityInput> input = SensitivityPoints(selected, points, features);
  if (!input.ok()) return;
  input->log2_features = true;
  input->log2_target = true;
  absl::StatusOr<v1::SensitivityResponse> sensitivity = FitSensitivity(*input);
  if (!sensitivity.ok()) return;
  sensitivity->set_metric("speedup");
  *response->mutable_sensitivity() = *std::move(sensitivity);
}

absl::StatusOr<v1::SpeedupResponse> Speedup(const db::Database* database,
                                            const v1::SpeedupRequest& request, Outline* outline) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric(), "examples_per_sec");
  if (!metric.ok()) return metric.status();
  if (request.field().empty()) {
    return absl::InvalidArgumentError(
        "speedup needs the field that differs between the two sides (e.g. device_kind, worker, "
        "precision, libtorch_version, blas_backend)");
  }
  LoadPlan plan;
  plan.fields = {request.field()};
  if (!request.color_by().empty()) plan.fields.push_back(request.color_by());
  // What the verdicts need: each run's round and platform, and step time.
  for (const char* field : {"sweep", "repeat", "fingerprint"}) {
    if (field != request.field()) plan.fields.emplace_back(field);
  }
  plan.all_hyper = true;
  plan.metrics = {(*metric)->name, "step_time"};
  plan.config_without = ConfigWithout(request.field());
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  outline->scope = ScopeOf(*selected, request.selection(), ConfigFields(*selected, request.field()),
                           "median of each configuration's repeats per side");
  if (!request.color_by().empty()) {
    if (absl::Status s = CheckField("color_by", request.color_by(), selected->all_keys); !s.ok()) {
      return s;
    }
  }
  CountSelected(*selected, outline);
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();
  absl::StatusOr<SpeedupSides> sides = ChooseSpeedupSides(*selected, *measured, request);
  if (!sides.ok()) return sides.status();

  absl::StatusOr<const MetricInfo*> step_time = FindMetric("step_time", "step_time");
  if (!step_time.ok()) return step_time.status();
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> step_times =
      MeasuredRecords(*selected, **step_time);
  if (!step_times.ok()) return step_times.status();
  RerunSpreads spreads(database, *selected, *step_times);
  std::map<std::string, const Record*> config_record;
  const std::vector<SpeedupRow> rows =
      SpeedupRows(*selected, *measured, request, &spreads, &config_record);
  absl::StatusOr<v1::SpeedupResponse> response = JoinSpeedup(
      rows, request.field(), sides->baseline, sides->candidate, (*metric)->lower_is_better);
  if (!response.ok()) return response.status();
  AddSpeedupVerdicts(rows, (*metric)->lower_is_better,
                     request.fdr() > 0 ? request.fdr() : kDefaultFdr, &*response);
  response->set_metric((*metric)->name);
  response->set_color_by(request.color_by());
  FitSpeedupSensitivity(*selected, config_record, request.field(), &*response);
  return response;
}

absl::StatusOr<v1::ScalingResponse> Scaling(const db::Database* database,
                                            const v1::ScalingRequest& request, Outline* outline) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric(), "examples_per_sec");
  if (!metric.ok()) return metric.status();
  const std::string field = request.field().empty() ? "intra_op_threads" : request.field();
  LoadPlan plan;
  plan.fields = {field};
  plan.metrics = {(*metric)->name};
  plan.config_without = ConfigWithout(field);
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, outline);
  outline->scope = ScopeOf(*selected, request.selection(), ConfigFields(*selected, field),
                           "median of each configuration's repeats per level");
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();
  std::vector<ScalingRow> rows;
  for (const ConfigGroup& group : GroupByConfig(*selected, *measured, field)) {
    rows.push_back({group.side, group.label, group.median, group.predicted});
  }
  absl::StatusOr<v1::ScalingResponse> response =
      SummarizeScaling(rows, field, (*metric)->lower_is_better);
  if (!response.ok()) return response.status();
  response->set_metric((*metric)->name);
  return response;
}

}  // namespace

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

// The stack settings a history change is named by.
constexpr const char* kHistoryStackFields[] = {"libtorch_version", "blas_backend", "blas_core",
                                               "aten_capability"};

absl::StatusOr<v1::HistoryResponse> History(const db::Database* database,
                                            const v1::HistoryRequest& request, Outline* outline) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric(), "step_time");
  if (!metric.ok()) return metric.status();
  LoadPlan plan;
  plan.fields = {"device_kind", "device_name", "fingerprint",
                 "sweep",       "repeat",      "intra_op_threads"};
  for (const char* field : kHistoryStackFields) plan.fields.emplace_back(field);
  plan.all_hyper = true;
  plan.metrics = {(*metric)->name};
  plan.config_without = std::vector<std::string>{};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, outline);
  std::vector<std::string> shown = ConfigFields(*selected, "fingerprint");
  shown.insert(shown.end(), {"device_name", "sweep", "repeat", "intra_op_threads"});
  outline->scope =
      ScopeOf(*selected, request.selection(), shown, "every run, in sweep and repeat order");
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();
  std::vector<HistoryRun> runs;
  for (const auto& [record, value] : *measured) {
    if (record->predicted) continue;
    HistoryRun& run = runs.emplace_back();
    run.config = absl::StrCat(ConfigLabel(*selected, *record, "sweep"),
                              " threads=", FieldValue(*selected, *record, "intra_op_threads"));
    run.hardware = absl::StrCat(FieldValue(*selected, *record, "device_kind"), " ",
                                FieldValue(*selected, *record, "device_name"));
    run.fingerprint = FieldValue(*selected, *record, "fingerprint");
    (void)absl::SimpleAtoi(FieldValue(*selected, *record, "sweep"), &run.sweep_id);
    (void)absl::SimpleAtoi(FieldValue(*selected, *record, "repeat"), &run.repeat);
    run.job_id = record->job_id;
    run.value = value;
    for (const char* field : kHistoryStackFields) {
      run.stack[field] = FieldValue(*selected, *record, field);
    }
  }
  ChangePointOptions options;
  if (request.min_points_each_side() > 0) {
    options.min_points_each_side = static_cast<size_t>(request.min_points_each_side());
  }
  if (request.significance() > 0) options.significance = request.significance();
  v1::HistoryResponse response = BuildHistory(std::move(runs), options);
  response.set_metric((*metric)->name);
  return response;
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
