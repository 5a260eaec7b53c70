// The worker's platform: what `paradnn-runner --platform --framed` reports,
// or, when the runner cannot say, what /proc says, marked as a fallback.
#ifndef PARADNN_WORKER_PLATFORM_PROBE_H_
#define PARADNN_WORKER_PLATFORM_PROBE_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::worker {

// Runs `runner_path --platform --framed` and returns the one Platform frame
// it writes. Blocks for at most `timeout` (then kills the runner's process
// group). Returns an error naming the cause (cannot execute, exit status or
// signal with the stderr tail, no frame, unparsable frame, timeout).
// Thread-safe.
absl::StatusOr<v1::Platform> QueryRunnerPlatform(const std::string& runner_path,
                                                 std::chrono::milliseconds timeout);

// A Platform from /proc/cpuinfo, /proc/meminfo, uname and gethostname for
// `device_kind`: CPU model (as device_name for "cpu"), sockets, physical
// cores, logical CPUs, memory, kernel release, relevant ISA flags. Fields
// only the runner knows say so: blas_backend is
// "unknown (runner --platform failed: <why>)". The fingerprint is a hash of
// the non-hostname fields prefixed "fallback-", so it never equals a real
// runner fingerprint. Thread-safe.
v1::Platform FallbackPlatform(const std::string& device_kind, const std::string& why);

// QueryRunnerPlatform, else FallbackPlatform with a logged warning.
v1::Platform ProbePlatform(const std::string& runner_path, const std::string& device_kind,
                           std::chrono::milliseconds timeout);

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_PLATFORM_PROBE_H_
