#include "worker/platform_probe.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/cpu_list.h"
#include "common/fnv1a.h"
#include "common/framing.h"
#include "common/state_dir.h"
#include "common/subprocess.h"
#include "hostfacts/host_facts.h"
#include "platform/silicon_peak.h"
#include "platform/stack_findings.h"

namespace paradnn::worker {

using common::DescribeWaitStatus;
using common::IgnoreSigpipe;
using common::ScopedFd;
using common::SpawnChild;
using common::SpawnedChild;
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kStderrTailBytes = 2048;

int RemainingMs(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1'000'000));
}

// Kills the group and reaps the (now dying) child.
void KillAndReap(pid_t pid) {
  ::killpg(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

namespace {

std::vector<std::string> RunnerFrameArgv(const std::string& runner_path, const std::string& mode,
                                         const std::string& device) {
  std::vector<std::string> argv = {runner_path, mode, "--framed"};
  if (absl::StartsWith(device, "cuda")) argv.insert(argv.end(), {"--device", device});
  return argv;
}

// Runs `runner_path mode --framed [--device D]` and parses the one Platform
// frame it writes (QueryRunnerPlatform's contract, for either mode). Only a
// CUDA device is named: the CPU is the runner's default, and other runners
// (JAX) take no --device.
absl::StatusOr<v1::Platform> QueryRunnerFrame(const std::string& runner_path,
                                              const std::string& mode,
                                              std::chrono::milliseconds timeout,
                                              const std::string& device = "cpu") {
  IgnoreSigpipe();
  const std::vector<std::string> argv = RunnerFrameArgv(runner_path, mode, device);
  absl::StatusOr<SpawnedChild> child = SpawnChild(argv);
  if (!child.ok()) return child.status();
  child->stdin_fd.Reset();
  const std::string command = absl::StrCat("'", absl::StrJoin(argv, " "), "'");
  const Clock::time_point deadline = Clock::now() + timeout;
  const auto timed_out = [&]() {
    KillAndReap(child->pid);
    return absl::DeadlineExceededError(
        absl::StrCat(command, " did not finish within ", timeout.count(), " ms"));
  };

  common::FrameDecoder decoder;
  std::string stderr_tail;
  std::string decode_error;
  char buffer[16 * 1024];
  while (child->stdout_fd.valid() || child->stderr_fd.valid()) {
    pollfd fds[2];
    nfds_t count = 0;
    for (ScopedFd* fd : {&child->stdout_fd, &child->stderr_fd}) {
      if (fd->valid()) fds[count++] = pollfd{fd->get(), POLLIN, 0};
    }
    const int ready = ::poll(fds, count, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      KillAndReap(child->pid);
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    if (ready == 0) return timed_out();
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      ScopedFd& owner = fds[i].fd == child->stdout_fd.get() ? child->stdout_fd : child->stderr_fd;
      if (n <= 0) {
        owner.Reset();
        continue;
      }
      if (&owner == &child->stdout_fd) {
        if (absl::Status s = decoder.Append(buffer, static_cast<size_t>(n));
            !s.ok() && decode_error.empty()) {
          decode_error = std::string(s.message());
        }
      } else {
        stderr_tail.append(buffer, static_cast<size_t>(n));
        if (stderr_tail.size() > kStderrTailBytes)
          stderr_tail.erase(0, stderr_tail.size() - kStderrTailBytes);
      }
    }
  }

  // Both pipes closed: the runner is exiting. Wait for it within the
  // same deadline (a short poll; this runs once, at start-up).
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(child->pid, &status, WNOHANG);
    if (r == child->pid) break;
    if (r < 0 && errno != EINTR)
      return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    if (RemainingMs(deadline) == 0) return timed_out();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const std::string tail(absl::StripAsciiWhitespace(stderr_tail));
  if (status != 0) {
    return absl::UnavailableError(
        absl::StrCat(command, " ", DescribeWaitStatus(status), tail.empty() ? "" : ": ", tail));
  }
  if (!decode_error.empty()) {
    return absl::DataLossError(absl::StrCat(command, " wrote invalid frames: ", decode_error));
  }
  std::string payload;
  if (!decoder.Next(&payload)) {
    return absl::DataLossError(absl::StrCat(command, " wrote no complete frame"));
  }
  v1::Platform platform;
  if (!platform.ParseFromString(payload)) {
    return absl::DataLossError(absl::StrCat(command, " wrote a frame that is not a Platform"));
  }
  return platform;
}

}  // namespace

absl::StatusOr<v1::Platform> QueryRunnerPlatform(const std::string& runner_path,
                                                 std::chrono::milliseconds timeout,
                                                 const std::string& device) {
  return QueryRunnerFrame(runner_path, "--platform", timeout, device);
}

absl::StatusOr<v1::Platform> QueryRunnerCalibration(const std::string& runner_path,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& device) {
  return QueryRunnerFrame(runner_path, "--calibrate", timeout, device);
}

v1::Platform FallbackPlatform(const std::string& device_kind, const std::string& why) {
  v1::Platform platform;
  platform.set_device_kind(device_kind);
  const hostfacts::CpuTopology cpu = hostfacts::ReadCpuTopology();
  // As the runner counts them: the CPUs this process may use (a worker's
  // --cpus), never more than the host has.
  const int usable = static_cast<int>(common::AllowedCpus().size());
  const bool confined = usable > 0 && usable < cpu.logical_cpus;
  platform.set_logical_cpus(confined ? usable : cpu.logical_cpus);
  platform.set_sockets(confined ? std::min(cpu.sockets, usable) : cpu.sockets);
  platform.set_cores(confined ? std::min(cpu.cores, usable) : cpu.cores);
  platform.set_cpu_flags(hostfacts::RelevantCpuFlags(cpu.flags));
  if (const int64_t memory = hostfacts::HostMemoryBytes(); memory > 0) {
    platform.set_memory_bytes(memory);
  }
  platform.set_os(hostfacts::KernelRelease());
  platform.set_hostname(hostfacts::HostName());

  const std::string unknown = absl::StrCat("unknown (runner --platform failed: ", why, ")");
  if (device_kind == "cpu") {
    platform.set_device_name(cpu.model_name.empty() ? "unknown CPU" : cpu.model_name);
  } else {
    platform.set_device_name(unknown);
  }
  platform.set_blas_backend(unknown);
  platform.set_libtorch_version("unknown");
  platform.set_compiler("unknown");
  platform.set_parallel_backend("unknown");

  v1::Platform for_hash = platform;
  for_hash.clear_hostname();
  for_hash.clear_fingerprint();
  // Deterministic serialization so the same host hashes the same way.
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    for_hash.SerializeToCodedStream(&coded);
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(common::Fnv1a64(bytes)));
  platform.set_fingerprint(absl::StrCat("fallback-", hex));
  return platform;
}

v1::Platform ProbePlatform(const std::string& runner_path, const std::string& device_kind,
                           std::chrono::milliseconds timeout, const std::string& device) {
  absl::StatusOr<v1::Platform> platform = QueryRunnerPlatform(runner_path, timeout, device);
  if (platform.ok()) {
    spdlog::info(
        "platform: {} ({}), {} cores / {} logical CPUs, LibTorch {}, BLAS {}, fingerprint {}",
        platform->device_name(), platform->device_kind(), platform->cores(),
        platform->logical_cpus(), platform->libtorch_version(), platform->blas_backend(),
        platform->fingerprint());
    return *std::move(platform);
  }
  // The reason ends up in a stored field; keep it to a readable length.
  std::string why(platform.status().message());
  if (why.size() > 400) why = absl::StrCat(why.substr(0, 400), "...");
  spdlog::warn(
      "the runner could not report the platform ({}); describing it from /proc instead, "
      "with the software stack marked unknown",
      why);
  return FallbackPlatform(device_kind, why);
}

absl::StatusOr<CalibrateMode> ParseCalibrateMode(absl::string_view text) {
  if (text == "auto") return CalibrateMode::kAuto;
  if (text == "always") return CalibrateMode::kAlways;
  if (text == "never") return CalibrateMode::kNever;
  return absl::InvalidArgumentError(
      absl::StrCat("--calibrate: '", text, "' is not one of auto|always|never"));
}

std::string DefaultStateDir() { return common::DefaultStateDir(); }

std::string CalibrationCachePath(const std::string& state_dir, const std::string& fingerprint) {
  // The method's version is part of the name: a runner that measures more
  // (conv roofs, a wider bandwidth sweep) must not be served an older file.
  return absl::StrCat(state_dir, "/calibration-", kCalibrationMethod, "-", fingerprint, ".binpb");
}

absl::StatusOr<v1::Platform> ReadCachedCalibration(const std::string& state_dir,
                                                   const std::string& fingerprint) {
  const std::string path = CalibrationCachePath(state_dir, fingerprint);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("no cached calibration at ", path));
  v1::Platform cached;
  if (!cached.ParseFromIstream(&in)) {
    return absl::DataLossError(absl::StrCat(path, " is not a serialized Platform"));
  }
  if (cached.fingerprint() != fingerprint) {
    return absl::DataLossError(
        absl::StrCat(path, " holds the calibration of fingerprint '", cached.fingerprint(), "'"));
  }
  if (cached.matmul_roofs_size() == 0) {
    return absl::DataLossError(absl::StrCat(path, " holds no matmul roof"));
  }
  // Calibrations cached before the host-speed probe (or its latency-bound
  // half) existed are redone.
  if (!(cached.probe_flops_per_sec() > 0) || !(cached.latency_probe_seconds() > 0)) {
    return absl::DataLossError(absl::StrCat(path, " holds no host-speed sentinel"));
  }
  return cached;
}

std::optional<std::string> BusyCalibration(const v1::Platform& cached,
                                           double start_probe_flops_per_sec) {
  if (!(start_probe_flops_per_sec > kBusyCalibrationRatio * cached.probe_flops_per_sec())) {
    return std::nullopt;
  }
  return absl::StrFormat(
      "the cached calibration ran on a busy host: its host-speed probe measured %.1f GFLOP/s, "
      "%.1f GFLOP/s now (%.0f %%), so its roofs understate this host",
      cached.probe_flops_per_sec() / 1e9, start_probe_flops_per_sec / 1e9,
      100 * start_probe_flops_per_sec / cached.probe_flops_per_sec());
}

absl::Status WriteCachedCalibration(const std::string& state_dir, const v1::Platform& calibrated) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("creating ", state_dir, ": ", ec.message()));
  const std::string path = CalibrationCachePath(state_dir, calibrated.fingerprint());
  const std::string temp = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out || !calibrated.SerializeToOstream(&out) || !out.flush()) {
      std::filesystem::remove(temp, ec);
      return absl::UnavailableError(absl::StrCat("writing ", temp, " failed"));
    }
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return absl::UnavailableError(
        absl::StrCat("renaming ", temp, " to ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

namespace {

// An exclusive flock on <state_dir>/calibration.lock for as long as it
// lives: workers sharing a host (and state directory) calibrate one at a
// time, because two calibrations at once would each measure half the host.
// Not holding it (the directory is not writable) only costs that guarantee.
class CalibrationLock {
 public:
  explicit CalibrationLock(const std::string& state_dir) {
    std::error_code ec;
    std::filesystem::create_directories(state_dir, ec);
    const std::string path = state_dir + "/calibration.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      spdlog::warn("calibrating without the host lock: open {}: {}", path, std::strerror(errno));
      return;
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      spdlog::info("another worker on this host is calibrating; waiting for it ({})", path);
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~CalibrationLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  CalibrationLock(const CalibrationLock&) = delete;
  CalibrationLock& operator=(const CalibrationLock&) = delete;

 private:
  int fd_ = -1;
};

// What a calibration measured, onto the probed platform: the roofs, the
// host-speed sentinel's reference figures (without them no job would be
// compared with its calibration) and the measured core clock with the
// silicon peaks computed from it.
void CopyCalibration(const v1::Platform& from, v1::Platform* to) {
  *to->mutable_matmul_roofs() = from.matmul_roofs();
  *to->mutable_bandwidth() = from.bandwidth();
  to->set_calibrated_unix_ms(from.calibrated_unix_ms());
  to->set_probe_flops_per_sec(from.probe_flops_per_sec());
  to->set_probe_threads(from.probe_threads());
  to->set_latency_probe_seconds(from.latency_probe_seconds());
  if (from.measured_clock_hz() > 0) {
    to->set_measured_clock_hz(from.measured_clock_hz());
    to->set_measured_clock_method(from.measured_clock_method());
    *to->mutable_silicon_peaks() = from.silicon_peaks();
  }
  platform::ReconcilePeaksWithRoofs(to);
  for (const v1::SiliconPeak& peak : to->silicon_peaks()) {
    if (!peak.inconsistency().empty()) spdlog::warn("theoretical peak: {}", peak.inconsistency());
  }
}

void LogRoofs(const v1::Platform& platform, const std::string& source) {
  std::vector<std::string> roofs;
  for (const v1::MatmulRoof& roof : platform.matmul_roofs()) {
    roofs.push_back(absl::StrFormat("%s %s %.1f GFLOP/s", platform::RoofKernel(roof), roof.dtype(),
                                    roof.flops_per_sec() / 1e9));
  }
  spdlog::info("calibrated roofs ({}): {}", source, absl::StrJoin(roofs, ", "));
}

}  // namespace

std::string AddCalibration(v1::Platform* platform, const std::string& runner_path,
                           CalibrateMode mode, const std::string& state_dir,
                           std::chrono::milliseconds timeout, const std::string& device) {
  if (mode == CalibrateMode::kNever) return "none";
  if (absl::StartsWith(platform->fingerprint(), "fallback-")) {
    spdlog::warn("not calibrating: the runner could not report the platform");
    return "none";
  }
  const int64_t waited_from_unix_ms = common::SystemClock().NowUnixMs();
  const CalibrationLock lock(state_dir);
  // Checked under the lock: a worker that waited finds its neighbour's result.
  if (mode == CalibrateMode::kAuto) {
    absl::StatusOr<v1::Platform> cached = ReadCachedCalibration(state_dir, platform->fingerprint());
    std::optional<std::string> busy;
    // A calibration a neighbour finished while this worker waited is taken as
    // it is: judged against this worker's start probe (taken before the
    // wait, perhaps in a quiet moment), it made every waiting worker
    // calibrate again in turn, each holding the host lock for up to 2 min.
    const bool fresh = cached.ok() && cached->calibrated_unix_ms() >= waited_from_unix_ms;
    if (cached.ok() && !fresh)
      busy = BusyCalibration(*cached, platform->start_probe_flops_per_sec());
    if (cached.ok() && !busy.has_value()) {
      CopyCalibration(*cached, platform);
      LogRoofs(*platform, CalibrationCachePath(state_dir, platform->fingerprint()));
      return "cache";
    }
    if (busy.has_value()) {
      spdlog::warn("calibrating again: {}", *busy);
    } else if (cached.status().code() != absl::StatusCode::kNotFound) {
      spdlog::warn("ignoring the cached calibration: {}", std::string(cached.status().message()));
    }
  }
  spdlog::info("calibrating: '{} --calibrate' (matmul roofs and memory bandwidth)", runner_path);
  absl::StatusOr<v1::Platform> calibrated = QueryRunnerCalibration(runner_path, timeout, device);
  if (!calibrated.ok()) {
    spdlog::warn("calibration failed, the hello carries no roofs: {}",
                 std::string(calibrated.status().message()));
    return "none";
  }
  CopyCalibration(*calibrated, platform);
  LogRoofs(*platform, "measured");
  if (calibrated->fingerprint() != platform->fingerprint()) {
    spdlog::warn("not caching the calibration: it reports fingerprint {}, the platform {}",
                 calibrated->fingerprint(), platform->fingerprint());
  } else if (absl::Status s = WriteCachedCalibration(state_dir, *calibrated); !s.ok()) {
    spdlog::warn("not caching the calibration: {}", std::string(s.message()));
  }
  return "runner";
}

absl::StatusOr<std::map<std::string, double>> ParseDatasheetPeaks(
    const std::vector<std::string>& flags) {
  static const std::set<std::string> kDtypes = {"float32", "bfloat16", "float16", "tf32"};
  std::map<std::string, double> peaks;
  for (const std::string& flag : flags) {
    const std::vector<std::string> parts = absl::StrSplit(flag, absl::MaxSplits('=', 1));
    double flops = 0;
    if (parts.size() != 2 || kDtypes.count(parts[0]) == 0 || !absl::SimpleAtod(parts[1], &flops) ||
        !(flops > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--datasheet-peak '", flag,
          "': expected DTYPE=FLOPS with DTYPE one of float32, bfloat16, float16, tf32 and "
          "FLOPS a positive number of FLOP/s, e.g. bfloat16=3.2e12"));
    }
    peaks[parts[0]] = flops;
  }
  return peaks;
}

void AddDatasheetPeaks(const std::map<std::string, double>& peaks, v1::Platform* platform) {
  for (const auto& [dtype, flops] : peaks) {
    platform::SetDatasheetPeak(dtype, flops, platform->mutable_silicon_peaks());
    v1::MatmulRoof* roof = nullptr;
    for (v1::MatmulRoof& candidate : *platform->mutable_matmul_roofs()) {
      if (candidate.dtype() == dtype) roof = &candidate;
    }
    if (roof == nullptr) {
      roof = platform->add_matmul_roofs();
      roof->set_dtype(dtype);
    }
    roof->set_datasheet_flops_per_sec(flops);
  }
  if (!peaks.empty()) platform::ReconcilePeaksWithRoofs(platform);
}

absl::StatusOr<v1::Platform> QueryRunnerStackDoctor(const std::string& runner_path,
                                                    std::chrono::milliseconds timeout) {
  return QueryRunnerFrame(runner_path, "--stack-doctor", timeout);
}

StackSetup SetUpStack(const std::map<std::string, std::string>& requests, bool run_doctor,
                      const std::string& runner_path, std::chrono::milliseconds timeout) {
  StackSetup setup;
  for (const platform::StackSettingInfo& info : platform::StackSettingInfos()) {
    const char* value = std::getenv(info.env_var);
    setup.choices.as_installed[info.component] =
        value == nullptr ? std::nullopt : std::optional<std::string>(value);
  }
  // The doctor runs when some setting is auto or as-installed: even a
  // stack left as installed is told what it leaves on the table.
  const bool all_forced = std::all_of(requests.begin(), requests.end(), [](const auto& r) {
    return r.second != "auto" && r.second != "as-installed";
  });
  absl::StatusOr<v1::Platform> report = absl::UnavailableError("the stack doctor did not run");
  if (run_doctor && !all_forced) {
    spdlog::info(
        "stack doctor: '{} --stack-doctor' (OpenBLAS cores and ATen CPU capabilities, "
        "checked against float64)",
        runner_path);
    report = QueryRunnerStackDoctor(runner_path, timeout);
    if (!report.ok()) {
      spdlog::warn("stack doctor failed, the stack stays as installed: {}",
                   std::string(report.status().message()));
    } else {
      setup.findings.assign(report->stack_findings().begin(), report->stack_findings().end());
    }
  }
  for (const platform::StackSettingInfo& info : platform::StackSettingInfos()) {
    auto requested = requests.find(info.component);
    const std::string request = requested == requests.end() ? "auto" : requested->second;
    std::string installed, chosen;
    for (const v1::StackFinding& f : setup.findings) {
      if (f.component() != info.component) continue;
      if (f.as_installed()) installed = f.setting();
      if (f.chosen()) chosen = f.setting();
    }
    if (!chosen.empty() && chosen != installed)
      setup.choices.doctor_choice[info.component] = chosen;
    std::string summary;
    if (request != "auto" && request != "as-installed") {
      ::setenv(info.env_var, request.c_str(), 1);
      ::setenv(info.choice_env, "forced", 1);
      summary = absl::StrCat("forced to ", request, " (", info.flag, ")");
    } else if (request == "auto" && !chosen.empty()) {
      if (chosen != installed) ::setenv(info.env_var, chosen.c_str(), 1);
      ::setenv(info.choice_env, "auto", 1);
      summary = chosen == installed
                    ? absl::StrCat(installed, " (as installed; the fastest correct)")
                    : absl::StrCat(chosen, " (auto; as installed: ", installed, ")");
    } else {
      ::setenv(info.choice_env, "as-installed", 1);
      summary = request == "auto"
                    ? "as installed (no doctor finding: --calibrate never, nothing to choose, or "
                      "a runner without --stack-doctor)"
                    : absl::StrCat("as installed (", info.flag, " as-installed)");
    }
    setup.summaries.push_back(absl::StrCat(info.component, ": ", summary));
  }
  return setup;
}

}  // namespace paradnn::worker
