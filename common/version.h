#ifndef PARADNN_COMMON_VERSION_H_
#define PARADNN_COMMON_VERSION_H_

namespace paradnn::common {
inline constexpr const char* kVersion = "0.1.0";

// The timing method's version: warm-up, the confidence-interval stopping
// rule, the step clock and what a step includes (worker/runner/trainer.h,
// worker/jax_runner). Bump it whenever a change there can move a
// measurement: results are reused across sweeps only between equal
// harnesses (docs/prediction.md, "Reusing results").
inline constexpr const char* kTimingHarnessVersion = "timing-1";
}  // namespace paradnn::common

#endif  // PARADNN_COMMON_VERSION_H_
