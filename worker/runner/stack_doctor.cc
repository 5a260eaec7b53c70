#include "worker/runner/stack_doctor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/runner/platform.h"

extern char** environ;

namespace paradnn::runner {
namespace {

std::string Name(const v1::StackFinding& f) { return f.setting(); }

}  // namespace

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

std::vector<std::string> BlasCoreCandidates(const std::vector<std::string>& flags) {
  const std::set<std::string> f(flags.begin(), flags.end());
  auto has = [&](std::initializer_list<const char*> names) {
    return std::all_of(names.begin(), names.end(), [&](const char* n) { return f.count(n) > 0; });
  };
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
  std::vector<std::string> all = BlasCoreCandidates(flags);
  std::vector<std::string> modern;
  for (const std::string& core : all) {
    if (core != "Prescott" && core != "Nehalem" && core != "Sandybridge") modern.push_back(core);
  }
  if (!modern.empty()) return modern;
  return all;
}

BlasDecision DecideBlasCore(const BlasTrial& as_installed, const std::vector<BlasTrial>& others) {
  BlasDecision decision;
  decision.as_installed_core = as_installed.core;
  auto finding = [](const BlasTrial& trial, bool installed) {
    v1::StackFinding f;
    f.set_component("blas_core");
    f.set_setting(installed ? trial.core : trial.requested);
    f.set_flops_per_sec(trial.flops_per_sec);
    f.set_max_relative_error(trial.max_relative_error);
    f.set_as_installed(installed);
    if (!trial.error.empty()) {
      f.set_note(trial.error);
    } else if (!installed && trial.core != trial.requested) {
      f.set_note(absl::StrCat("not a core this OpenBLAS knows: it ran ", trial.core, " instead"));
    } else if (trial.max_relative_error < 0 || trial.max_relative_error > kMaxGemmRelativeError) {
      f.set_note(absl::StrFormat("wrong results: float32 GEMM error %.3g against float64 "
                                 "(allowed %.0e)",
                                 trial.max_relative_error, kMaxGemmRelativeError));
    } else {
      f.set_correct(true);
    }
    return f;
  };
  decision.findings.push_back(finding(as_installed, /*installed=*/true));
  for (const BlasTrial& trial : others) {
    // The installed core's own name needs no second trial.
    if (trial.requested == as_installed.core && trial.error.empty()) continue;
    decision.findings.push_back(finding(trial, /*installed=*/false));
  }
  const v1::StackFinding& installed = decision.findings.front();
  const v1::StackFinding* best = nullptr;
  for (const v1::StackFinding& f : decision.findings) {
    if (f.correct() && (best == nullptr || f.flops_per_sec() > best->flops_per_sec())) best = &f;
  }
  int chosen_index = 0;
  if (best != nullptr && best != &installed &&
      (!installed.correct() || best->flops_per_sec() > kCoreSwitchFactor * installed.flops_per_sec())) {
    chosen_index = static_cast<int>(best - decision.findings.data());
    decision.chosen = Name(*best);
  }
  if (best != nullptr && installed.flops_per_sec() > 0) {
    decision.speedup_over_installed =
        std::max(1.0, best->flops_per_sec() / installed.flops_per_sec());
  }
  decision.findings[chosen_index].set_chosen(true);
  return decision;
}

std::string BlasTrialJson(const BlasTrial& trial) {
  nlohmann::json j = {{"requested", trial.requested},
                      {"core", trial.core},
                      {"flops_per_sec", trial.flops_per_sec},
                      {"max_relative_error", trial.max_relative_error},
                      {"error", trial.error}};
  return j.dump();
}

absl::StatusOr<BlasTrial> ParseBlasTrialJson(absl::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("blas trial: not a JSON object: ", line));
  }
  BlasTrial trial;
  try {
    trial.requested = j.value("requested", "");
    trial.core = j.value("core", "");
    trial.flops_per_sec = j.value("flops_per_sec", 0.0);
    trial.max_relative_error = j.value("max_relative_error", -1.0);
    trial.error = j.value("error", "");
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("blas trial: ", e.what()));
  }
  return trial;
}

BlasTrial RunBlasTrial(const std::string& runner_path, const std::string& core, double timeout_s) {
  BlasTrial trial;
  trial.requested = core;
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (absl::StartsWith(*e, "OPENBLAS_CORETYPE=") ||
        absl::StartsWith(*e, "PARADNN_BLAS_CORE_CHOICE=")) {
      // The as-installed trial keeps an OPENBLAS_CORETYPE the user set: that
      // is the stack as it stands.
      if (core.empty() && absl::StartsWith(*e, "OPENBLAS_CORETYPE=")) env_strings.emplace_back(*e);
      continue;
    }
    env_strings.emplace_back(*e);
  }
  if (!core.empty()) env_strings.push_back("OPENBLAS_CORETYPE=" + core);
  env_strings.push_back("PARADNN_BLAS_CORE_CHOICE=trial");
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string arg0 = runner_path, arg1 = "--blas-trial";
  char* argv[] = {arg0.data(), arg1.data(), nullptr};

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    trial.error = absl::StrCat("pipe: ", std::strerror(errno));
    return trial;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  // The trial stays in our process group (a worker that kills the doctor's
  // group kills its trial too) and dies with us (--blas-trial sets
  // PR_SET_PDEATHSIG); it starts no children of its own.
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, runner_path.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    trial.error = absl::StrCat("cannot run ", runner_path, ": ", std::strerror(spawned));
    return trial;
  }
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fd = {pipe_fds[0], POLLIN, 0};
    const int ready = poll(&fd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t got = read(pipe_fds[0], buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    output.append(buffer, static_cast<size_t>(got));
  }
  close(pipe_fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    trial.error = absl::StrFormat("trial did not finish in %.0f s", timeout_s);
    return trial;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // A core whose kernels the CPU cannot execute dies of SIGILL.
    trial.error = WIFSIGNALED(status)
                      ? absl::StrCat("trial died of signal ", WTERMSIG(status),
                                     WTERMSIG(status) == SIGILL ? " (illegal instruction)" : "")
                      : absl::StrCat("trial exited with status ", WEXITSTATUS(status));
    return trial;
  }
  const size_t newline = output.find('\n');
  absl::StatusOr<BlasTrial> parsed =
      ParseBlasTrialJson(newline == std::string::npos ? output : output.substr(0, newline));
  if (!parsed.ok()) {
    trial.error = std::string(parsed.status().message());
    return trial;
  }
  parsed->requested = core;
  return *parsed;
}

BlasDecision RunBlasDoctor(const std::string& runner_path, const std::vector<std::string>& flags) {
  constexpr double kTrialTimeoutS = 60;
  // Two interleaved rounds, keeping each core's faster one: a shared host
  // drifts by tens of percent over seconds, and the order must not decide.
  constexpr int kRounds = 2;
  // The faster round's speed, the worst round's error: a core that is wrong
  // or crashes in any round is not correct.
  auto keep_faster = [](BlasTrial* kept, const BlasTrial& trial) {
    if (!kept->error.empty()) return;
    if (!trial.error.empty()) {
      kept->error = trial.error;
      return;
    }
    const double worst_error = std::max(kept->max_relative_error, trial.max_relative_error);
    if (trial.flops_per_sec > kept->flops_per_sec) *kept = trial;
    kept->max_relative_error = worst_error;
  };
  BlasTrial installed = RunBlasTrial(runner_path, "", kTrialTimeoutS);
  std::vector<BlasTrial> others;
  for (const std::string& core : BlasCoresToTry(flags)) {
    if (core == installed.core && installed.error.empty()) continue;
    others.push_back(RunBlasTrial(runner_path, core, kTrialTimeoutS));
  }
  for (int round = 1; round < kRounds; ++round) {
    for (BlasTrial& other : others) {
      if (!other.error.empty()) continue;  // a core that crashed is not tried again
      keep_faster(&other, RunBlasTrial(runner_path, other.requested, kTrialTimeoutS));
    }
    if (installed.error.empty()) keep_faster(&installed, RunBlasTrial(runner_path, "", kTrialTimeoutS));
  }
  return DecideBlasCore(installed, others);
}

std::string BlasDoctorCacheKey(absl::string_view cpu_model, absl::string_view blas_backend,
                               absl::string_view openblas_coretype_env) {
  return absl::StrFormat(
      "%016x", Fnv1a64(absl::StrCat(cpu_model, "\n", blas_backend, "\n", openblas_coretype_env)));
}

namespace {

std::string CachePath(const std::string& state_dir, const std::string& key) {
  return absl::StrCat(state_dir, "/blas-core-", key, ".binpb");
}

}  // namespace

absl::StatusOr<BlasDecision> ReadCachedBlasDecision(const std::string& state_dir,
                                                    const std::string& key) {
  std::ifstream in(CachePath(state_dir, key), std::ios::binary);
  if (!in) return absl::NotFoundError("no cached BLAS core decision");
  std::stringstream buffer;
  buffer << in.rdbuf();
  v1::Platform stored;
  if (!stored.ParseFromString(buffer.str()) || stored.stack_findings_size() == 0) {
    return absl::DataLossError(absl::StrCat(CachePath(state_dir, key), " does not parse"));
  }
  BlasDecision decision;
  decision.chosen = stored.blas_core();
  decision.findings.assign(stored.stack_findings().begin(), stored.stack_findings().end());
  for (const v1::StackFinding& f : decision.findings) {
    if (f.as_installed()) decision.as_installed_core = f.setting();
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
    const std::vector<std::string> candidates = BlasCoreCandidates(HostCpuFlags());
    if (std::find(candidates.begin(), candidates.end(), decision.chosen) == candidates.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cached BLAS core ", decision.chosen, " is not one this CPU's flags allow"));
    }
  }
  return decision;
}

absl::Status WriteCachedBlasDecision(const std::string& state_dir, const std::string& key,
                                     const BlasDecision& decision) {
  // mkdir -p of state_dir.
  for (size_t slash = state_dir.find('/', 1);; slash = state_dir.find('/', slash + 1)) {
    const std::string prefix = state_dir.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::UnavailableError(absl::StrCat("mkdir ", prefix, ": ", std::strerror(errno)));
    }
    if (slash == std::string::npos) break;
  }
  v1::Platform stored;
  stored.set_blas_core(decision.chosen);
  for (const v1::StackFinding& f : decision.findings) *stored.add_stack_findings() = f;
  const std::string path = CachePath(state_dir, key);
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
