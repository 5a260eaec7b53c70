// What the coordinator reads from a platform's stack record, shared by the
// runner (which writes it) and the server (which judges results by it):
// the slow-BLAS sentence from the stack doctor's findings, and the memory a
// runner process holds for a job. LibTorch-free.
#ifndef PARADNN_COMMON_STACK_FINDINGS_H_
#define PARADNN_COMMON_STACK_FINDINGS_H_

#include <optional>
#include <string>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::common {

// The installed BLAS core is flagged slow on results when the best correct
// core the doctor found is faster by this factor.
inline constexpr double kSlowStackFactor = 1.10;

// The sentence for results that ran on the installed core when the doctor
// found one faster by at least kSlowStackFactor, e.g. "BLAS runs Prescott
// kernels; this CPU supports SkylakeX (4.1x faster fp32 GEMM measured)";
// nullopt otherwise.
std::optional<std::string> SlowBlasCondition(
    const google::protobuf::RepeatedPtrField<v1::StackFinding>& findings);

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

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_STACK_FINDINGS_H_
