// The stack settings and what the coordinator reads from a platform's stack
// record, shared by the runner (which writes it), the worker (which applies
// the settings to its runners) and the server (which validates sweeps and
// judges results by it): the settings' names, the slow-stack sentence from
// the stack doctor's findings, and the memory a runner process holds for a
// job. LibTorch-free.
#ifndef PARADNN_PLATFORM_STACK_FINDINGS_H_
#define PARADNN_PLATFORM_STACK_FINDINGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::platform {

// A stack setting: chosen per process by an environment variable the
// library reads once, when the process starts. Its values are "auto" (the
// stack doctor's fastest correct choice), "as-installed" (what the library
// picks by itself, or the variable as the user set it) or a name.
struct StackSettingInfo {
  const char* component;   // StackFinding.component, a sweep's stack key, a result field
  const char* env_var;     // e.g. OPENBLAS_CORETYPE
  const char* choice_env;  // how the value in effect was chosen, for the record
  const char* flag;        // the worker's and runner's flag, e.g. --blas-core
  const char* library;     // for sentences: "BLAS", "ATen"
  const char* workload;    // what the doctor's trial times: "fp32 GEMM"
  // The names allowed besides auto and as-installed; empty: any name of
  // letters, digits, '-' and '_' (OpenBLAS cores are many).
  std::vector<std::string> names;
  const char* names_help;  // e.g. "an OpenBLAS core name (letters and digits, e.g. SkylakeX)"
};
// A job's stack settings are stored among its hyper-parameters under this
// prefix ("stack.blas_core": what was asked for; the result field
// "blas_core" is what its process ran).
inline constexpr char kStackKeyPrefix[] = "stack.";

// blas_core (OPENBLAS_CORETYPE) and aten_capability (ATEN_CPU_CAPABILITY:
// default, avx2, avx512).
const std::vector<StackSettingInfo>& StackSettingInfos();
const StackSettingInfo* FindStackSettingInfo(absl::string_view component);
// OK when `value` is auto, as-installed or one of the setting's names;
// otherwise InvalidArgument "<field>: '<value>' is not auto, as-installed or
// <names_help>".
absl::Status ValidateStackValue(const StackSettingInfo& setting, absl::string_view value,
                                absl::string_view field);

// The installed value of a setting is flagged slow on results when the best
// correct value the doctor found is faster by this factor.
inline constexpr double kSlowStackFactor = 1.10;

// The sentence for a result that ran with `in_use` of `component` when
// that is the as-installed value and the doctor found one faster by at least
// kSlowStackFactor, e.g. "BLAS runs Prescott kernels; this CPU supports
// SkylakeX (4.1x faster fp32 GEMM measured)"; nullopt otherwise (also when
// `in_use` is empty: the as-installed value is then assumed).
std::optional<std::string> SlowStackCondition(
    const google::protobuf::RepeatedPtrField<v1::StackFinding>& findings,
    absl::string_view component, absl::string_view in_use);

// What a runner process holds at its peak for a job whose own estimate
// (ModelCounts.peak_memory_estimate_bytes: weights, gradients, optimizer
// state, activations) is `model_estimate_bytes`: LibTorch's footprint
// before any model (154 MiB measured for Debian's CPU LibTorch 1.13 with
// OpenBLAS and oneDNN loaded; kRuntimeBaselineBytes leaves room for more
// threads' stacks and JIT caches) plus the estimate with kAllocatorSlack for
// operator workspaces and the freed memory the runner's heap keeps (measured
// RSS was 0.38-0.99 of the bare estimate over FC, CNN, LSTM, ResNet-50,
// SqueezeNet and Transformer jobs; docs/measurement.md). 0 stays 0
// (unknown). What PREDICTED_OOM is decided on.
inline constexpr double kRuntimeBaselineBytes = 256.0 * (1 << 20);
inline constexpr double kAllocatorSlack = 1.10;
double ProcessMemoryEstimateBytes(double model_estimate_bytes);

}  // namespace paradnn::platform

#endif  // PARADNN_PLATFORM_STACK_FINDINGS_H_
