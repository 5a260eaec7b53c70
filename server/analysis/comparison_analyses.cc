// The comparisons: speedup of one value of a field over another (with
// intervals and verdicts), scaling along a field, and one configuration's
// history across stacks (analysis_kinds.h).
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
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "nlohmann/json.hpp"
#include "platform/stack_env.h"
#include "platform/stack_findings.h"
#include "server/analysis/analysis_kinds.h"
#include "server/analysis/analysis_math.h"
#include "server/analysis/analysis_scope.h"
#include "server/analysis/bisect_step.h"
#include "server/analysis/history_series.h"
#include "server/analysis/rerun_intervals.h"
#include "server/analysis/result_selection.h"
#include "server/analysis/speedup_verdicts.h"

namespace paradnn::server::analysis {

namespace {

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
  if (platform::FindStackSettingInfo(field) != nullptr) {
    keys.push_back(absl::StrCat(platform::kStackKeyPrefix, field));
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
  if (absl::StartsWith(request.field(), platform::kStackKeyPrefix)) {
    // A stack value as the user spells it names the configurations stored
    // under its one spelling ("inter=1,intra=2" finds "intra=2,inter=1").
    const absl::string_view key =
        absl::string_view(request.field())
            .substr(std::char_traits<char>::length(platform::kStackKeyPrefix));
    if (!sides.baseline.empty())
      sides.baseline = platform::CanonicalStackValue(key, sides.baseline);
    if (!sides.candidate.empty())
      sides.candidate = platform::CanonicalStackValue(key, sides.candidate);
  }
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

}  // namespace

absl::StatusOr<v1::SpeedupResponse> Speedup(const KindContext& context,
                                            const v1::SpeedupRequest& request) {
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
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  context.outline->scope =
      ScopeOf(*selected, context.selection, ConfigFields(*selected, request.field()),
              "median of each configuration's repeats per side");
  if (!request.color_by().empty()) {
    if (absl::Status s = CheckField("color_by", request.color_by(), selected->all_keys); !s.ok()) {
      return s;
    }
  }
  CountSelected(*selected, context.outline);
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
  RerunSpreads spreads(context.database, *selected, *step_times);
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

absl::StatusOr<v1::ScalingResponse> Scaling(const KindContext& context,
                                            const v1::ScalingRequest& request) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric(), "examples_per_sec");
  if (!metric.ok()) return metric.status();
  const std::string field = request.field().empty() ? "intra_op_threads" : request.field();
  LoadPlan plan;
  plan.fields = {field};
  plan.metrics = {(*metric)->name};
  plan.config_without = ConfigWithout(field);
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  context.outline->scope = ScopeOf(*selected, context.selection, ConfigFields(*selected, field),
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

// The stack settings a history change is named by.
constexpr const char* kHistoryStackFields[] = {"libtorch_version", "blas_backend", "blas_core",
                                               "aten_capability"};

absl::StatusOr<v1::HistoryResponse> History(const KindContext& context,
                                            const v1::HistoryRequest& request) {
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
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  std::vector<std::string> shown = ConfigFields(*selected, "fingerprint");
  shown.insert(shown.end(), {"device_name", "sweep", "repeat", "intra_op_threads"});
  context.outline->scope =
      ScopeOf(*selected, context.selection, shown, "every run, in sweep and repeat order");
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

}  // namespace paradnn::server::analysis
