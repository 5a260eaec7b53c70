#include "worker/runner/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/run_settings.h"
#include "common/version.h"
#include "model/family.h"
#include "platform/stack_findings.h"
#include "worker/runner/cuda_driver.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::AllFamilies;
using model::AllowedFamilies;
using model::FamilyDef;
using model::FieldStyle;
using model::IsThreadParam;
using model::kAllowedOptimizers;
using model::kAllowedPrecisions;
using model::NormalizedConfig;
using model::OptionRule;
using model::ParamRule;
using model::ParseModelSpec;
namespace {

constexpr const char* kFooter =
    "Modes:\n"
    "  paradnn-runner --job-stdin            framed RunnerJob on stdin, framed RunnerEvents on "
    "stdout\n"
    "  paradnn-runner --platform [--framed]  this host's Platform as JSON (or one frame)\n"
    "  paradnn-runner --calibrate [--framed] the Platform with measured matmul roofs and memory\n"
    "                                        bandwidth (about 20 s)\n"
    "  paradnn-runner --stack-doctor [--framed] try the OpenBLAS cores and ATen CPU capabilities\n"
    "                                        this CPU supports (each checked against float64);\n"
    "                                        the Platform with the findings and the fastest\n"
    "                                        correct ones\n"
    "  paradnn-runner --family fc --layer 4 --node 1024 --input 2000 --output 200 --batch 256\n"
    "                                        time one model; --json for the Measurement,\n"
    "                                        --describe for its analytic counts without training";

// ValidateRunSettings names proto fields ("run.ci: ..."); on the command line
// the same setting is a flag ("--ci: ...").
absl::Status AsFlagError(const absl::Status& status) {
  std::string message(status.message());
  if (absl::StartsWith(message, "run.")) message = absl::StrCat("--", message.substr(4));
  return absl::InvalidArgumentError(message);
}

// Every flag's value and option, filled by CLI11.
struct RunnerFlags {
  // Modes
  bool job_stdin = false, platform = false, calibrate = false, framed = false;
  bool blas_trial = false, aten_trial = false, stack_doctor = false;
  std::string blas_core = "auto", aten_capability = "auto";
  CLI::Option* blas_core_opt = nullptr;
  CLI::Option* aten_capability_opt = nullptr;
  CLI::Option* framed_opt = nullptr;
  std::string device = "cpu";
  CLI::Option* device_opt = nullptr;
  // The model: one flag per hyper-parameter name of any family (--layer,
  // --block_fn, ...), named as in sweep files.
  std::string family, precision, optimizer;
  std::map<std::string, int64_t> param_values;
  std::map<std::string, std::string> option_values;
  CLI::Option* family_opt = nullptr;
  std::vector<CLI::Option*> model_opts;
  std::vector<std::pair<std::string, CLI::Option*>> param_opts, option_opts;
  // Run settings
  double ci = 0, max_seconds = 0;
  int warmup_steps = 0, min_steps = 0, max_steps = 0, intra = 0, inter = 0, profile_steps = 0;
  bool profile = false;
  uint64_t seed = 0;
  // Output
  bool json = false, describe = false;
  CLI::Option* json_opt = nullptr;
  CLI::Option* describe_opt = nullptr;
  std::string log_level = "info";

  void AddModeFlags(CLI::App& app);
  void AddModelFlags(CLI::App& app);
  void AddRunSettingFlags(CLI::App& app);
  // Fills the mode and the stack settings into `cmd`: true when that is
  // the whole command (a mode other than measure/describe), false for the
  // model modes; an error for flags that do not go together.
  absl::StatusOr<bool> ModeCommand(RunnerCommand* cmd) const;
  // --family and the rest: the job to measure or describe.
  absl::StatusOr<RunnerCommand> ModelCommand(const CLI::App& app, RunnerCommand cmd) const;
  absl::StatusOr<v1::RunSettings> Settings(const CLI::App& app) const;
  // The first model flag given (nullptr if none).
  const CLI::Option* FirstModelFlag() const;
};

void RunnerFlags::AddModeFlags(CLI::App& app) {
  app.add_flag("--job-stdin", job_stdin,
               "Read one framed RunnerJob from stdin; write framed RunnerEvents");
  app.add_flag("--platform", platform, "Print this host's Platform");
  app.add_flag("--calibrate", calibrate,
               "Measure peak matmul FLOP/s per dtype and memory bandwidth; print the Platform "
               "with them");
  app.add_flag("--blas-trial", blas_trial,
               "Internal (the stack doctor): time and check float32 GEMM on the BLAS core in "
               "effect; one JSON line");
  app.add_flag("--aten-trial", aten_trial,
               "Internal (the stack doctor): time and check float32 elementwise kernels on the "
               "ATen CPU capability in effect; one JSON line");
  app.add_flag("--stack-doctor", stack_doctor,
               "Try every OpenBLAS core and ATen CPU capability this CPU supports; print the "
               "Platform with the findings");
  blas_core_opt = app.add_option(
      "--blas-core", blas_core,
      "OpenBLAS kernels: auto (the fastest core that computes correctly, found once per host "
      "and cached), as-installed, or a core name such as SkylakeX");
  aten_capability_opt = app.add_option(
      "--aten-capability", aten_capability,
      "ATen CPU kernels: auto (the fastest that computes correctly, found once per host and "
      "cached), as-installed, default, avx2 or avx512");
  device_opt = app.add_option(
      "--device", device,
      "With --platform, --calibrate or a model: cpu (default), cuda (the first GPU) or cuda:N");
  framed_opt = app.add_flag("--framed", framed,
                            "With --platform, --calibrate or --stack-doctor: one frame, not "
                            "JSON");
}

void RunnerFlags::AddModelFlags(CLI::App& app) {
  family_opt =
      app.add_option("--family", family, absl::StrCat("Model family: ", AllowedFamilies()));
  model_opts.push_back(family_opt);
  for (const FamilyDef* def : AllFamilies()) {
    for (const ParamRule& rule : def->params) {
      // The thread counts are run settings on the command line (below).
      if (IsThreadParam(rule.name)) continue;
      if (param_values.count(rule.name)) continue;
      std::string names = absl::StrCat("--", rule.name);
      // docs/design.md writes --layers/--nodes; accept both.
      if (std::string(rule.name) == "layer" || std::string(rule.name) == "node") {
        absl::StrAppend(&names, ",--", rule.name, "s");
      }
      CLI::Option* opt = app.add_option(names, param_values[rule.name],
                                        absl::StrCat(rule.description, " (", def->name, ")"));
      param_opts.emplace_back(rule.name, opt);
      model_opts.push_back(opt);
    }
    for (const OptionRule& rule : def->options) {
      if (option_values.count(rule.name)) continue;
      CLI::Option* opt = app.add_option(absl::StrCat("--", rule.name), option_values[rule.name],
                                        absl::StrCat(rule.description, " (", def->name, ")"));
      option_opts.emplace_back(rule.name, opt);
      model_opts.push_back(opt);
    }
  }
  model_opts.push_back(app.add_option("--precision", precision, kAllowedPrecisions));
  model_opts.push_back(app.add_option("--optimizer", optimizer, kAllowedOptimizers));
  json_opt = app.add_flag("--json", json, "Print the Measurement as JSON");
  describe_opt =
      app.add_flag("--describe", describe, "Print the analytic counts as JSON; no training");
}

void RunnerFlags::AddRunSettingFlags(CLI::App& app) {
  model_opts.insert(
      model_opts.end(),
      {
          app.add_option("--ci", ci,
                         "Target relative half-width of the 95 % CI of the mean step time (0.02)"),
          app.add_option("--max_seconds,--max-seconds", max_seconds,
                         "Time budget of the timed steps (10)"),
          app.add_option("--warmup_steps,--warmup-steps", warmup_steps,
                         "Minimum warm-up steps (3)"),
          app.add_option("--min_steps,--min-steps", min_steps, "Minimum timed steps (5)"),
          app.add_option("--max_steps,--max-steps", max_steps, "Maximum timed steps (10000)"),
          app.add_option("--intra_op_threads,--intra-op-threads", intra,
                         "Intra-op threads (all CPUs)"),
          app.add_option("--inter_op_threads,--inter-op-threads", inter, "Inter-op threads (1)"),
          app.add_option("--seed", seed, "Seed for weights and synthetic data (0)"),
          app.add_flag("--profile", profile,
                       "After timing, record an operator breakdown of a few steps with LibTorch's "
                       "profiler"),
          app.add_option("--profile_steps,--profile-steps", profile_steps,
                         "Steps the --profile breakdown averages over (3)"),
      });
}

const CLI::Option* RunnerFlags::FirstModelFlag() const {
  for (const CLI::Option* opt : model_opts) {
    if (opt->count() > 0) return opt;
  }
  return nullptr;
}

absl::StatusOr<bool> RunnerFlags::ModeCommand(RunnerCommand* cmd) const {
  const CLI::Option* first_model_flag = FirstModelFlag();
  const bool any_model_flag = describe || json_opt->count() > 0 || first_model_flag != nullptr;
  if (static_cast<int>(job_stdin) + static_cast<int>(platform) + static_cast<int>(calibrate) +
          static_cast<int>(blas_trial) + static_cast<int>(aten_trial) +
          static_cast<int>(stack_doctor) >
      1) {
    return absl::InvalidArgumentError(
        "--job-stdin, --platform, --calibrate, --blas-trial, --aten-trial and --stack-doctor are "
        "separate modes; pass one");
  }
  const bool trial = blas_trial || aten_trial;
  const char* trial_flag = blas_trial ? "--blas-trial" : "--aten-trial";
  for (const auto& [component, value, option] :
       {std::tuple{"blas_core", &blas_core, blas_core_opt},
        std::tuple{"aten_capability", &aten_capability, aten_capability_opt}}) {
    const platform::StackSettingInfo& info = *platform::FindStackSettingInfo(component);
    if (absl::Status s = platform::ValidateStackValue(info, *value, info.flag); !s.ok()) return s;
    if (option->count() > 0 && (job_stdin || trial)) {
      return absl::InvalidArgumentError(
          absl::StrCat(info.flag, ": not used with ",
                       job_stdin ? "--job-stdin (the worker sets it)" : trial_flag));
    }
  }
  cmd->blas_core = blas_core;
  cmd->aten_capability = aten_capability;
  if (device != "cpu" && !CudaDeviceIndex(device).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device: '", device, "' is not cpu, cuda or cuda:N"));
  }
  if (device_opt->count() > 0 && (job_stdin || trial || stack_doctor)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--device: not used with ", job_stdin ? "--job-stdin (the job names its device)"
                                    : trial   ? trial_flag
                                              : "--stack-doctor (a CPU stack's)"));
  }
  cmd->device = device;
  if ((trial || stack_doctor) && any_model_flag) {
    return absl::InvalidArgumentError(absl::StrCat(
        first_model_flag != nullptr ? first_model_flag->get_name() : std::string("--json"),
        ": not used with ", trial ? trial_flag : "--stack-doctor"));
  }
  if (trial) {
    cmd->mode = blas_trial ? RunnerMode::kBlasTrial : RunnerMode::kAtenTrial;
    return true;
  }
  if ((job_stdin || platform || calibrate) && any_model_flag) {
    const std::string flag = first_model_flag != nullptr ? first_model_flag->get_name()
                             : describe                  ? describe_opt->get_name()
                                                         : json_opt->get_name();
    return absl::InvalidArgumentError(absl::StrCat(flag, ": not used with ",
                                                   job_stdin
                                                       ? "--job-stdin (the job comes from stdin)"
                                                   : platform ? "--platform"
                                                              : "--calibrate"));
  }
  if (framed_opt->count() > 0 && !platform && !calibrate && !stack_doctor) {
    return absl::InvalidArgumentError(
        "--framed: only with --platform, --calibrate or --stack-doctor");
  }
  const std::pair<bool, RunnerMode> modes[] = {{stack_doctor, RunnerMode::kStackDoctor},
                                               {job_stdin, RunnerMode::kJobStdin},
                                               {platform, RunnerMode::kPlatform},
                                               {calibrate, RunnerMode::kCalibrate}};
  for (const auto& [given, mode] : modes) {
    if (given) {
      cmd->mode = mode;
      return true;
    }
  }
  return false;
}

absl::StatusOr<v1::RunSettings> RunnerFlags::Settings(const CLI::App& app) const {
  v1::RunSettings settings;
  settings.set_ci(ci);
  settings.set_max_seconds(max_seconds);
  settings.set_warmup_steps(warmup_steps);
  settings.set_min_steps(min_steps);
  settings.set_max_steps(max_steps);
  settings.set_intra_op_threads(intra);
  settings.set_inter_op_threads(inter);
  settings.set_seed(seed);
  settings.set_profile(profile || profile_steps > 0);
  settings.set_profile_steps(profile_steps);
  // Zero means "default" in RunSettings; on the command line an explicit 0
  // (or a negative value) is a mistake worth naming.
  const std::pair<const char*, double> explicit_values[] = {{"--ci", ci},
                                                            {"--max_seconds", max_seconds},
                                                            {"--warmup_steps", warmup_steps},
                                                            {"--min_steps", min_steps},
                                                            {"--max_steps", max_steps},
                                                            {"--intra_op_threads", intra},
                                                            {"--inter_op_threads", inter},
                                                            {"--profile_steps", profile_steps}};
  for (const auto& [flag, value] : explicit_values) {
    if (app.get_option(flag)->count() > 0 && value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": ", value, " must be positive (omit the flag for the default)"));
    }
  }
  if (absl::Status valid = common::ValidateRunSettings(settings); !valid.ok()) {
    return AsFlagError(valid);
  }
  // ValidateRunSettings compares max_steps with min_steps only when both are
  // given; with defaults filled in the pair must still be consistent.
  const v1::RunSettings effective = common::WithRunDefaults(settings);
  if (effective.max_steps() < effective.min_steps()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_steps: ", effective.max_steps(), " is below --min_steps ", effective.min_steps()));
  }
  return settings;
}

absl::StatusOr<RunnerCommand> RunnerFlags::ModelCommand(const CLI::App& app,
                                                        RunnerCommand cmd) const {
  if (family_opt->count() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--family: required (allowed: ", AllowedFamilies(),
                     "); or pass --job-stdin or --platform. See --help."));
  }
  if (describe && json) {
    return absl::InvalidArgumentError("--json: --describe always prints JSON; pass one of them");
  }
  v1::ModelConfig& config = *cmd.job.mutable_config();
  config.set_family(family);
  auto& params = *config.mutable_params();
  // Only flags that were given become params, so a missing one is reported
  // as missing rather than as 0.
  for (const auto& [key, opt] : param_opts) {
    if (opt->count() > 0) params[key] = param_values.at(key);
  }
  for (const auto& [key, opt] : option_opts) {
    if (opt->count() > 0) (*config.mutable_options())[key] = option_values.at(key);
  }
  config.set_precision(precision);
  config.set_optimizer(optimizer);
  auto spec = ParseModelSpec(config, FieldStyle::kFlag);
  if (!spec.ok()) return spec.status();
  cmd.spec = *spec;
  *cmd.job.mutable_config() = NormalizedConfig(config);
  absl::StatusOr<v1::RunSettings> settings = Settings(app);
  if (!settings.ok()) return settings.status();
  *cmd.job.mutable_settings() = *settings;
  cmd.job.set_device(device);
  cmd.mode = describe ? RunnerMode::kDescribe : RunnerMode::kMeasure;
  return cmd;
}

}  // namespace

absl::StatusOr<RunnerCommand> ParseCommandLine(int argc, const char* const* argv) {
  CLI::App app{"paradnn-runner: builds and times one ParaDnn model with LibTorch",
               "paradnn-runner"};
  app.footer(kFooter);
  app.set_version_flag("--version", std::string("paradnn-runner ") + common::kVersion);
  RunnerFlags flags;
  flags.AddModeFlags(app);
  flags.AddModelFlags(app);
  flags.AddRunSettingFlags(app);
  app.add_option("--log-level,--log_level", flags.log_level, common::kLogLevels);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    RunnerCommand help;
    help.mode = RunnerMode::kHelp;
    help.text = e.get_name() == "CallForVersion" ? std::string(e.what()) + "\n" : app.help();
    return help;
  } catch (const CLI::ParseError& e) {
    return absl::InvalidArgumentError(e.what());
  }
  RunnerCommand cmd;
  cmd.log_level = flags.log_level;
  cmd.json = flags.json;
  cmd.framed = flags.framed;
  absl::StatusOr<bool> complete = flags.ModeCommand(&cmd);
  if (!complete.ok()) return complete.status();
  if (*complete) return cmd;
  return flags.ModelCommand(app, std::move(cmd));
}

}  // namespace paradnn::runner
