// Conditions that make a measurement suspect (docs: issue "Fingerprint"):
// the reference BLAS doing the matmuls, other load on the host, CPU frequency
// scaling, noisy steps, a loss that turned non-finite. Each check is a pure function from the facts
// to a sentence for Measurement.suspect; RunJob gathers the facts. Torch-free.
#ifndef PARADNN_WORKER_RUNNER_SUSPECT_CONDITIONS_H_
#define PARADNN_WORKER_RUNNER_SUSPECT_CONDITIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace paradnn::runner {

// Load above this many runnable threads per logical CPU, besides the
// runner's own, marks the host as busy.
inline constexpr double kBusyLoadPerCpu = 0.5;
// A coefficient of variation of the timed steps above this marks them noisy.
inline constexpr double kNoisyStepsCv = 0.10;
// The host-speed probe (host_probe.h) below this fraction of its calibrated
// speed marks the host as slower than when it was calibrated.
inline constexpr double kSlowHostProbeRatio = 0.85;

// True when `blas_backend` (Platform.blas_backend, from DescribeLoadedBlas)
// names the Netlib reference BLAS rather than an optimized one (OpenBLAS,
// MKL, BLIS, ATLAS): "reference BLAS (...)" or a bare libblas.so from a
// .../blas/ directory.
bool IsReferenceBlas(absl::string_view blas_backend);

// "reference BLAS in use: ..." when IsReferenceBlas(blas_backend).
std::optional<std::string> ReferenceBlasCondition(absl::string_view blas_backend);

// The 1-minute load average of /proc/loadavg text; nullopt if unparsable.
std::optional<double> ParseLoadAverage1(absl::string_view loadavg);

// "host busy: load average X on N CPUs" when the higher of the two samples
// (job start, job end; nullopt = not readable) minus `runner_threads` (the
// runner's own compute threads) exceeds kBusyLoadPerCpu x `logical_cpus`.
// X is the higher sample. Nothing when neither sample or no CPU count is known.
std::optional<std::string> HostLoadCondition(std::optional<double> load_at_start,
                                             std::optional<double> load_at_end, int runner_threads,
                                             int logical_cpus);

// "cpu frequency scaling: governor G" when the cpufreq governor is known
// (non-empty) and not "performance".
std::optional<std::string> GovernorCondition(absl::string_view governor);

// "noisy steps: CV N %" when `cv` (stddev / mean of the timed steps) exceeds
// kNoisyStepsCv.
std::optional<std::string> NoisyStepsCondition(double cv);

// "host slower than at calibration: matmul probe at N % of its calibrated
// speed before timing, M % after" when either ratio (probe / calibrated
// probe; nullopt = not probed) is below kSlowHostProbeRatio.
std::optional<std::string> HostSpeedCondition(std::optional<double> ratio_before,
                                              std::optional<double> ratio_after);

// Above this fraction of subnormal gradient values the step runs partly on
// denormal arithmetic (10-100x slower per operation on x86).
inline constexpr double kSubnormalGradientFraction = 1e-3;

// "denormals: N % of gradient values are subnormal ..." when `fraction`
// (nullopt = not checked) exceeds kSubnormalGradientFraction; it names the
// flush-to-zero state (Platform.flush_denormal) so the reader knows whether
// the hardware already flushed them (then the step did not pay for them).
std::optional<std::string> SubnormalCondition(std::optional<double> fraction,
                                              absl::string_view flush_denormal);

// "loss not finite: ..." when the last timed step's loss is NaN or
// infinite: the model diverged or a kernel computed garbage (Debian's
// LibTorch 1.13 gets one bfloat16 convolution gradient wrong, see
// docs/measurement.md). The step times stand; what they trained does not.
std::optional<std::string> NonFiniteLossCondition(double first_loss, double last_loss);

// The facts one measurement is judged on.
struct SuspectFacts {
  std::string blas_backend;
  std::string governor;                 // "" when unreadable
  std::optional<double> load_at_start;  // 1-minute load average samples
  std::optional<double> load_at_end;
  int runner_threads = 0;
  int logical_cpus = 0;
  double steps_cv = 0;
  std::optional<double> probe_ratio_before;  // host-speed probe / calibrated probe
  std::optional<double> probe_ratio_after;
  std::optional<double> subnormal_gradient_fraction;
  std::string flush_denormal;  // "on" / "off" / ""
  double first_loss = 0;       // the first warm-up step's
  double last_loss = 0;        // the last timed step's
};

// Every condition that holds, in the order of the functions above.
std::vector<std::string> SuspectConditions(const SuspectFacts& facts);

// The host's current 1-minute load average from /proc/loadavg; nullopt if
// unreadable.
std::optional<double> HostLoadAverage1();

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_SUSPECT_CONDITIONS_H_
