#include "model/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/run_settings.h"
#include "model/families/torchscript.h"
#include "model/param_values.h"
#include "model/sweep_text.h"
#include "platform/stack_env.h"
#include "platform/stack_findings.h"
#include "platform/thread_profile.h"

namespace paradnn::model {
namespace {

constexpr const char* kDevices[] = {"cpu", "cuda", "tpu"};
constexpr const char* kPrecisions[] = {"float32", "bfloat16", "float16", "mixed_bf16",
                                       "mixed_fp16"};
constexpr const char* kOptimizers[] = {"rmsprop", "sgd", "momentum"};

// A sweep file is kept for the record, not parsed by the coordinator; this
// bounds what one client can make it store.
constexpr size_t kMaxSourceTextBytes = 1 << 20;

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

template <size_t N>
std::string JoinNames(const char* const (&names)[N], const char* separator) {
  return absl::StrJoin(std::begin(names), std::end(names), separator);
}

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kSaturated / b) return kSaturated;
  return a * b;
}

std::string ParamNames(const FamilyDef& family, bool required_only) {
  std::vector<absl::string_view> names;
  for (const ParamRule& p : family.params) {
    if (!required_only || p.required) names.push_back(p.name);
  }
  return absl::StrJoin(names, ", ");
}

std::string OptionNames(const FamilyDef& family) {
  std::vector<absl::string_view> names;
  for (const OptionRule& o : family.options) names.push_back(o.name);
  return absl::StrJoin(names, ", ");
}

// Validates one option's value list and returns how many values it takes.
absl::StatusOr<int64_t> CheckOption(const v1::StringValues& list, const OptionRule& rule,
                                    const std::string& path) {
  if (list.values().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": empty list; give at least one of ", AllowedOptionValues(rule)));
  }
  // A free-text option (blocks) has millions of valid values, so a client
  // can send a long list of distinct ones: find repeats in linear time.
  std::unordered_map<std::string_view, int> first_index;
  for (int i = 0; i < list.values_size(); ++i) {
    const std::string item_path = absl::StrCat(path, "[", i, "]");
    if (absl::Status s = CheckOptionValue(item_path, list.values(i), rule); !s.ok()) return s;
    const auto [it, inserted] = first_index.emplace(list.values(i), i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(item_path, ": ", Quote(list.values(i)),
                                                     " is repeated (also at [", it->second, "])"));
    }
  }
  return static_cast<int64_t>(list.values_size());
}

absl::Status CheckName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("name: missing; every sweep needs a name");
  if (name.size() > kMaxSweepNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: ", name.size(), " bytes; at most ", kMaxSweepNameBytes));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    // Bytes >= 0x80 are UTF-8 (protobuf has checked the encoding).
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat("name: control character at byte ", i, " in ",
                                                     Quote(name), "; use printable text"));
    }
  }
  return absl::OkStatus();
}

template <size_t N>
absl::Status CheckNameList(const char* field,
                           const google::protobuf::RepeatedPtrField<std::string>& list,
                           const char* const (&allowed)[N]) {
  for (int i = 0; i < list.size(); ++i) {
    if (!absl::c_linear_search(allowed, absl::string_view(list[i]))) {
      return absl::InvalidArgumentError(absl::StrCat(field, "[", i, "]: ", Quote(list[i]),
                                                     " is not one of ", JoinNames(allowed, "|")));
    }
    for (int j = 0; j < i; ++j) {
      if (list[j] == list[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, "[", i, "]: ", Quote(list[i]), " is repeated (also at [", j, "])"));
      }
    }
  }
  return absl::OkStatus();
}

// Only family torchscript takes a model; the family checks it.
absl::Status CheckFamilyFields(const v1::SweepSpec& spec, const FamilyDef& family) {
  if (family.check_sweep != nullptr) return family.check_sweep(spec);
  if (spec.has_torchscript()) {
    return absl::InvalidArgumentError(
        absl::StrCat("torchscript: only family ", kTorchScriptFamilyName,
                     " takes a model; this sweep's family is ", Quote(spec.family())));
  }
  return absl::OkStatus();
}

// ---- expansion ------------------------------------------------------------------

// The keys of one of the spec's maps (params, options, stack), sorted: the
// order expansion walks them in.
template <typename Map>
std::vector<std::string> SortedKeys(const Map& map) {
  std::vector<std::string> keys;
  keys.reserve(map.size());
  for (const auto& [key, unused] : map) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// One stack axis: a known setting, on a CPU sweep, with distinct valid
// values. Returns how many.
absl::StatusOr<int64_t> CheckStack(const v1::SweepSpec& spec, const std::string& key) {
  const std::string path = absl::StrCat("stack.", EchoKey(key));
  // blas_core, aten_capability, threads, or env.NAME of an allowed variable.
  if (absl::Status s = platform::ValidateStackKey(key, path); !s.ok()) return s;
  const platform::StackSettingInfo* info = platform::FindStackSettingInfo(key);
  const std::string device = spec.device().empty() ? kDefaultDevice : spec.device();
  if (device != "cpu") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": stack settings choose CPU libraries' kernels; this sweep's device is ", device));
  }
  if (key == platform::kThreadsStackKey) {
    for (const ParamRule* rule : {&kIntraOpThreadsRule, &kInterOpThreadsRule}) {
      if (spec.params().count(rule->name) > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": sets the thread counts itself, and params.", rule->name,
                         " does too; keep one (intra=T,inter=I values cover explicit counts)"));
      }
    }
  }
  const v1::StringValues& list = spec.stack().at(key);
  if (list.values().empty()) {
    std::string allowed = "value (\"\" unsets the variable)";
    if (info != nullptr) allowed = absl::StrCat("of auto, as-installed or ", info->names_help);
    if (key == platform::kThreadsStackKey)
      allowed = absl::StrCat("of ", platform::ThreadProfileHelp());
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": empty list; give at least one ", allowed));
  }
  std::set<std::string> seen;
  for (int i = 0; i < list.values_size(); ++i) {
    const std::string item = absl::StrCat(path, "[", i, "]");
    if (absl::Status s = platform::ValidateStackKeyValue(key, list.values(i), item); !s.ok()) {
      return s;
    }
    const std::string canonical = platform::CanonicalStackValue(key, list.values(i));
    if (!seen.insert(canonical).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(item, ": '", list.values(i), "' is listed twice",
                       canonical == list.values(i) ? "" : absl::StrCat(" (as '", canonical, "')")));
    }
  }
  return list.values_size();
}

std::vector<std::string> OrDefault(const google::protobuf::RepeatedPtrField<std::string>& list,
                                   const char* default_value) {
  if (list.empty()) return {default_value};
  return {list.begin(), list.end()};
}

}  // namespace

std::string AllowedDevices() { return JoinNames(kDevices, "|"); }
std::string AllowedPrecisions() { return JoinNames(kPrecisions, "|"); }
std::string AllowedOptimizers() { return JoinNames(kOptimizers, "|"); }

namespace {

// The largest value of `rule`'s param any job of `spec` asks for; 1 without it.
absl::StatusOr<int64_t> MostParamValue(const v1::SweepSpec& spec, const ParamRule& rule) {
  const auto it = spec.params().find(rule.name);
  if (it == spec.params().end()) return int64_t{1};
  absl::StatusOr<std::vector<int64_t>> values =
      ParamValues(it->second, rule, absl::StrCat("params.", rule.name));
  if (!values.ok()) return values.status();
  return values->empty() ? int64_t{1} : *std::max_element(values->begin(), values->end());
}

}  // namespace

absl::StatusOr<int64_t> MostDataParallelDevices(const v1::SweepSpec& spec) {
  return MostParamValue(spec, kDevicesRule);
}

absl::StatusOr<int64_t> MostDataParallelHosts(const v1::SweepSpec& spec) {
  return MostParamValue(spec, kHostsRule);
}

namespace {

// Replicas beyond one need CUDA devices: the LibTorch runner runs one per
// GPU (worker/runner/data_parallel.h). params.devices itself passed its rule.
absl::Status CheckDataParallelDevice(const v1::SweepSpec& spec) {
  absl::StatusOr<int64_t> most_devices = MostDataParallelDevices(spec);
  if (!most_devices.ok()) return most_devices.status();
  const int64_t most = *most_devices;
  const std::string device = spec.device().empty() ? kDefaultDevice : spec.device();
  if (most > 1 && device != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("params.devices: ", most,
                     " replicas need device cuda (one replica per GPU, "
                     "gradients all-reduced over NCCL); this sweep's device is ",
                     device,
                     "; allowed here: 1 (CPUs scale out with params.hosts: one process per "
                     "worker, gradients all-reduced over Gloo)"));
  }
  return absl::OkStatus();
}

// The family's params: each known and valid, the required ones given.
// Returns the configurations they span.
absl::StatusOr<int64_t> CheckParams(const v1::SweepSpec& spec, const FamilyDef& family) {
  int64_t configurations = 1;
  for (const std::string& key : SortedKeys(spec.params())) {
    const ParamRule* rule = FindParam(family, key);
    if (rule == nullptr) {
      std::string allowed = absl::StrCat("allowed: ", ParamNames(family, false));
      if (!family.options.empty()) {
        absl::StrAppend(&allowed, "; options: ", OptionNames(family));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "params.", EchoKey(key), ": unknown parameter of family ", family.name, "; ", allowed));
    }
    absl::StatusOr<int64_t> count =
        CheckParam(spec.params().at(key), *rule, absl::StrCat("params.", key), nullptr);
    if (!count.ok()) return count.status();
    configurations = SaturatingMultiply(configurations, *count);
  }
  for (const ParamRule& p : family.params) {
    if (p.required && spec.params().count(p.name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("params.", p.name, ": missing; family ",
                                                     family.name, " requires ",
                                                     ParamNames(family, true)));
    }
  }
  if (absl::Status s = CheckDataParallelDevice(spec); !s.ok()) return s;
  // A thread count in both places would leave the record ambiguous about
  // which one a job ran with.
  const std::pair<const char*, int64_t> run_threads[] = {
      {"intra_op_threads", spec.run().intra_op_threads()},
      {"inter_op_threads", spec.run().inter_op_threads()}};
  for (const auto& [threads, in_run] : run_threads) {
    if (spec.params().count(threads) != 0 && in_run != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("params.", threads, ": also given as run.", threads,
                       "; give it in one place (params to sweep it)"));
    }
  }
  return configurations;
}

// The family's options, each known and valid, the ones without a default
// given. Returns the configurations they span.
absl::StatusOr<int64_t> CheckOptions(const v1::SweepSpec& spec, const FamilyDef& family) {
  int64_t configurations = 1;
  for (const std::string& key : SortedKeys(spec.options())) {
    const std::string path = absl::StrCat("options.", EchoKey(key));
    const OptionRule* rule = FindOption(family, key);
    if (rule == nullptr) {
      if (family.options.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": family ", family.name, " takes no options"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": unknown option of family ", family.name, "; allowed: ", OptionNames(family)));
    }
    absl::StatusOr<int64_t> count = CheckOption(spec.options().at(key), *rule, path);
    if (!count.ok()) return count.status();
    configurations = SaturatingMultiply(configurations, *count);
  }
  for (const OptionRule& o : family.options) {
    if (o.default_value == nullptr && spec.options().count(o.name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("options.", o.name, ": missing; family ",
                                                     family.name, " requires ", o.name, ", one of ",
                                                     AllowedOptionValues(o)));
    }
  }
  for (const std::string& key : SortedKeys(spec.stack())) {
    absl::StatusOr<int64_t> count = CheckStack(spec, key);
    if (!count.ok()) return count.status();
    configurations = SaturatingMultiply(configurations, *count);
  }
  return configurations;
}

// The family, checked; the device too (empty means kDefaultDevice).
absl::StatusOr<const FamilyDef*> CheckFamilyAndDevice(const v1::SweepSpec& spec) {
  if (spec.family().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("family: missing; one of ", AllowedFamilies()));
  }
  const FamilyDef* family = FindFamily(spec.family());
  if (family == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "family: ", Quote(spec.family()), " is not a known family; one of ", AllowedFamilies()));
  }
  if (!spec.device().empty() &&
      !absl::c_linear_search(kDevices, absl::string_view(spec.device()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("device: ", Quote(spec.device()), " is not one of ", AllowedDevices()));
  }
  return family;
}

// Precisions, optimizers, run settings, the source text and repeats.
absl::Status CheckRunFields(const v1::SweepSpec& spec) {
  if (absl::Status s = CheckNameList("precision", spec.precision(), kPrecisions); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckNameList("optimizer", spec.optimizer(), kOptimizers); !s.ok()) {
    return s;
  }
  if (absl::Status s = common::ValidateRunSettings(spec.run()); !s.ok()) return s;
  if (spec.source_text().size() > kMaxSourceTextBytes) {
    return absl::InvalidArgumentError(absl::StrCat("source_text: ", spec.source_text().size(),
                                                   " bytes; at most ", kMaxSourceTextBytes));
  }
  if (spec.repeats() < 0 || spec.repeats() > kMaxRepeats) {
    return absl::InvalidArgumentError(
        absl::StrCat("repeats: ", spec.repeats(), " is out of range; allowed 1..", kMaxRepeats));
  }
  if (spec.run().target_interval() > 0 && spec.repeats() != 0 &&
      spec.repeats() < kTargetFirstRounds) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repeats: ", spec.repeats(),
        " with run.target_interval is the most repeats a configuration may take; allowed ",
        kTargetFirstRounds, "..", kMaxRepeats, " (default ", kDefaultTargetRepeats, ")"));
  }
  if (spec.run().budget_seconds() > 0 && spec.repeats() > 1 &&
      !(spec.run().target_interval() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("repeats: ", spec.repeats(),
                     " with run.budget: a budgeted sweep measures each configuration at most "
                     "once; drop one of them"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSweep(const v1::SweepSpec& spec, int64_t max_jobs) {
  if (max_jobs <= 0) max_jobs = kDefaultMaxJobs;
  if (absl::Status s = CheckSweepUtf8(spec); !s.ok()) return s;
  if (absl::Status s = CheckName(spec.name()); !s.ok()) return s;
  absl::StatusOr<const FamilyDef*> family = CheckFamilyAndDevice(spec);
  if (!family.ok()) return family.status();
  absl::StatusOr<int64_t> param_configurations = CheckParams(spec, **family);
  if (!param_configurations.ok()) return param_configurations.status();
  absl::StatusOr<int64_t> option_configurations = CheckOptions(spec, **family);
  if (!option_configurations.ok()) return option_configurations.status();
  if (absl::Status s = CheckFamilyFields(spec, **family); !s.ok()) return s;
  if (absl::Status s = CheckRunFields(spec); !s.ok()) return s;

  int64_t configurations = SaturatingMultiply(*param_configurations, *option_configurations);
  configurations = SaturatingMultiply(configurations, std::max(1, spec.precision_size()));
  configurations = SaturatingMultiply(configurations, std::max(1, spec.optimizer_size()));
  const int repeats = MaxRepeats(spec);
  const int64_t jobs = SaturatingMultiply(configurations, repeats);
  if (jobs > max_jobs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sweep expands to ", jobs == kSaturated ? "at least " : "", jobs,
        repeats > 1 ? absl::StrCat(" jobs (", repeats, " repeats)") : " configurations",
        "; the limit is ", max_jobs, " (--max-jobs)"));
  }
  return absl::OkStatus();
}

std::string ConfigName(const v1::ModelConfig& config) {
  std::string name = config.family();
  const std::map<std::string, int64_t> params(config.params().begin(), config.params().end());
  for (const auto& [key, value] : params) absl::StrAppend(&name, " ", key, "=", value);
  const std::map<std::string, std::string> options(config.options().begin(),
                                                   config.options().end());
  for (const auto& [key, value] : options) absl::StrAppend(&name, " ", key, "=", value);
  return name;
}

std::string ConfigKey(const v1::ModelConfig& config) {
  std::string key = absl::StrCat(config.family(), "|", config.precision(), "|", config.optimizer(),
                                 "|", config.torchscript().sha256());
  const std::map<std::string, int64_t> params(config.params().begin(), config.params().end());
  const std::map<std::string, std::string> options(config.options().begin(),
                                                   config.options().end());
  const std::map<std::string, std::string> stack(config.stack().begin(), config.stack().end());
  for (const auto& [name, value] : params) absl::StrAppend(&key, "|", name, "=", value);
  for (const auto& [name, value] : options) absl::StrAppend(&key, "|", name, "=", value);
  for (const auto& [name, value] : stack) absl::StrAppend(&key, "|stack.", name, "=", value);
  return key;
}

int MaxRepeats(const v1::SweepSpec& spec) {
  if (spec.run().target_interval() > 0 && spec.repeats() <= 1) return kDefaultTargetRepeats;
  return std::max(1, spec.repeats());
}

int64_t CountConfigurations(const v1::SweepSpec& spec) {
  int64_t configurations = 1;
  const FamilyDef* family = FindFamily(spec.family());
  if (family != nullptr) {
    for (const auto& [key, param] : spec.params()) {
      const ParamRule* rule = FindParam(*family, key);
      if (rule == nullptr) continue;
      absl::StatusOr<int64_t> count = CheckParam(param, *rule, key, nullptr);
      if (count.ok()) configurations = SaturatingMultiply(configurations, *count);
    }
    for (const auto& [key, list] : spec.options()) {
      const OptionRule* rule = FindOption(*family, key);
      if (rule == nullptr) continue;
      absl::StatusOr<int64_t> count = CheckOption(list, *rule, key);
      if (count.ok()) configurations = SaturatingMultiply(configurations, *count);
    }
    for (const std::string& key : SortedKeys(spec.stack())) {
      absl::StatusOr<int64_t> count = CheckStack(spec, key);
      if (count.ok()) configurations = SaturatingMultiply(configurations, *count);
    }
  }
  configurations = SaturatingMultiply(configurations, std::max(1, spec.precision_size()));
  return SaturatingMultiply(configurations, std::max(1, spec.optimizer_size()));
}

namespace {

// Every config of a sweep starts from this template: the family, the
// defaults of what the sweep leaves out, and the TorchScript model without
// its bytes.
v1::ModelConfig BaseConfig(const v1::SweepSpec& spec, const FamilyDef& family) {
  v1::ModelConfig base;
  base.set_family(spec.family());
  for (const ParamRule& p : family.params) {
    if (p.default_value != 0 && spec.params().count(p.name) == 0) {
      (*base.mutable_params())[p.name] = p.default_value;
    }
  }
  for (const OptionRule& o : family.options) {
    if (o.default_value != nullptr && *o.default_value != '\0' &&
        spec.options().count(o.name) == 0) {
      (*base.mutable_options())[o.name] = o.default_value;
    }
  }
  if (spec.has_torchscript()) {
    v1::TorchScriptModel* model = base.mutable_torchscript();
    model->set_sha256(spec.torchscript().sha256());
    model->set_file_name(spec.torchscript().file_name());
    *model->mutable_inputs() = spec.torchscript().inputs();
    model->set_loss(spec.torchscript().loss());
    if (spec.torchscript().has_target()) *model->mutable_target() = spec.torchscript().target();
  }
  return base;
}

}  // namespace

absl::StatusOr<std::vector<v1::ModelConfig>> ExpandSweep(const v1::SweepSpec& spec,
                                                         int64_t max_jobs) {
  if (absl::Status s = ValidateSweep(spec, max_jobs); !s.ok()) return s;
  const FamilyDef& family = *FindFamily(spec.family());
  const v1::ModelConfig base = BaseConfig(spec, family);

  // The axes of the cross product, outermost first: parameters, then
  // options, then stack settings, each in sorted key order.
  const std::vector<std::string> keys = SortedKeys(spec.params());
  const std::vector<std::string> option_keys = SortedKeys(spec.options());
  const std::vector<std::string> stack_keys = SortedKeys(spec.stack());
  std::vector<std::vector<int64_t>> values;
  values.reserve(keys.size());
  for (const std::string& key : keys) {
    absl::StatusOr<std::vector<int64_t>> v =
        ParamValues(spec.params().at(key), *FindParam(family, key), absl::StrCat("params.", key));
    if (!v.ok()) return v.status();  // unreachable after ValidateSweep; kept for safety
    values.push_back(*std::move(v));
  }
  std::vector<size_t> sizes;
  sizes.reserve(values.size() + option_keys.size() + stack_keys.size());
  for (const auto& v : values) sizes.push_back(v.size());
  for (const std::string& key : option_keys) {
    sizes.push_back(static_cast<size_t>(spec.options().at(key).values_size()));
  }
  for (const std::string& key : stack_keys) {
    sizes.push_back(static_cast<size_t>(spec.stack().at(key).values_size()));
  }
  const std::vector<std::string> precisions = OrDefault(spec.precision(), kDefaultPrecision);
  const std::vector<std::string> optimizers = OrDefault(spec.optimizer(), kDefaultOptimizer);

  std::vector<v1::ModelConfig> configs;
  configs.reserve(static_cast<size_t>(CountConfigurations(spec)));
  // An odometer over the axes: the last one turns fastest, then the inner
  // precision/optimizer loops.
  std::vector<size_t> index(sizes.size(), 0);
  while (true) {
    v1::ModelConfig config = base;
    for (size_t k = 0; k < keys.size(); ++k) {
      (*config.mutable_params())[keys[k]] = values[k][index[k]];
    }
    for (size_t k = 0; k < option_keys.size(); ++k) {
      (*config.mutable_options())[option_keys[k]] =
          spec.options().at(option_keys[k]).values(static_cast<int>(index[keys.size() + k]));
    }
    for (size_t k = 0; k < stack_keys.size(); ++k) {
      const size_t axis = keys.size() + option_keys.size() + k;
      // One spelling per setting: equal settings are one configuration
      // (result reuse, compare and the analyses match on it).
      (*config.mutable_stack())[stack_keys[k]] = platform::CanonicalStackValue(
          stack_keys[k], spec.stack().at(stack_keys[k]).values(static_cast<int>(index[axis])));
    }
    for (const std::string& precision : precisions) {
      for (const std::string& optimizer : optimizers) {
        v1::ModelConfig& out = configs.emplace_back(config);
        out.set_precision(precision);
        out.set_optimizer(optimizer);
      }
    }
    size_t digit = sizes.size();
    while (true) {
      if (digit == 0) return configs;
      --digit;
      if (++index[digit] < sizes[digit]) break;
      index[digit] = 0;
    }
  }
}

std::vector<int32_t> ShuffledOrder(size_t n, uint64_t seed) {
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    std::fprintf(stderr, "ShuffledOrder: n = %zu does not fit in int32_t\n", n);
    std::abort();
  }
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) {
    // Uniform in [0, i): reject the low 2^64 mod i draws so every residue is
    // equally likely.
    const uint64_t bound = i;
    const uint64_t threshold = (0 - bound) % bound;
    uint64_t draw = rng();
    while (draw < threshold) draw = rng();
    std::swap(order[i - 1], order[static_cast<size_t>(draw % bound)]);
  }
  return order;
}

}  // namespace paradnn::model
