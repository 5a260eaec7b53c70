#include "client/bisect_command.h"

#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "model/family.h"
#include "model/sweep.h"
#include "platform/stack_env.h"
#include "platform/stack_findings.h"

namespace paradnn::client {
namespace {

// The one setting of every measurement's stack that keeps it out of the
// worker's zygote (BisectMixSweep).
constexpr char kFreshProcessKey[] = "env.OMP_DISPLAY_ENV";
constexpr char kFreshProcessValue[] = "false";

const model::ParamRule* BisectThreadRule(absl::string_view name) {
  if (name == model::kIntraOpThreadsRule.name) return &model::kIntraOpThreadsRule;
  if (name == model::kInterOpThreadsRule.name) return &model::kInterOpThreadsRule;
  return nullptr;
}

std::string BisectSettingsHelp() {
  return absl::StrCat("intra_op_threads, inter_op_threads, ", platform::AllowedStackKeysHelp());
}

// Whether a segment after a comma starts a new NAME=VALUE pair rather
// than continuing a value (env.KMP_AFFINITY=compact,granularity=fine):
// NAME is a setting bisect knows or env.SOMETHING.
bool StartsBisectSetting(absl::string_view segment) {
  const size_t equals = segment.find('=');
  if (equals == absl::string_view::npos) return false;
  const absl::string_view name = segment.substr(0, equals);
  return platform::IsEnvStackKey(name) || BisectThreadRule(name) != nullptr ||
         platform::FindStackSettingInfo(name) != nullptr;
}

// One setting of a stack: a thread count (1..1024) or a stack setting.
absl::Status CheckBisectSetting(const std::string& name, const std::string& value,
                                const std::string& field) {
  if (const model::ParamRule* rule = BisectThreadRule(name); rule != nullptr) {
    int64_t count = 0;
    if (!absl::SimpleAtoi(value, &count)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", value, "' is not an integer; ", model::AllowedRange(*rule)));
    }
    return model::CheckParamValue(field, count, *rule, false);
  }
  if (!platform::IsEnvStackKey(name) && platform::FindStackSettingInfo(name) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": not a setting bisect can switch; allowed: ", BisectSettingsHelp()));
  }
  if (absl::Status s = platform::ValidateStackKey(name, field); !s.ok()) return s;
  return platform::ValidateStackKeyValue(name, value, field);
}

}  // namespace

CLI::App* AddBisectCommand(CLI::App& app, BisectFlags* flags, std::string* format) {
  CLI::App* bisect = app.add_subcommand(
      "bisect",
      "Which of the settings two stacks differ in moves one configuration's step time?\n"
      "  paradnn bisect fc.yaml --good blas_core=Haswell,intra_op_threads=2 \\\n"
      "      --bad blas_core=Prescott,intra_op_threads=1,env.OMP_WAIT_POLICY=passive\n"
      "Measures A and B in alternating rounds (no difference: it says so and stops), then A\n"
      "with subsets of B's settings, bisecting to the smallest set that carries the effect\n"
      "(QuickXplain; about log2 d + 1 probes for one guilty setting of d), each measurement a\n"
      "fresh job. On the coordinator --coordinator (or $PARADNN_COORDINATOR) names, one job at\n"
      "a time; without one, on a private coordinator (--db) and one local worker.");
  bisect->add_option("FILE", flags->file, "Sweep file of one configuration (- reads stdin)")
      ->required();
  const std::string settings = absl::StrCat(
      "NAME=VALUE,... (repeatable); NAME: ", BisectSettingsHelp(), "; env.NAME= unsets it");
  bisect->add_option("--good", flags->good, absl::StrCat("Stack A: ", settings))
      ->required()
      ->allow_extra_args(false)
      ->take_all();
  bisect->add_option("--bad", flags->bad, "Stack B, as --good")
      ->required()
      ->allow_extra_args(false)
      ->take_all();
  bisect
      ->add_option("--unmixable", flags->unmixable,
                   "A differing setting that cannot be switched alone: every mix keeps A's value "
                   "(repeatable)")
      ->allow_extra_args(false)
      ->take_all();
  bisect->add_option("--reference-rounds", flags->reference_rounds, "Rounds of A and B first")
      ->check(CLI::Range(2, 20))
      ->capture_default_str();
  bisect->add_option("--rounds-per-probe", flags->rounds_per_probe, "Most rounds of one probe")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  bisect
      ->add_option("--significance", flags->significance,
                   "Two-sided level of \"the stacks differ\" and of each probe's decision")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  bisect->add_option("--max-measurements", flags->max_measurements, "Stop after this many")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  bisect
      ->add_option("--db", flags->db,
                   "Without a coordinator: the private coordinator's SQLite file (kept)")
      ->capture_default_str();
  bisect
      ->add_option("--format", *format,
                   "table (progress on stderr, the result on stdout) or json (the result and "
                   "every measurement)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return bisect;
}

absl::StatusOr<std::map<std::string, std::string>> ParseBisectSettings(
    const std::vector<std::string>& texts, absl::string_view flag) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& text : texts) {
    bool in_pair = false;  // a comma in this flag may continue the last value
    for (absl::string_view segment : absl::StrSplit(text, ',', absl::SkipEmpty())) {
      const bool first = !in_pair;
      if (first ? segment.find('=') != absl::string_view::npos : StartsBisectSetting(segment)) {
        const size_t equals = segment.find('=');
        pairs.emplace_back(std::string(segment.substr(0, equals)),
                           std::string(segment.substr(equals + 1)));
        in_pair = true;
      } else if (in_pair) {
        absl::StrAppend(&pairs.back().second, ",", segment);
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": '", segment, "' is not NAME=VALUE; NAME: ", BisectSettingsHelp()));
      }
    }
  }
  std::map<std::string, std::string> settings;
  for (auto& [name, value] : pairs) {
    const std::string field = absl::StrCat(flag, " ", name);
    if (absl::Status s = CheckBisectSetting(name, value, field); !s.ok()) return s;
    if (!settings.emplace(name, std::move(value)).second) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": given twice"));
    }
  }
  return settings;
}

namespace {

// The file's own settings must leave the named ones to --good and --bad.
absl::Status CheckBisectBase(const v1::SweepSpec& base, const std::set<std::string>& named) {
  if (const int64_t configurations = model::CountConfigurations(base); configurations != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FILE: the sweep expands to ", configurations,
        " configurations; bisect measures one (give each parameter, option and stack setting "
        "one value)"));
  }
  if (base.repeats() > 1) {
    return absl::InvalidArgumentError(
        "repeats: bisect measures in rounds of its own; leave repeats out of the file");
  }
  if (base.run().budget_seconds() > 0) {
    return absl::InvalidArgumentError("run.budget: bisect measures every mix; leave it out");
  }
  const bool cpu = base.device().empty() || base.device() == "cpu";
  for (const std::string& name : named) {
    if (const model::ParamRule* rule = BisectThreadRule(name); rule != nullptr) {
      const int32_t in_run = name == model::kIntraOpThreadsRule.name
                                 ? base.run().intra_op_threads()
                                 : base.run().inter_op_threads();
      if (base.params().count(name) > 0 || in_run != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("params.", name,
                         ": set in the sweep file and in --good/--bad; give it in --good "
                         "and --bad only (a stack without it runs the file's default)"));
      }
    } else if (base.stack().count(name) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("stack.", name,
                       ": set in the sweep file and in --good/--bad; give it in --good and "
                       "--bad only"));
    } else if (!cpu) {
      return absl::InvalidArgumentError(
          absl::StrCat("--good/--bad ", name,
                       ": stack settings choose CPU libraries' kernels; this sweep's "
                       "device is ",
                       base.device(), "; allowed here: intra_op_threads, inter_op_threads"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BisectPlan> PlanBisect(const BisectFlags& flags, v1::SweepSpec base) {
  absl::StatusOr<std::map<std::string, std::string>> good =
      ParseBisectSettings(flags.good, "--good");
  if (!good.ok()) return good.status();
  absl::StatusOr<std::map<std::string, std::string>> bad = ParseBisectSettings(flags.bad, "--bad");
  if (!bad.ok()) return bad.status();
  std::set<std::string> named, differing;
  for (const auto& [name, value] : *good) named.insert(name);
  for (const auto& [name, value] : *bad) named.insert(name);
  for (const std::string& name : named) {
    const auto in_good = good->find(name), in_bad = bad->find(name);
    if (in_good == good->end() || in_bad == bad->end() || in_good->second != in_bad->second) {
      differing.insert(name);
    }
  }
  if (differing.empty()) {
    return absl::InvalidArgumentError(
        "--good, --bad: the stacks do not differ in any setting; give B's differing values in "
        "--bad");
  }
  for (const std::string& name : flags.unmixable) {
    if (differing.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--unmixable ", name, ": not a setting the stacks differ in; they differ in ",
          absl::StrJoin(differing, ", ")));
    }
  }
  if (absl::Status s = CheckBisectBase(base, named); !s.ok()) return s;
  BisectPlan plan;
  plan.base = std::move(base);
  v1::BisectRequest& request = plan.request;
  request.mutable_good()->insert(good->begin(), good->end());
  request.mutable_bad()->insert(bad->begin(), bad->end());
  request.set_reference_rounds(flags.reference_rounds);
  request.set_max_rounds_per_probe(flags.rounds_per_probe);
  request.set_significance(flags.significance);
  request.set_max_measurements(flags.max_measurements);
  for (const std::string& name : flags.unmixable) request.add_unmixable(name);
  return plan;
}

v1::SweepSpec BisectMixSweep(const v1::SweepSpec& base, const v1::BisectMix& mix) {
  v1::SweepSpec spec = base;
  spec.set_name(
      absl::StrCat(base.name().empty() ? "bisect" : base.name(), "-bisect-", mix.index() + 1));
  // The stored text would no longer say what ran.
  spec.clear_source_text();
  spec.clear_repeats();
  spec.mutable_run()->set_fresh(true);
  for (const auto& [name, value] : mix.settings()) {
    if (BisectThreadRule(name) != nullptr) {
      int64_t count = 0;
      if (absl::SimpleAtoi(value, &count)) (*spec.mutable_params())[name].set_value(count);
    } else {
      (*spec.mutable_stack())[name].add_values(value);
    }
  }
  const bool cpu = spec.device().empty() || spec.device() == "cpu";
  if (cpu && spec.stack().count(kFreshProcessKey) == 0) {
    (*spec.mutable_stack())[kFreshProcessKey].add_values(kFreshProcessValue);
  }
  return spec;
}

std::string BisectMixLabel(const v1::BisectMix& mix, size_t differing) {
  if (mix.from_bad().empty()) return "A";
  if (static_cast<size_t>(mix.from_bad_size()) == differing) return "B";
  return absl::StrCat("A + ", absl::StrJoin(mix.from_bad(), ", "));
}

}  // namespace paradnn::client
