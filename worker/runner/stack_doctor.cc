#include "worker/runner/stack_doctor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/fnv1a.h"
#include "common/subprocess.h"
#include "hostfacts/host_facts.h"
#include "worker/runner/platform.h"

extern char** environ;

namespace paradnn::runner {

double MaxGemmRelativeError(const float* a, const float* b, const float* c, int64_t m, int64_t n,
                            int64_t k, int64_t samples) {
  const int64_t total = m * n;
  const int64_t count = std::min(std::max<int64_t>(samples, 1), total);
  // A stride coprime with most sizes walks rows and columns evenly.
  const int64_t stride = count == total ? 1 : std::max<int64_t>(1, total / count) | 1;
  double worst = 0;
  int64_t index = 0;
  for (int64_t s = 0; s < count; ++s, index = (index + stride) % total) {
    const int64_t i = index / n, j = index % n;
    double reference = 0, bound = 0;
    for (int64_t p = 0; p < k; ++p) {
      const double product = static_cast<double>(a[i * k + p]) * b[p * n + j];
      reference += product;
      bound += std::fabs(product);
    }
    const double value = c[i * n + j];
    if (!std::isfinite(value)) return 1;
    const double error = std::fabs(value - reference) / std::max(bound, 1e-30);
    worst = std::max(worst, error);
  }
  return worst;
}

namespace {

std::vector<std::string> Without(const std::vector<std::string>& all,
                                 std::initializer_list<const char*> slow) {
  std::vector<std::string> kept;
  for (const std::string& value : all) {
    if (std::none_of(slow.begin(), slow.end(), [&](const char* s) { return value == s; })) {
      kept.push_back(value);
    }
  }
  return kept.empty() ? all : kept;
}

// "Does the CPU have all of these flags?", over /proc/cpuinfo's flag names.
class CpuFlagSet {
 public:
  explicit CpuFlagSet(const std::vector<std::string>& flags) : flags_(flags.begin(), flags.end()) {}
  bool operator()(std::initializer_list<const char*> names) const {
    return std::all_of(names.begin(), names.end(),
                       [&](const char* n) { return flags_.count(n) > 0; });
  }

 private:
  std::set<std::string> flags_;
};

}  // namespace

std::vector<std::string> BlasCoreCandidates(const std::vector<std::string>& flags) {
  const CpuFlagSet has(flags);
  std::vector<std::string> cores;
  if (!has({"pni"}) && !has({"sse3"})) return cores;
  cores.push_back("Prescott");
  if (has({"sse4_2"})) cores.push_back("Nehalem");
  if (has({"avx"})) cores.push_back("Sandybridge");
  if (has({"avx2", "fma"})) cores.push_back("Haswell");
  const bool skylakex = has({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"});
  if (skylakex) cores.push_back("SkylakeX");
  if (skylakex && has({"avx512_bf16"})) cores.push_back("Cooperlake");
  if (skylakex && has({"avx512_bf16", "amx_bf16", "avx512_fp16"})) {
    cores.push_back("SapphireRapids");
  }
  return cores;
}

std::vector<std::string> BlasCoresToTry(const std::vector<std::string>& flags) {
  return Without(BlasCoreCandidates(flags), {"Prescott", "Nehalem", "Sandybridge"});
}

std::vector<std::string> AtenCapabilityCandidates(const std::vector<std::string>& flags) {
  const CpuFlagSet has(flags);
  std::vector<std::string> values;
  if (!has({"pni"}) && !has({"sse3"})) return values;
  values.push_back("default");
  if (has({"avx2", "fma"})) values.push_back("avx2");
  if (has({"avx512f", "avx512bw", "avx512dq", "avx512vl"})) values.push_back("avx512");
  return values;
}

std::vector<std::string> AtenCapabilitiesToTry(const std::vector<std::string>& flags) {
  return Without(AtenCapabilityCandidates(flags), {"default"});
}

std::string AtenCapabilityName(absl::string_view usage) {
  const std::string upper = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(usage));
  if (upper == "NO AVX" || upper == "DEFAULT") return "default";
  return absl::AsciiStrToLower(upper);
}

const StackSetting& BlasCoreSetting() {
  static const StackSetting* setting = new StackSetting{platform::FindStackSettingInfo("blas_core"),
                                                        "--blas-trial",
                                                        "not a core this OpenBLAS knows",
                                                        kMaxGemmRelativeError,
                                                        /*rounds=*/2,
                                                        &BlasCoreCandidates,
                                                        &BlasCoresToTry};
  return *setting;
}

const StackSetting& AtenCapabilitySetting() {
  static const StackSetting* setting =
      new StackSetting{platform::FindStackSettingInfo("aten_capability"),
                       "--aten-trial",
                       "not a capability this LibTorch takes",
                       kMaxElementwiseRelativeError,
                       /*rounds=*/4,
                       &AtenCapabilityCandidates,
                       &AtenCapabilitiesToTry};
  return *setting;
}

const std::vector<const StackSetting*>& StackSettings() {
  static const auto* settings =
      new std::vector<const StackSetting*>{&BlasCoreSetting(), &AtenCapabilitySetting()};
  return *settings;
}

const StackSetting* FindStackSetting(absl::string_view component) {
  for (const StackSetting* setting : StackSettings()) {
    if (setting->info->component == component) return setting;
  }
  return nullptr;
}

StackDecision DecideStackSetting(const StackSetting& setting, const StackTrial& as_installed,
                                 const std::vector<StackTrial>& others) {
  StackDecision decision;
  decision.as_installed = as_installed.used;
  auto finding = [&setting](const StackTrial& trial, bool installed) {
    v1::StackFinding f;
    f.set_component(setting.info->component);
    f.set_setting(installed ? trial.used : trial.requested);
    f.set_flops_per_sec(trial.rate);
    f.set_max_relative_error(trial.max_relative_error);
    f.set_as_installed(installed);
    if (!trial.error.empty()) {
      f.set_note(trial.error);
    } else if (!installed && trial.used != trial.requested) {
      f.set_note(absl::StrCat(setting.unknown_note, ": it ran ", trial.used, " instead"));
    } else if (trial.max_relative_error < 0 ||
               trial.max_relative_error > setting.max_relative_error) {
      f.set_note(absl::StrFormat("wrong results: %s error %.3g against float64 (allowed %.0e)",
                                 setting.info->workload, trial.max_relative_error,
                                 setting.max_relative_error));
    } else {
      f.set_correct(true);
    }
    return f;
  };
  decision.findings.push_back(finding(as_installed, /*installed=*/true));
  for (const StackTrial& trial : others) {
    // The installed value's own name needs no second trial.
    if (trial.requested == as_installed.used && trial.error.empty()) continue;
    decision.findings.push_back(finding(trial, /*installed=*/false));
  }
  const v1::StackFinding& installed = decision.findings.front();
  int best_index = -1;
  for (size_t i = 0; i < decision.findings.size(); ++i) {
    const v1::StackFinding& f = decision.findings[i];
    if (f.correct() &&
        (best_index < 0 || f.flops_per_sec() > decision.findings[best_index].flops_per_sec())) {
      best_index = static_cast<int>(i);
    }
  }
  const v1::StackFinding* best = best_index < 0 ? nullptr : &decision.findings[best_index];
  int chosen_index = 0;
  if (best_index > 0 && (!installed.correct() ||
                         best->flops_per_sec() > kCoreSwitchFactor * installed.flops_per_sec())) {
    chosen_index = best_index;
    decision.chosen = best->setting();
  }
  if (best != nullptr && installed.flops_per_sec() > 0) {
    decision.speedup_over_installed =
        std::max(1.0, best->flops_per_sec() / installed.flops_per_sec());
  }
  decision.findings[chosen_index].set_chosen(true);
  return decision;
}

std::string StackTrialJson(const StackTrial& trial) {
  nlohmann::json j = {{"requested", trial.requested},
                      {"used", trial.used},
                      {"rate", trial.rate},
                      {"max_relative_error", trial.max_relative_error},
                      {"error", trial.error}};
  return j.dump();
}

absl::StatusOr<StackTrial> ParseStackTrialJson(absl::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("stack trial: not a JSON object: ", line));
  }
  StackTrial trial;
  try {
    trial.requested = j.value("requested", "");
    trial.used = j.value("used", "");
    trial.rate = j.value("rate", 0.0);
    trial.max_relative_error = j.value("max_relative_error", -1.0);
    trial.error = j.value("error", "");
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("stack trial: ", e.what()));
  }
  return trial;
}

namespace {

// This process's environment for a trial of `value` (empty: as installed)
// of `setting`: the setting's variables replaced, the trial marked.
std::vector<std::string> TrialEnvironment(const StackSetting& setting, const std::string& value) {
  const std::string variable = absl::StrCat(setting.info->env_var, "=");
  const std::string choice = absl::StrCat(setting.info->choice_env, "=");
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (absl::StartsWith(*e, variable) || absl::StartsWith(*e, choice)) {
      // The as-installed trial keeps a variable the user set: that is the
      // stack as it stands.
      if (value.empty() && absl::StartsWith(*e, variable)) env_strings.emplace_back(*e);
      continue;
    }
    env_strings.emplace_back(*e);
  }
  if (!value.empty()) env_strings.push_back(variable + value);
  env_strings.push_back(choice + "trial");
  return env_strings;
}

// Appends what `fd` yields until it closes (true) or `timeout_s` passes
// (false).
bool ReadUntilClosed(int fd, double timeout_s, std::string* output) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd ready_fd = {fd, POLLIN, 0};
    const int ready = poll(&ready_fd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
    output->append(buffer, static_cast<size_t>(got));
  }
}

}  // namespace

StackTrial RunStackTrial(const std::string& runner_path, const StackSetting& setting,
                         const std::string& value, double timeout_s) {
  StackTrial trial;
  trial.requested = value;
  const std::vector<std::string> env_strings = TrialEnvironment(setting, value);
  // The trial stays in our process group (a worker that kills the doctor's
  // group kills its trial too) and dies with us (the trial modes set
  // PR_SET_PDEATHSIG); it starts no children of its own. Its stdin and
  // stderr are ours; its stdout is read here.
  common::SpawnOptions options;
  options.stdin_fd = STDIN_FILENO;
  options.stderr_fd = STDERR_FILENO;
  options.environment = &env_strings;
  options.parent_death_signal = 0;
  options.own_process_group = false;
  absl::StatusOr<common::SpawnedChild> child =
      common::SpawnChild({runner_path, setting.trial_flag}, options);
  if (!child.ok()) {
    trial.error = std::string(child.status().message());
    return trial;
  }
  const pid_t pid = child->pid;
  std::string output;
  const bool timed_out = !ReadUntilClosed(child->stdout_fd.get(), timeout_s, &output);
  child->stdout_fd.Reset();
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    trial.error = absl::StrFormat("trial did not finish in %.0f s", timeout_s);
    return trial;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // Kernels the CPU cannot execute die of SIGILL.
    trial.error = WIFSIGNALED(status)
                      ? absl::StrCat("trial died of signal ", WTERMSIG(status),
                                     WTERMSIG(status) == SIGILL ? " (illegal instruction)" : "")
                      : absl::StrCat("trial exited with status ", WEXITSTATUS(status));
    return trial;
  }
  const size_t newline = output.find('\n');
  absl::StatusOr<StackTrial> parsed =
      ParseStackTrialJson(newline == std::string::npos ? output : output.substr(0, newline));
  if (!parsed.ok()) {
    trial.error = std::string(parsed.status().message());
    return trial;
  }
  parsed->requested = value;
  return *parsed;
}

StackDecision RunStackDoctor(const std::string& runner_path, const StackSetting& setting,
                             const std::vector<std::string>& flags) {
  constexpr double kTrialTimeoutS = 60;
  // Interleaved rounds, keeping each value's fastest: a shared host drifts
  // by tens of percent over seconds, and the order must not decide.
  // The faster round's speed, the worst round's error: a value that is
  // wrong or crashes in any round is not correct.
  auto keep_faster = [](StackTrial* kept, const StackTrial& trial) {
    if (!kept->error.empty()) return;
    if (!trial.error.empty()) {
      kept->error = trial.error;
      return;
    }
    const double worst_error = std::max(kept->max_relative_error, trial.max_relative_error);
    if (trial.rate > kept->rate) *kept = trial;
    kept->max_relative_error = worst_error;
  };
  auto run = [&](const std::string& value) {
    return RunStackTrial(runner_path, setting, value, kTrialTimeoutS);
  };
  StackTrial installed = run("");
  std::vector<StackTrial> others;
  for (const std::string& value : setting.to_try(flags)) {
    if (value == installed.used && installed.error.empty()) continue;
    others.push_back(run(value));
  }
  for (int round = 1; round < setting.rounds; ++round) {
    for (StackTrial& other : others) {
      if (!other.error.empty()) continue;  // a value that crashed is not tried again
      keep_faster(&other, run(other.requested));
    }
    if (installed.error.empty()) keep_faster(&installed, run(""));
  }
  return DecideStackSetting(setting, installed, others);
}

std::string StackDoctorCacheKey(absl::string_view cpu_model, absl::string_view library,
                                absl::string_view env_value) {
  return absl::StrFormat("%016x",
                         common::Fnv1a64(absl::StrCat(cpu_model, "\n", library, "\n", env_value)));
}

namespace {

std::string CachePath(const std::string& state_dir, const StackSetting& setting,
                      const std::string& key) {
  std::string prefix = setting.info->component;
  std::replace(prefix.begin(), prefix.end(), '_', '-');
  return absl::StrCat(state_dir, "/", prefix, "-", key, ".binpb");
}

}  // namespace

absl::StatusOr<StackDecision> ReadCachedStackDecision(const std::string& state_dir,
                                                      const StackSetting& setting,
                                                      const std::string& key) {
  const std::string path = CachePath(state_dir, setting, key);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("no cached ", setting.info->component, " decision"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  v1::Platform stored;
  if (!stored.ParseFromString(buffer.str()) || stored.stack_findings_size() == 0) {
    return absl::DataLossError(absl::StrCat(path, " does not parse"));
  }
  StackDecision decision;
  decision.findings.assign(stored.stack_findings().begin(), stored.stack_findings().end());
  for (const v1::StackFinding& f : decision.findings) {
    if (f.component() != setting.info->component) {
      return absl::DataLossError(absl::StrCat(path, " holds ", f.component(), " findings"));
    }
    if (f.as_installed()) decision.as_installed = f.setting();
    if (f.chosen() && !f.as_installed()) decision.chosen = f.setting();
  }
  double best = 0, installed = 0;
  for (const v1::StackFinding& f : decision.findings) {
    if (f.correct()) best = std::max(best, f.flops_per_sec());
    if (f.as_installed()) installed = f.flops_per_sec();
  }
  if (installed > 0) decision.speedup_over_installed = std::max(1.0, best / installed);
  // A choice this CPU cannot run (a VM moved to a host without AVX-512, say)
  // is stale: decide again.
  if (!decision.chosen.empty()) {
    const std::vector<std::string> candidates =
        setting.candidates(hostfacts::ReadCpuTopology().flags);
    if (std::find(candidates.begin(), candidates.end(), decision.chosen) == candidates.end()) {
      return absl::FailedPreconditionError(absl::StrCat("cached ", setting.info->component, " ",
                                                        decision.chosen,
                                                        " is not one this CPU's flags allow"));
    }
  }
  return decision;
}

absl::Status WriteCachedStackDecision(const std::string& state_dir, const StackSetting& setting,
                                      const std::string& key, const StackDecision& decision) {
  // mkdir -p of state_dir.
  for (size_t slash = state_dir.find('/', 1);; slash = state_dir.find('/', slash + 1)) {
    const std::string prefix = state_dir.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::UnavailableError(absl::StrCat("mkdir ", prefix, ": ", std::strerror(errno)));
    }
    if (slash == std::string::npos) break;
  }
  v1::Platform stored;
  for (const v1::StackFinding& f : decision.findings) *stored.add_stack_findings() = f;
  const std::string path = CachePath(state_dir, setting, key);
  const std::string temporary = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out || !stored.SerializeToOstream(&out)) {
      return absl::UnavailableError(absl::StrCat("cannot write ", temporary));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("rename to ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace paradnn::runner
