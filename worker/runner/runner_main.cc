// paradnn-runner: builds and times one ParaDnn model with LibTorch
// (docs/contracts.md). Modes: --job-stdin (framed protocol for the worker),
// --platform, --calibrate, and standalone measurement / --describe from flags.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <torch/version.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/framing.h"
#include "common/logging.h"
#include "common/mutex_checks.h"
#include "hostfacts/host_facts.h"
#include "model/model_counts.h"
#include "worker/runner/allocator_settings.h"
#include "worker/runner/calibration.h"
#include "worker/runner/cli.h"
#include "worker/runner/cuda_calibration.h"
#include "worker/runner/cuda_driver.h"
#include "worker/runner/platform.h"
#include "worker/runner/platform_torch.h"
#include "worker/runner/report.h"
#include "worker/runner/stack_doctor.h"
#include "worker/runner/trainer.h"
#include "worker/runner/zygote_server.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CountWork;
namespace {

constexpr int kExitUsage = 2;

bool WriteStdout(const std::string& text) {
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  return std::fflush(stdout) == 0 && ok;
}

// Streams steps and logs as framed RunnerEvents on `fd`.
class FrameObserver : public JobObserver {
 public:
  explicit FrameObserver(int fd) : fd_(fd) {}

  void OnStep(const v1::StepMetric& step) override {
    v1::RunnerEvent event;
    *event.mutable_step() = step;
    Write(event);
  }
  void OnLog(const std::string& line) override {
    spdlog::info("{}", line);
    v1::RunnerEvent event;
    event.set_log(line);
    Write(event);
  }

 private:
  void Write(const v1::RunnerEvent& event) {
    if (broken_) return;
    if (absl::Status s = common::WriteFrame(fd_, event); !s.ok()) {
      // The reader is gone; keep measuring quietly, the result write reports it.
      spdlog::warn("writing an event frame failed: {}", std::string(s.message()));
      broken_ = true;
    }
  }
  int fd_;
  bool broken_ = false;
};

// Logs only: standalone runs print the result at the end.
class LogObserver : public JobObserver {
 public:
  void OnStep(const v1::StepMetric&) override {}
  void OnLog(const std::string& line) override { spdlog::info("{}", line); }
};

int RunJobStdin() {
  // stdout carries frames only. Keep the real stdout on a private descriptor
  // and point fd 1 at stderr, so that anything a library prints (oneDNN
  // verbose, stray printf) cannot corrupt the frame stream.
  const int frames_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (frames_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    spdlog::error("cannot set up the frame channel on stdout");
    return 1;
  }
  v1::RunnerJob job;
  v1::Measurement result;
  absl::StatusOr<bool> got = common::ReadFrame(STDIN_FILENO, &job);
  if (!got.ok() || !*got) {
    result.set_outcome(v1::ERROR);
    result.set_device("cpu");
    result.set_error(got.ok() ? "reading the RunnerJob: stdin closed before a frame arrived"
                              : "reading the RunnerJob: " + std::string(got.status().message()));
    spdlog::error("{}", result.error());
  } else {
    FrameObserver observer(frames_fd);
    result = RunJob(job, &observer);
    spdlog::info("result: {} {}", v1::Outcome_Name(result.outcome()), result.error());
  }
  v1::RunnerEvent event;
  *event.mutable_result() = std::move(result);
  if (absl::Status s = common::WriteFrame(frames_fd, event); !s.ok()) {
    spdlog::error("writing the result frame failed: {}", std::string(s.message()));
    return 1;
  }
  close(frames_fd);
  return 0;
}

// Runs the job and leaves at once: the result is on its way, and LibTorch's
// teardown at a normal exit (static destructors, thread pools) took about
// 0.2 s per job, which the worker waits for before it reports the result.
[[noreturn]] void RunJobStdinAndExit() {
  const int code = RunJobStdin();
  spdlog::default_logger()->flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

int WritePlatform(const v1::Platform& platform, bool framed) {
  if (framed) {
    absl::Status s = common::WriteFrame(STDOUT_FILENO, platform);
    if (!s.ok()) spdlog::error("writing the platform frame failed: {}", std::string(s.message()));
    return s.ok() ? 0 : 1;
  }
  absl::StatusOr<std::string> json = ToJson(platform);
  if (!json.ok()) {
    spdlog::error("{}", std::string(json.status().message()));
    return 1;
  }
  return WriteStdout(*json + "\n") ? 0 : 1;
}

// A CUDA device's record, or why there is none (logged; exit 1).
int WriteCudaPlatform(const absl::StatusOr<v1::Platform>& platform, bool framed) {
  if (!platform.ok()) {
    spdlog::error("{}", std::string(platform.status().message()));
    return 1;
  }
  return WritePlatform(*platform, framed);
}

int RunPlatform(const RunnerCommand& cmd) {
  if (cmd.device == "cpu") {
    v1::Platform platform = CollectPlatform();
    platform.set_start_probe_flops_per_sec(ProbeAtCalibrationThreads());
    return WritePlatform(platform, cmd.framed);
  }
  return WriteCudaPlatform(CollectCudaPlatform(cmd.device), cmd.framed);
}

std::string SelfPath() {
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return "";
  self[length] = '\0';
  return self;
}

// What a setting's decision depends on besides the CPU: the library build.
std::string LibraryOf(const StackSetting& setting) {
  if (&setting == &BlasCoreSetting()) return DescribeLoadedBlas().description;
  return absl::StrCat("LibTorch ", TORCH_VERSION);
}

// The doctor's decision of `setting` for this host, from the cache when
// there is one.
StackDecision DoctorDecision(const StackSetting& setting, bool use_cache) {
  const char* env_value = std::getenv(setting.info->env_var);
  const hostfacts::CpuTopology cpu = hostfacts::ReadCpuTopology();
  const std::string key =
      StackDoctorCacheKey(absl::StrCat(cpu.model_name, " ", hostfacts::RelevantCpuFlags(cpu.flags)),
                          LibraryOf(setting), env_value == nullptr ? "" : env_value);
  const std::string state_dir = DefaultRunnerStateDir();
  const std::string component = setting.info->component;
  if (use_cache) {
    if (absl::StatusOr<StackDecision> cached = ReadCachedStackDecision(state_dir, setting, key);
        cached.ok()) {
      spdlog::debug("{}: cached decision in {}", component, state_dir);
      return *cached;
    }
  }
  spdlog::info("{}: trying the values this CPU supports (once per host)", component);
  StackDecision decision = RunStackDoctor(SelfPath(), setting, cpu.flags);
  for (const v1::StackFinding& f : decision.findings) {
    spdlog::info("{} {}{}: {:.1f} G/s {}, error {:.2g}{}{}", component, f.setting(),
                 f.as_installed() ? " (as installed)" : "", f.flops_per_sec() / 1e9,
                 setting.info->workload, f.max_relative_error(), f.chosen() ? ", chosen" : "",
                 f.note().empty() ? "" : " - " + f.note());
  }
  if (absl::Status s = WriteCachedStackDecision(state_dir, setting, key, decision); !s.ok()) {
    spdlog::warn("{}: not cached: {}", component, std::string(s.message()));
  }
  return decision;
}

// Whether the doctor has anything to choose for `setting` in this process.
bool Decidable(const StackSetting& setting) {
  if (&setting == &BlasCoreSetting()) return !DescribeOpenBlasCore().name.empty();
  return !setting.candidates(hostfacts::ReadCpuTopology().flags).empty();
}

// Sets ATEN_CPU_CAPABILITY for --aten-capability. ATen reads it at its
// first kernel dispatch, so setting it before any tensor work is enough (and
// an exec for the BLAS core carries it along). Does nothing when a worker
// already chose.
void EnsureAtenCapability(const std::string& requested) {
  const StackSetting& setting = AtenCapabilitySetting();
  if (std::getenv(setting.info->choice_env) != nullptr) return;
  std::string value, choice;
  if (requested == "as-installed" || !Decidable(setting)) {
    choice = "as-installed";
  } else if (requested == "auto") {
    value = DoctorDecision(setting, /*use_cache=*/true).chosen;
    choice = "auto";
  } else {
    value = requested;
    choice = "forced";
  }
  if (!value.empty()) setenv(setting.info->env_var, value.c_str(), 1);
  setenv(setting.info->choice_env, choice.c_str(), 1);
}

// Runs this process on the OpenBLAS core --blas-core asks for. OpenBLAS
// picks its kernels when it loads, so another core means executing this
// binary again with OPENBLAS_CORETYPE set (and PARADNN_BLAS_CORE_CHOICE,
// which also tells the new process that the choice is made). Does nothing
// when a worker or an earlier exec already chose.
void EnsureBlasCore(const std::string& blas_core, char** argv) {
  if (std::getenv("PARADNN_BLAS_CORE_CHOICE") != nullptr) return;
  std::string core, choice;
  if (blas_core == "as-installed") {
    setenv("PARADNN_BLAS_CORE_CHOICE", "as-installed", 1);
    return;
  }
  if (blas_core == "auto") {
    if (!Decidable(BlasCoreSetting())) {
      setenv("PARADNN_BLAS_CORE_CHOICE", "as-installed", 1);  // not OpenBLAS: nothing to choose
      return;
    }
    core = DoctorDecision(BlasCoreSetting(), /*use_cache=*/true).chosen;
    choice = "auto";
  } else {
    core = blas_core;
    choice = "forced";
  }
  if (core.empty() || core == DescribeOpenBlasCore().name) {
    setenv("PARADNN_BLAS_CORE_CHOICE", choice.c_str(), 1);
    return;
  }
  const char* previous_core = std::getenv("OPENBLAS_CORETYPE");
  const std::string previous = previous_core == nullptr ? "" : previous_core;
  const std::string self = SelfPath();
  if (!self.empty()) {
    setenv("PARADNN_BLAS_CORE_CHOICE", choice.c_str(), 1);
    setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
    spdlog::debug("blas core: running again with OPENBLAS_CORETYPE={}", core);
    execv(self.c_str(), argv);
  }
  // Still here: the process stays on the installed core and says so.
  spdlog::warn("blas core: exec with OPENBLAS_CORETYPE={} failed ({}); staying on {}", core,
               self.empty() ? "no path to this binary" : std::strerror(errno),
               DescribeOpenBlasCore().name);
  if (previous.empty()) {
    unsetenv("OPENBLAS_CORETYPE");
  } else {
    setenv("OPENBLAS_CORETYPE", previous.c_str(), 1);
  }
  setenv("PARADNN_BLAS_CORE_CHOICE", "as-installed", 1);
}

int RunStackTrialMode(const StackSetting& setting) {
  // A trial outlives no doctor (stack_doctor.cc waits for it).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  StackTrial trial = &setting == &BlasCoreSetting() ? MeasureBlasTrial() : MeasureAtenTrial();
  if (const char* requested = std::getenv(setting.info->env_var)) trial.requested = requested;
  return WriteStdout(StackTrialJson(trial) + "\n") ? 0 : 1;
}

// Every setting decided (trials in fresh processes, so this process's own
// libraries stay as they loaded); the Platform reports the chosen values.
int RunStackDoctorMode(bool framed) {
  v1::Platform report = CollectPlatform();
  report.clear_stack_findings();
  for (const StackSetting* setting : StackSettings()) {
    if (!Decidable(*setting)) {
      spdlog::info("{}: nothing to try on this stack", setting->info->component);
      continue;
    }
    const StackDecision decision = DoctorDecision(*setting, /*use_cache=*/true);
    const std::string in_effect = decision.chosen.empty() ? decision.as_installed : decision.chosen;
    if (setting == &BlasCoreSetting()) {
      report.set_blas_core(in_effect);
      report.set_blas_core_choice("auto");
    } else {
      report.set_aten_capability(in_effect);
      report.set_aten_capability_choice("auto");
    }
    for (const v1::StackFinding& f : decision.findings) *report.add_stack_findings() = f;
  }
  return WritePlatform(report, framed);
}

int RunCalibrate(const RunnerCommand& cmd) {
  if (cmd.device == "cpu") {
    return WritePlatform(CalibratedPlatform(CalibrationOptions{}), cmd.framed);
  }
  CudaCalibrationOptions options;
  options.device = cmd.device;
  return WriteCudaPlatform(CalibratedCudaPlatform(options), cmd.framed);
}

int RunMeasure(const RunnerCommand& cmd) {
  LogObserver observer;
  const v1::Measurement m = RunJob(cmd.job, &observer);
  std::string text;
  if (cmd.json) {
    absl::StatusOr<std::string> json = ToJson(m);
    if (!json.ok()) {
      spdlog::error("{}", std::string(json.status().message()));
      return 1;
    }
    text = *json + "\n";
  } else {
    text = FormatSummary(m);
  }
  if (!WriteStdout(text)) return 1;
  if (m.outcome() != v1::OK) {
    spdlog::error("{}: {}", v1::Outcome_Name(m.outcome()), m.error());
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  // A worker that goes away must not kill us mid-write; writes report EPIPE.
  signal(SIGPIPE, SIG_IGN);
  // Before any model allocates; the zygote's job processes inherit it.
  ApplyAllocatorSettings();
  if (argc == 2 && std::strcmp(argv[1], "--zygote") == 0) {
    // The worker's zygote (common/zygote_protocol.h): LibTorch is loaded
    // once here and each job process forked from this single thread runs
    // as --job-stdin would.
    if (absl::Status s = common::ConfigureLogging("paradnn-runner", "info"); !s.ok()) {
      return kExitUsage;
    }
    return worker::ServeZygote(STDIN_FILENO, []() -> int { RunJobStdinAndExit(); });
  }
  absl::StatusOr<RunnerCommand> cmd = ParseCommandLine(argc, argv);
  if (!cmd.ok()) {
    std::fprintf(stderr, "paradnn-runner: %s\n", std::string(cmd.status().message()).c_str());
    return kExitUsage;
  }
  if (cmd->mode == RunnerMode::kHelp) return WriteStdout(cmd->text) ? 0 : 1;
  if (absl::Status s = common::ConfigureLogging("paradnn-runner", cmd->log_level); !s.ok()) {
    std::fprintf(stderr, "paradnn-runner: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  if (cmd->mode == RunnerMode::kMeasure || cmd->mode == RunnerMode::kCalibrate ||
      cmd->mode == RunnerMode::kPlatform) {
    EnsureAtenCapability(cmd->aten_capability);
    EnsureBlasCore(cmd->blas_core, argv);
  }
  switch (cmd->mode) {
    case RunnerMode::kJobStdin:
      RunJobStdinAndExit();
    case RunnerMode::kBlasTrial:
      return RunStackTrialMode(BlasCoreSetting());
    case RunnerMode::kAtenTrial:
      return RunStackTrialMode(AtenCapabilitySetting());
    case RunnerMode::kStackDoctor:
      return RunStackDoctorMode(cmd->framed);
    case RunnerMode::kPlatform:
      return RunPlatform(*cmd);
    case RunnerMode::kCalibrate:
      return RunCalibrate(*cmd);
    case RunnerMode::kDescribe:
      return WriteStdout(DescribeJson(cmd->job.config(), CountWork(cmd->spec))) ? 0 : 1;
    case RunnerMode::kMeasure:
      return RunMeasure(*cmd);
    case RunnerMode::kHelp:
      break;
  }
  return 0;
}

}  // namespace
}  // namespace paradnn::runner

int main(int argc, char** argv) {
  paradnn::common::UseReleaseMutexChecks();
  return paradnn::runner::Main(argc, argv);
}
