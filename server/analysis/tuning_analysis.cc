// The tuning analysis (analysis_kinds.h): the selected OK measurements
// grouped by configuration without its thread settings, then by setting
// (stack.threads, or the intra-op and inter-op counts a sweep of those
// params ran), each configuration's operator width from its family's
// counts; tuning_findings.h turns them into the paper's findings.
#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "model/family.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "platform/stack_findings.h"
#include "platform/thread_profile.h"
#include "server/analysis/analysis_kinds.h"
#include "server/analysis/analysis_scope.h"
#include "server/analysis/result_selection.h"
#include "server/analysis/speedup_verdicts.h"
#include "server/analysis/tuning_findings.h"

namespace paradnn::server::analysis {
namespace {

// The hyper-parameters that hold a thread setting: a configuration is
// matched without them.
const std::vector<std::string>& TuningThreadKeys() {
  static const std::vector<std::string>* const kKeys = new std::vector<std::string>{
      absl::StrCat(platform::kStackKeyPrefix, platform::kThreadsStackKey), "intra_op_threads",
      "inter_op_threads"};
  return *kKeys;
}

// The record's thread setting: its stack.threads value, else the counts it
// ran with as "intra=T,inter=I"; "" when it has neither.
std::string TuningSettingOf(const Selected& selected, const Record& record, bool has_threads_axis) {
  if (has_threads_axis) {
    const std::string& value = FieldValue(selected, record, TuningThreadKeys()[0]);
    if (!value.empty()) return value;
  }
  const std::string& intra = FieldValue(selected, record, "intra_op_threads");
  const std::string& inter = FieldValue(selected, record, "inter_op_threads");
  if (intra.empty() || inter.empty()) return "";
  return absl::StrCat("intra=", intra, ",inter=", inter);
}

int32_t TuningCount(const Selected& selected, const Record& record, const std::string& field) {
  int32_t count = 0;
  return absl::SimpleAtoi(FieldValue(selected, record, field), &count) ? count : 0;
}

// The model's average operator width from its family's counts; unset for a
// configuration without them (TorchScript) or without heavy operators.
std::optional<double> TuningWidthOf(const Selected& selected, const Record& record) {
  v1::ModelConfig config;
  config.set_family(FieldValue(selected, record, "family"));
  config.set_precision(FieldValue(selected, record, "precision"));
  config.set_optimizer(FieldValue(selected, record, "optimizer"));
  const model::FamilyDef* family = model::FindFamily(config.family());
  if (family == nullptr) return std::nullopt;
  for (const std::string& key : selected.all_keys) {
    const std::string& value = FieldValue(selected, record, key);
    if (value.empty() || absl::StartsWith(key, platform::kStackKeyPrefix)) continue;
    int64_t number = 0;
    if (model::FindParam(*family, key) != nullptr && absl::SimpleAtoi(value, &number)) {
      (*config.mutable_params())[key] = number;
    } else {
      (*config.mutable_options())[key] = value;
    }
  }
  absl::StatusOr<model::ModelSpec> spec = model::ParseModelSpec(config, model::FieldStyle::kProto);
  if (!spec.ok()) return std::nullopt;
  const double width = model::CountWork(*spec).width.average();
  if (!(width > 0)) return std::nullopt;
  return width;
}

// `label` without its "batch=N" word: the configurations of one batch group.
std::string TuningWithoutBatch(const std::string& label) {
  std::vector<std::string> words;
  for (absl::string_view word : absl::StrSplit(label, ' ')) {
    if (!absl::StartsWith(word, "batch=")) words.emplace_back(word);
  }
  return absl::StrJoin(words, " ");
}

// A new configuration's fields from its first record.
TuningConfigRuns NewTuningConfig(const Selected& selected, const Record& record, bool has_batch) {
  TuningConfigRuns config;
  config.config = ConfigLabel(selected, record, "");
  config.family = FieldValue(selected, record, "family");
  config.platform = FieldValue(selected, record, "device_name");
  config.batch_group = TuningWithoutBatch(config.config);
  int64_t batch = 0;
  if (has_batch && absl::SimpleAtoi(FieldValue(selected, record, "batch"), &batch)) {
    config.batch = batch;
  }
  config.width = TuningWidthOf(selected, record);
  return config;
}

// The measured records grouped by (platform, configuration), then setting.
std::vector<TuningConfigRuns> GroupTuningRuns(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured) {
  const std::vector<std::string>& keys = selected.all_keys;
  const bool has_threads_axis =
      std::find(keys.begin(), keys.end(), TuningThreadKeys()[0]) != keys.end();
  const bool has_batch = std::find(keys.begin(), keys.end(), "batch") != keys.end();
  // Grouped on dictionary ids: a label is built once per configuration.
  const int group_fields[] = {FieldIndex(selected, "fingerprint"), FieldIndex(selected, "family"),
                              FieldIndex(selected, "precision"), FieldIndex(selected, "optimizer")};
  std::map<std::array<uint32_t, 5>, size_t> index;  // -> position in `configs`
  std::vector<TuningConfigRuns> configs;
  std::vector<std::map<std::string, size_t>> setting_index;
  for (const auto& [record, value] : measured) {
    if (record->predicted) continue;  // the findings rest on measurements
    const std::string setting = TuningSettingOf(selected, *record, has_threads_axis);
    if (setting.empty()) continue;
    std::array<uint32_t, 5> key = {record->config};
    for (size_t i = 0; i < std::size(group_fields); ++i) {
      key[i + 1] = ValueId(selected, *record, group_fields[i]);
    }
    auto [at, added] = index.emplace(key, configs.size());
    if (added) {
      configs.push_back(NewTuningConfig(selected, *record, has_batch));
      setting_index.emplace_back();
    }
    TuningConfigRuns& config = configs[at->second];
    auto [slot, new_setting] = setting_index[at->second].emplace(setting, config.settings.size());
    if (new_setting) {
      TuningSettingRuns& runs = config.settings.emplace_back();
      runs.setting = setting;
      runs.intra_op_threads = TuningCount(selected, *record, "intra_op_threads");
      runs.inter_op_threads = TuningCount(selected, *record, "inter_op_threads");
    }
    config.settings[slot->second].runs.push_back(
        {absl::StrCat(FieldValue(selected, *record, "sweep"), "/",
                      FieldValue(selected, *record, "repeat")),
         value});
  }
  return configs;
}

}  // namespace

absl::StatusOr<v1::TuningResponse> Tuning(const KindContext& context,
                                          const v1::TuningRequest& request) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric(), "step_time");
  if (!metric.ok()) return metric.status();
  LoadPlan plan;
  plan.fields = {"family", "sweep", "repeat", "fingerprint", "device_name"};
  plan.metrics = {(*metric)->name};
  plan.config_without = TuningThreadKeys();
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  std::vector<std::string> shown = selected->all_keys;
  shown.insert(shown.end(), {"family", "precision", "optimizer", "intra_op_threads",
                             "inter_op_threads", "device_name"});
  context.outline->scope = ScopeOf(*selected, context.selection, shown,
                                   "median of each thread setting's repeats per configuration");
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();
  std::vector<TuningConfigRuns> configs = GroupTuningRuns(*selected, *measured);
  if (std::none_of(configs.begin(), configs.end(),
                   [](const TuningConfigRuns& c) { return c.settings.size() >= 2; })) {
    const auto& ids = context.selection.sweep_ids();
    return absl::InvalidArgumentError(
        absl::StrCat("analyze tuning needs results that vary stack.threads or "
                     "intra_op_threads/inter_op_threads; ",
                     ids.size() == 1 ? "sweep " : "sweeps ", absl::StrJoin(ids, ", "),
                     ids.size() == 1 ? " has" : " have", " none — paradnn tune makes such sweeps"));
  }
  return SummarizeTuning(configs, (*metric)->name, (*metric)->lower_is_better,
                         request.fdr() > 0 ? request.fdr() : kDefaultFdr);
}

}  // namespace paradnn::server::analysis
