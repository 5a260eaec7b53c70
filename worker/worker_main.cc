// paradnn-worker: one per host and device, or several sharing a host's
// CPUs (--cpus, each with its own id). Connects to the coordinator,
// announces the platform, and runs each assigned job in a fresh
// paradnn-runner child, one at a time, until SIGTERM/SIGINT.
#include <limits.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/address.h"
#include "common/auth.h"
#include "common/config_sources.h"
#include "common/cpu_list.h"
#include "common/logging.h"
#include "common/openmp_env.h"
#include "common/shipped_main.h"
#include "common/subprocess.h"
#include "common/version.h"
#include "common/worker_identity.h"
#include "platform/stack_findings.h"
#include "worker/device_spec.h"
#include "worker/platform_probe.h"
#include "worker/rendezvous_endpoint.h"
#include "worker/runner_zygote.h"
#include "worker/worker_agent.h"
#include "worker/worker_id_lock.h"

namespace {

struct Flags {
  std::string coordinator;
  std::string device = "cpu";
  std::string worker_id;
  std::string runner;
  std::string backend = "libtorch";
  std::string log_level = "info";
  std::string log_format = "text";
  int64_t max_backoff_ms = 5000;
  double drain_seconds = 30;
  int64_t memory_limit_mb = -1;
  std::string calibrate = "auto";
  std::string state_dir;
  std::vector<std::string> datasheet_peaks;
  std::string blas_core = "auto";
  std::string aten_capability = "auto";
  int fma_units = 0;
  std::string flush_denormal = "on";
  paradnn::common::ClientSecurityFlags security;
  bool runner_zygote = true;
  std::string cpus;
  int64_t rendezvous_port = 0;
  std::string advertise_address;
};

constexpr std::chrono::milliseconds kInitialBackoff{200};
constexpr std::chrono::seconds kPlatformProbeTimeout{60};
// The runner's calibration takes about 20 s; a loaded host may take longer.
constexpr std::chrono::seconds kCalibrationTimeout{300};
// Loading LibTorch takes about 0.5 s; a loaded host may take longer.
constexpr std::chrono::seconds kZygoteReadyTimeout{60};

// The runner of `backend` in the folder of this executable (build/bin/ holds
// them all): paradnn-runner (LibTorch) or paradnn_jax_runner.py (JAX, an
// executable Python script; worker/jax_runner/).
std::string DefaultRunnerPath(const std::string& backend) {
  std::string name = backend == "jax" ? "paradnn_jax_runner.py" : "paradnn-runner";
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  const std::string path(self, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/" + name;
}

std::string Hostname() {
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "localhost";
  return host;
}

// <hostname>-<device>-<8 hex digits of /etc/machine-id>: stable across
// restarts (the coordinator recovers a worker's open attempts by id), and
// distinct for hosts that share a host name (cloned images, containers
// named alike). Where there is no machine id, <hostname>-<device>.
std::string DefaultWorkerId(const std::string& device) {
  std::string machine_id;
  std::ifstream in("/etc/machine-id");
  std::getline(in, machine_id);
  const bool hex = machine_id.size() >= 8 &&
                   std::all_of(machine_id.begin(), machine_id.begin() + 8,
                               [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  std::string id = Hostname() + "-" + device;
  if (hex) id += "-" + machine_id.substr(0, 8);
  return id;
}

// Where the worker connects and which runner it starts.
void AddRunnerFlags(CLI::App& app, Flags* flags) {
  app.add_option(
      "--coordinator", flags->coordinator,
      "Coordinator address, HOST:PORT, [V6]:PORT or unix:PATH; else $PARADNN_COORDINATOR, "
      "else 127.0.0.1:7070");
  app.add_option(
         "--device", flags->device,
         "Device to run jobs on: cpu, cuda (the first GPU), cuda:N or tpu. Jobs are matched on "
         "its kind (cpu, cuda, tpu)")
      ->capture_default_str();
  app.add_option("--worker-id", flags->worker_id,
                 "Stable name of this worker in the coordinator (default: "
                 "<hostname>-<device>-<first 8 hex digits of /etc/machine-id>, then "
                 "-cpus<--cpus> when given, then -2, -3, ... when another live worker of this "
                 "host holds that id: a lock in --state-dir/worker-ids); two live workers cannot "
                 "share one");
  app.add_option("--runner", flags->runner,
                 "Runner executable (default: the --backend's runner next to this program)");
  app.add_option("--backend", flags->backend,
                 "Runner backend: libtorch (paradnn-runner) or jax (paradnn_jax_runner.py, "
                 "docs/backends.md); --runner overrides the executable")
      ->check(CLI::IsMember({"libtorch", "jax"}))
      ->capture_default_str();
  app.add_option("--runner-zygote", flags->runner_zygote,
                 "Fork every job's runner process from one runner started once (saves the "
                 "runner's start-up, about 0.5 s of LibTorch loading, per job); false starts a "
                 "fresh runner per job. A runner without the mode falls back to that")
      ->capture_default_str();
  app.add_option("--log-format", flags->log_format, paradnn::common::kLogFormats)
      ->capture_default_str();
  app.add_option("--log-level", flags->log_level,
                 std::string("Log level: ") + paradnn::common::kLogLevels)
      ->capture_default_str();
  paradnn::common::AddClientSecurityOptions(&app, &flags->security, "worker");
}

// How runner processes are treated: reconnects, draining, memory.
void AddProcessFlags(CLI::App& app, Flags* flags) {
  app.add_option("--max-backoff-ms", flags->max_backoff_ms,
                 "Longest wait between reconnect attempts; waits start at 200 ms and double")
      ->check(CLI::Range(int64_t{1}, int64_t{3'600'000}))
      ->capture_default_str();
  app.add_option("--drain-seconds", flags->drain_seconds,
                 "On SIGTERM/SIGINT, how long a running job may still finish before it is killed "
                 "and handed back to the coordinator, which queues it for another worker")
      ->check(CLI::Range(0.0, 86'400.0))
      ->capture_default_str();
  app.add_option("--memory-limit-mb", flags->memory_limit_mb,
                 "Cap each runner's virtual memory (RLIMIT_AS) at this many MiB; a model that "
                 "does not fit ends with outcome OOM, and the coordinator's memory check uses "
                 "this figure instead of the host's memory. 0 = no cap; -1 = the host's memory "
                 "on a CPU device and no cap on a GPU (CUDA reserves address space far beyond "
                 "memory)")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 30))
      ->capture_default_str();
}

// What the worker measures its platform with and tells the coordinator.
void AddPlatformFlags(CLI::App& app, Flags* flags) {
  app.add_option("--calibrate", flags->calibrate,
                 "Measure matmul roofs and memory bandwidth at start-up (paradnn-runner "
                 "--calibrate) for the hello: auto (unless cached for this platform's "
                 "fingerprint), always, never")
      ->capture_default_str();
  app.add_option("--state-dir", flags->state_dir,
                 "Where the calibration cache lives (default: $XDG_STATE_HOME/paradnn, else "
                 "~/.local/state/paradnn)");
  app.add_option("--datasheet-peak", flags->datasheet_peaks,
                 "DTYPE=FLOPS: the vendor's peak FLOP/s of a dtype (float32, bfloat16, float16, "
                 "tf32); replaces the theoretical peak computed from cores x clock x ISA "
                 "(silicon_mfu is measured against it); repeatable");
  app.add_option("--blas-core", flags->blas_core,
                 "OpenBLAS kernels of every runner: auto (the stack doctor's fastest core that "
                 "computes correctly, tried at calibration and cached per host), as-installed "
                 "(OpenBLAS's own pick; results are flagged when a faster core exists), or a "
                 "core name such as SkylakeX")
      ->capture_default_str();
  app.add_option("--aten-capability", flags->aten_capability,
                 "ATen CPU kernels of every runner (ATEN_CPU_CAPABILITY): auto (the stack "
                 "doctor's fastest that computes correctly), as-installed (LibTorch's own pick: "
                 "AVX2 on AVX-512 CPUs in 1.13), default, avx2 or avx512")
      ->capture_default_str();
  app.add_option("--fma-units", flags->fma_units,
                 "FMA units per core for the theoretical float32 peak (0 = assume 2; some Xeon "
                 "Silver/Bronze parts have 1)")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  app.add_option("--flush-denormal", flags->flush_denormal,
                 "Flush denormal floats to zero (FTZ/DAZ) in every runner, as TensorFlow does: "
                 "on, or off (the hardware default; denormal arithmetic can be 10-100x slower)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
}

// Where this worker's runners run and meet the other ranks of a
// data-parallel gang (docs/deployment.md, "Several workers on one host").
void AddGangFlags(CLI::App& app, Flags* flags) {
  app.add_option("--cpus", flags->cpus,
                 "CPUs this worker's runners are confined to, as Linux writes CPU lists "
                 "(0-3,8); every one must be in this process's affinity. Give the workers that "
                 "share a host disjoint sets. Default: every CPU");
  app.add_option("--rendezvous-port", flags->rendezvous_port,
                 "TCP port this worker's runner serves a data-parallel gang's rendezvous on when "
                 "it is the gang's rank 0 (one port: a worker runs one job at a time); 0 takes a "
                 "free port at start-up. A firewall or Kubernetes needs a fixed one")
      ->capture_default_str();
  app.add_option("--advertise-address", flags->advertise_address,
                 "Host name or IP address the other ranks of a gang reach this worker at (default: "
                 "the address the coordinator sees this worker's stream come from)");
}

// What every runner this worker starts inherits: where the runner caches
// the stack doctor's decision, the peak's FMA assumption, flush-to-zero.
// The flags win over what this process inherited.
void ExportRunnerEnvironment(const Flags& flags) {
  ::setenv("PARADNN_STATE_DIR", flags.state_dir.c_str(), 1);
  if (flags.fma_units > 0) {
    ::setenv("PARADNN_FMA_UNITS", std::to_string(flags.fma_units).c_str(), 1);
  } else {
    ::unsetenv("PARADNN_FMA_UNITS");
  }
  if (flags.flush_denormal == "off") {
    ::setenv("PARADNN_FLUSH_DENORMAL", "off", 1);
  } else {
    ::unsetenv("PARADNN_FLUSH_DENORMAL");
  }
  // Runners (which run uploaded TorchScript models) inherit this process's
  // environment; the token is not theirs to see.
  ::unsetenv(paradnn::common::kTokenEnv);
}

// The parsed flags checked and filled in: every refusal names its flag.
struct CheckedFlags {
  paradnn::worker::CalibrateMode calibrate_mode;
  std::map<std::string, double> datasheet_peaks;
  std::map<std::string, std::string> stack_requests;
  std::string address;
  paradnn::common::ClientSecurity security;
  std::string cpus;  // canonical (FormatCpuList); "" = every CPU
  int rendezvous_port = 0;
  // Holds a default worker id for this process's life; unset for an
  // explicit --worker-id.
  std::optional<paradnn::worker::WorkerIdLock> id_lock;
};

// --cpus, --rendezvous-port and --advertise-address checked into `checked`.
absl::Status CheckGangFlags(const Flags& flags, CheckedFlags* checked) {
  if (!flags.cpus.empty()) {
    absl::StatusOr<std::vector<int>> cpus = paradnn::common::ParseCpuList(flags.cpus);
    if (!cpus.ok()) return cpus.status();
    if (absl::Status s = paradnn::common::CheckCpusAllowed(*cpus, paradnn::common::AllowedCpus());
        !s.ok()) {
      return s;
    }
    checked->cpus = paradnn::common::FormatCpuList(*cpus);
  }
  absl::StatusOr<int> port = paradnn::worker::ResolveRendezvousPort(flags.rendezvous_port);
  if (!port.ok()) return port.status();
  checked->rendezvous_port = *port;
  if (flags.rendezvous_port > 0) {
    // Not fatal: what holds it now may let go before a gang needs it.
    if (absl::Status free = paradnn::worker::CheckRendezvousPortFree(*port); !free.ok()) {
      spdlog::warn("{}", std::string(free.message()));
    }
  }
  return paradnn::worker::ValidateAdvertiseAddress(flags.advertise_address);
}

// Confines every thread of this process to `cpus` (canonical --cpus) before
// it starts any child: the platform probe, the calibration, the stack
// doctor, the zygote and every runner inherit the set, so a worker given
// one CPU measures and reports one CPU (its roofs, its fingerprint) rather
// than the host. Threads inherit the set of the thread that creates them;
// those that already run are set one by one.
absl::Status ConfineToCpus(const std::string& cpus) {
  absl::StatusOr<std::vector<int>> list = paradnn::common::ParseCpuList(cpus);
  if (!list.ok()) return list.status();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : *list) CPU_SET(cpu, &set);
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    int tid = 0;
    if (!absl::SimpleAtoi(task.path().filename().string(), &tid)) continue;
    // A thread that has ended since the listing is no error.
    if (::sched_setaffinity(tid, sizeof(set), &set) != 0 && errno != ESRCH) {
      return absl::InternalError(absl::StrCat("--cpus ", cpus, ": sched_setaffinity of thread ",
                                              tid, " failed: ", std::strerror(errno)));
    }
  }
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    return absl::InternalError(
        absl::StrCat("--cpus ", cpus, ": sched_setaffinity failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// The default id made distinct among the live workers of this host (the
// --cpus set, then a lock per id in the state dir), and held.
void ChooseDefaultWorkerId(Flags* flags, CheckedFlags* checked) {
  std::string base = DefaultWorkerId(flags->device);
  if (!checked->cpus.empty()) base += "-cpus" + checked->cpus;
  absl::StatusOr<paradnn::worker::WorkerIdLock> lock =
      paradnn::worker::WorkerIdLock::Take(flags->state_dir + "/worker-ids", base);
  if (!lock.ok()) {
    spdlog::warn(
        "{}; calling this worker '{}' unlocked: another worker started alike on this host "
        "would collide with it (give each its own --worker-id)",
        std::string(lock.status().message()), base);
    flags->worker_id = base;
    return;
  }
  flags->worker_id = lock->id();
  if (flags->worker_id != base) {
    spdlog::info("worker id '{}' is held by another live worker of this host; this one is '{}'",
                 base, flags->worker_id);
  }
  checked->id_lock = *std::move(lock);
}

absl::StatusOr<CheckedFlags> CheckFlags(Flags* flags) {
  CheckedFlags checked;
  if (absl::Status s = paradnn::worker::ValidateDevice(flags->device); !s.ok()) return s;
  absl::StatusOr<paradnn::worker::CalibrateMode> calibrate_mode =
      paradnn::worker::ParseCalibrateMode(flags->calibrate);
  if (!calibrate_mode.ok()) return calibrate_mode.status();
  checked.calibrate_mode = *calibrate_mode;
  absl::StatusOr<std::map<std::string, double>> datasheet_peaks =
      paradnn::worker::ParseDatasheetPeaks(flags->datasheet_peaks);
  if (!datasheet_peaks.ok()) return datasheet_peaks.status();
  checked.datasheet_peaks = *std::move(datasheet_peaks);
  if (flags->state_dir.empty()) flags->state_dir = paradnn::worker::DefaultStateDir();
  checked.stack_requests = {{"blas_core", flags->blas_core},
                            {"aten_capability", flags->aten_capability}};
  for (const auto& [component, value] : checked.stack_requests) {
    const paradnn::platform::StackSettingInfo& info =
        *paradnn::platform::FindStackSettingInfo(component);
    if (absl::Status s = paradnn::platform::ValidateStackValue(info, value, info.flag); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::string> address =
      paradnn::common::ResolveCoordinatorAddress(flags->coordinator);
  if (!address.ok()) return address.status();
  checked.address = *std::move(address);
  absl::StatusOr<paradnn::common::ClientSecurity> security =
      paradnn::common::LoadClientSecurity(flags->security);
  if (!security.ok()) return security.status();
  checked.security = *std::move(security);
  if (flags->runner.empty()) flags->runner = DefaultRunnerPath(flags->backend);
  if (::access(flags->runner.c_str(), X_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runner: '", flags->runner,
                     "' is not an executable file (build paradnn-runner, or point --runner at "
                     "it)"));
  }
  if (absl::Status s = CheckGangFlags(*flags, &checked); !s.ok()) return s;
  if (flags->worker_id.empty()) ChooseDefaultWorkerId(flags, &checked);
  // The coordinator's rule, said here rather than as a refused hello.
  if (!paradnn::common::IsValidWorkerId(flags->worker_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--worker-id: ", flags->worker_id.size(), " characters; ", paradnn::common::kWorkerIdRule));
  }
  return checked;
}

// The platform the hello reports: the runner's probe, its calibration and
// stack findings, datasheet peaks, and a memory cap where there is one.
paradnn::v1::Platform DescribePlatform(const Flags& flags, const CheckedFlags& checked,
                                       const paradnn::worker::StackSetup& stack,
                                       int64_t memory_limit_bytes) {
  paradnn::v1::Platform platform = paradnn::worker::ProbePlatform(
      flags.runner, paradnn::worker::DeviceKind(flags.device), kPlatformProbeTimeout, flags.device);
  // Keyed by the runner's own fingerprint, before a memory cap amends it:
  // the cap changes nothing the roofs measure.
  paradnn::worker::AddCalibration(&platform, flags.runner, checked.calibrate_mode, flags.state_dir,
                                  kCalibrationTimeout, flags.device);
  paradnn::worker::AddDatasheetPeaks(checked.datasheet_peaks, &platform);
  for (const paradnn::v1::StackFinding& finding : stack.findings) {
    *platform.add_stack_findings() = finding;
  }
  // Jobs get no more memory than the cap: that is the memory the
  // coordinator must plan against (PREDICTED_OOM).
  if (memory_limit_bytes > 0 &&
      (platform.memory_bytes() == 0 || memory_limit_bytes < platform.memory_bytes())) {
    platform.set_memory_bytes(memory_limit_bytes);
    // A capped host is a different platform for comparisons: say so in the
    // fingerprint.
    platform.set_fingerprint(platform.fingerprint() + "-memcap" +
                             std::to_string(flags.memory_limit_mb) + "m");
  }
  return platform;
}

paradnn::worker::WorkerAgentOptions AgentOptions(const Flags& flags, CheckedFlags checked) {
  paradnn::worker::WorkerAgentOptions options;
  options.coordinator_address = checked.address;
  options.security = std::move(checked.security);
  options.worker_id = flags.worker_id;
  options.device = flags.device;
  options.cpus = checked.cpus;
  options.rendezvous_address = flags.advertise_address;
  options.rendezvous_port = checked.rendezvous_port;
  options.harness = absl::StrCat(flags.backend, "/", paradnn::common::kTimingHarnessVersion);
  options.runner.runner_path = flags.runner;
  options.max_backoff = std::chrono::milliseconds(flags.max_backoff_ms);
  options.initial_backoff = std::min(kInitialBackoff, options.max_backoff);
  options.drain_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.drain_seconds * 1000));
  options.runner.memory_limit_bytes = flags.memory_limit_mb > 0 ? flags.memory_limit_mb << 20 : 0;
  // Before the platform probe: the settings chosen are part of the
  // fingerprint.
  const paradnn::worker::StackSetup stack = paradnn::worker::SetUpStack(
      checked.stack_requests,
      flags.backend == "libtorch" &&
          checked.calibrate_mode != paradnn::worker::CalibrateMode::kNever,
      flags.runner, kCalibrationTimeout);
  for (const std::string& summary : stack.summaries) spdlog::info("stack: {}", summary);
  options.runner.stack_choices = stack.choices;
  options.platform = DescribePlatform(flags, checked, stack, options.runner.memory_limit_bytes);
  // By default a CPU runner may take the host's memory and no more: a model
  // that would take more (a small upload that inflates) ends OOM in its
  // own process, not by the kernel's OOM killer choosing among the host's.
  if (flags.memory_limit_mb < 0 && paradnn::worker::DeviceKind(flags.device) == "cpu") {
    options.runner.memory_limit_bytes = options.platform.memory_bytes();
  }
  if (flags.runner_zygote) {
    absl::StatusOr<std::unique_ptr<paradnn::worker::RunnerZygote>> zygote =
        paradnn::worker::RunnerZygote::Start(flags.runner, kZygoteReadyTimeout);
    if (zygote.ok()) {
      spdlog::info("runner zygote pid {}: job processes are forked from it", (*zygote)->pid());
      options.runner.zygote = std::move(*zygote);
    } else {
      spdlog::warn("{}; starting a fresh runner for every job",
                   std::string(zygote.status().message()));
    }
  }
  return options;
}

// Runs the agent until it stops (after a signal, or on its own).
int Serve(paradnn::worker::WorkerAgentOptions options) {
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  paradnn::worker::WorkerAgent agent(io, std::move(options));
  bool stopped = false;
  std::function<void()> wait_for_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int signal_number) {
      if (ec) return;
      spdlog::info("signal {}: shutting down", signal_number);
      agent.Shutdown();
      // A second signal kills the running job at once; once the agent has
      // stopped nothing may keep the io_context alive.
      if (!stopped) wait_for_signal();
    });
  };
  wait_for_signal();
  agent.Start([&] {
    stopped = true;
    signals.cancel();
  });
  io.run();
  // Exit status 3: the worker stopped on its own (its id is taken); a
  // service manager should not restart it into the same refusal.
  return agent.fatal_error().empty() ? 0 : 3;
}

// The whole process; main runs it through common::RunShippedMain.
int RunProcess(int argc, char** argv) {
  // The runner wants libgomp's short spin (see worker/runner/openmp_env.cc)
  // and re-executes itself to get it unless the variable is already set;
  // setting it here, inherited by every runner, saves that start-up cost. A
  // value the operator chose is kept.
  setenv("GOMP_SPINCOUNT", PARADNN_RUNNER_GOMP_SPINCOUNT, /*overwrite=*/0);
  Flags flags;
  CLI::App app{
      "paradnn-worker: runs ParaDnn benchmark jobs from a paradnn-coordinator on this host's "
      "device, each in a fresh paradnn-runner process, one at a time. Runs until SIGTERM/SIGINT "
      "(a second signal kills the running job at once)."};
  AddRunnerFlags(app, &flags);
  AddProcessFlags(app, &flags);
  AddPlatformFlags(app, &flags);
  AddGangFlags(app, &flags);
  app.set_version_flag("--version", paradnn::common::kVersion);
  paradnn::common::AddConfigSources(&app);
  CLI11_PARSE(app, argc, argv);

  if (absl::Status s =
          paradnn::common::ConfigureLogging("paradnn-worker", flags.log_level, flags.log_format);
      !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 2;
  }
  absl::StatusOr<CheckedFlags> checked = CheckFlags(&flags);
  if (!checked.ok()) {
    spdlog::critical("{}", std::string(checked.status().message()));
    return 2;
  }
  if (!checked->cpus.empty()) {
    if (absl::Status s = ConfineToCpus(checked->cpus); !s.ok()) {
      spdlog::critical("{}", std::string(s.message()));
      return 2;
    }
    spdlog::info("confined to CPUs {}: the platform probe, calibration and runners use only them",
                 checked->cpus);
  }
  ExportRunnerEnvironment(flags);
  paradnn::common::IgnoreSigpipe();
  // Held until the process ends: the id is this worker's while it lives.
  std::optional<paradnn::worker::WorkerIdLock> id_lock = std::move(checked->id_lock);
  paradnn::worker::WorkerAgentOptions options = AgentOptions(flags, *std::move(checked));
  spdlog::info("paradnn-worker {} as '{}' on {}{}, runner {}, rendezvous port {}",
               paradnn::common::kVersion, flags.worker_id, flags.device,
               options.cpus.empty() ? "" : " (CPUs " + options.cpus + ")", flags.runner,
               options.rendezvous_port);
  return Serve(std::move(options));
}

}  // namespace

int main(int argc, char** argv) {
  return paradnn::common::RunShippedMain("paradnn-worker", RunProcess, argc, argv);
}
