#include "common/stack_findings.h"

#include "absl/strings/str_format.h"

namespace paradnn::common {

std::optional<std::string> SlowBlasCondition(
    const google::protobuf::RepeatedPtrField<v1::StackFinding>& findings) {
  const v1::StackFinding* installed = nullptr;
  const v1::StackFinding* best = nullptr;
  for (const v1::StackFinding& f : findings) {
    if (f.component() != "blas_core") continue;
    if (f.as_installed()) installed = &f;
    if (f.correct() && (best == nullptr || f.flops_per_sec() > best->flops_per_sec())) best = &f;
  }
  if (installed == nullptr || best == nullptr || installed->flops_per_sec() <= 0 ||
      best->flops_per_sec() < kSlowStackFactor * installed->flops_per_sec()) {
    return std::nullopt;
  }
  return absl::StrFormat(
      "BLAS runs %s kernels; this CPU supports %s (%.1fx faster fp32 GEMM measured)",
      installed->setting(), best->setting(), best->flops_per_sec() / installed->flops_per_sec());
}

double ProcessMemoryEstimateBytes(double model_estimate_bytes) {
  if (!(model_estimate_bytes > 0)) return 0;
  return kRuntimeBaselineBytes + kAllocatorSlack * model_estimate_bytes;
}

}  // namespace paradnn::common
