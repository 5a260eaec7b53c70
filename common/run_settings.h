// Defaults and limits for RunSettings, shared by the coordinator (which
// stores the effective settings with each job) and the runner (which may be
// run by hand with any subset of flags).
#ifndef PARADNN_COMMON_RUN_SETTINGS_H_
#define PARADNN_COMMON_RUN_SETTINGS_H_

#include "absl/status/status.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::common {

inline constexpr double kDefaultCi = 0.02;
inline constexpr double kDefaultMaxSeconds = 10.0;
inline constexpr int kDefaultWarmupSteps = 3;
inline constexpr int kDefaultMinSteps = 5;
inline constexpr int kDefaultMaxSteps = 10000;
inline constexpr int kDefaultInterOpThreads = 1;

// Returns `settings` with every zero field replaced by its default.
// intra_op_threads 0 becomes the number of logical CPUs of this host.
v1::RunSettings WithRunDefaults(const v1::RunSettings& settings);

// InvalidArgument naming the field ("run.ci", ...) and the allowed range for
// any negative or out-of-range value. Zero means "default" and is valid.
absl::Status ValidateRunSettings(const v1::RunSettings& settings);

// The worker's hard deadline for a job: timeout_seconds if set, else enough
// for build, warm-up and the timing budget.
double JobDeadlineSeconds(const v1::RunSettings& settings);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_RUN_SETTINGS_H_
