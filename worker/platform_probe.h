// The worker's platform: what `paradnn-runner --platform --framed` reports,
// or, when the runner cannot say, what /proc says, marked as a fallback; and
// its calibrated roofs (`paradnn-runner --calibrate --framed`), cached per
// fingerprint under the worker's state directory.
#ifndef PARADNN_WORKER_PLATFORM_PROBE_H_
#define PARADNN_WORKER_PLATFORM_PROBE_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/metrics.pb.h"
#include "worker/sentinel_memory.h"
#include "worker/stack_environment.h"

namespace paradnn::worker {

// Runs `runner_path --platform --framed` and returns the one Platform frame
// it writes. Blocks for at most `timeout` (then kills the runner's process
// group). Returns an error naming the cause (cannot execute, exit status or
// signal with the stderr tail, no frame, unparsable frame, timeout).
// Thread-safe.
// `device` ("cpu", "cuda", "cuda:N", ...): a CUDA device is passed on as
// --device, so the runner describes the GPU (worker/runner/cuda_calibration.h).
absl::StatusOr<v1::Platform> QueryRunnerPlatform(const std::string& runner_path,
                                                 std::chrono::milliseconds timeout,
                                                 const std::string& device = "cpu");

// A Platform of the host facts (hostfacts/host_facts.h, read as the runner
// reads them) for `device_kind`: CPU model (as device_name for "cpu"),
// sockets, physical cores, logical CPUs, memory, kernel release, relevant
// ISA flags (the runner's list). Fields
// only the runner knows say so: blas_backend is
// "unknown (runner --platform failed: <why>)". The fingerprint is a hash of
// the non-hostname fields prefixed "fallback-", so it never equals a real
// runner fingerprint. Thread-safe.
v1::Platform FallbackPlatform(const std::string& device_kind, const std::string& why);

// QueryRunnerPlatform, else FallbackPlatform with a logged warning.
v1::Platform ProbePlatform(const std::string& runner_path, const std::string& device_kind,
                           std::chrono::milliseconds timeout, const std::string& device = "cpu");

// As QueryRunnerPlatform, for `runner_path --calibrate --framed`: the
// Platform with matmul_roofs, bandwidth and calibrated_unix_ms filled.
absl::StatusOr<v1::Platform> QueryRunnerCalibration(const std::string& runner_path,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& device = "cpu");

// When the worker calibrates (--calibrate): kAuto unless a cached
// calibration of the same fingerprint exists, kAlways at every start,
// kNever not at all (the hello then carries no roofs).
enum class CalibrateMode { kAuto, kAlways, kNever };

// "auto" | "always" | "never"; InvalidArgument naming --calibrate otherwise.
absl::StatusOr<CalibrateMode> ParseCalibrateMode(absl::string_view text);

// $XDG_STATE_HOME/paradnn, else $HOME/.local/state/paradnn, else
// ./.paradnn-state.
std::string DefaultStateDir();

// The calibration method's version: v2 added conv roofs, silicon peaks and
// the bandwidth sweep past the last-level cache.
inline constexpr const char* kCalibrationMethod = "v2";

// The cache file of the calibration of `fingerprint`:
// <state_dir>/calibration-<method>-<fingerprint>.binpb (a serialized Platform).
std::string CalibrationCachePath(const std::string& state_dir, const std::string& fingerprint);

// Reads the cached calibration of platform.fingerprint() from `state_dir`.
// NotFound if there is none; DataLoss if it does not parse or is for another
// fingerprint or holds no roof or no host-speed probe.
absl::StatusOr<v1::Platform> ReadCachedCalibration(const std::string& state_dir,
                                                   const std::string& fingerprint);

// Writes `calibrated` as the cache of its fingerprint (creating `state_dir`,
// write to a temporary file, then rename).
absl::Status WriteCachedCalibration(const std::string& state_dir, const v1::Platform& calibrated);

// Why `cached` ran on a busy host, judged by the probe at the worker's start
// (`start_probe_flops_per_sec`, 0 = not read): at least
// kBusyCalibrationRatio times faster now; nullopt when it did not.
std::optional<std::string> BusyCalibration(const v1::Platform& cached,
                                           double start_probe_flops_per_sec);

// Fills platform's matmul_roofs, bandwidth and calibrated_unix_ms per `mode`:
// from the cache (kAuto, when present and not BusyCalibration), else from
// the runner (then cached).
// A fallback platform (the runner could not report one) or a failed
// calibration leaves the platform without roofs, with a logged warning.
// Returns where the roofs came from: "cache", "runner" or "none".
std::string AddCalibration(v1::Platform* platform, const std::string& runner_path,
                           CalibrateMode mode, const std::string& state_dir,
                           std::chrono::milliseconds timeout, const std::string& device = "cpu");

// Datasheet peaks from --datasheet-peak DTYPE=FLOPS flags (e.g.
// "bfloat16=3.2e12"): dtype -> FLOP/s. InvalidArgument naming the flag and
// what is allowed for an unknown dtype or a non-positive or unparsable figure.
absl::StatusOr<std::map<std::string, double>> ParseDatasheetPeaks(
    const std::vector<std::string>& flags);

// Sets datasheet_flops_per_sec on the roof of each dtype in `peaks`, adding a
// roof with only the datasheet figure where none was calibrated.
void AddDatasheetPeaks(const std::map<std::string, double>& peaks, v1::Platform* platform);

// `runner_path --stack-doctor --framed`: the Platform with stack_findings
// (every OpenBLAS core and ATen capability tried) and the fastest correct
// ones in blas_core and aten_capability.
absl::StatusOr<v1::Platform> QueryRunnerStackDoctor(const std::string& runner_path,
                                                    std::chrono::milliseconds timeout);

// What SetUpStack did: the doctor's findings (for Platform.stack_findings),
// a line per setting for the log, and what a sweep's stack values mean on
// this worker (for jobs that vary the stack).
struct StackSetup {
  std::vector<v1::StackFinding> findings;
  std::vector<std::string> summaries;
  StackChoices choices;
};

// Applies --blas-core and --aten-capability (`requests`: component ->
// value, validated by platform::ValidateStackValue) to this process's
// environment, which every runner (and the zygote) inherits: a name sets
// the setting's variable (OPENBLAS_CORETYPE, ATEN_CPU_CAPABILITY); "auto"
// asks the runner's stack doctor (when `run_doctor`: it tries each value
// once per host and caches the decision) and sets the fastest correct one;
// "as-installed" leaves the library's own pick, still asking the doctor
// what it leaves on the table so that results can be flagged. Sets each
// setting's choice variable to how it was chosen. Call before the platform
// probe and the zygote. Not thread-safe (setenv).
StackSetup SetUpStack(const std::map<std::string, std::string>& requests, bool run_doctor,
                      const std::string& runner_path, std::chrono::milliseconds timeout);

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_PLATFORM_PROBE_H_
