#include "platform/stack_findings.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace paradnn::platform {

const std::vector<StackSettingInfo>& StackSettingInfos() {
  static const auto* infos = new std::vector<StackSettingInfo>{
      {"blas_core",
       "OPENBLAS_CORETYPE",
       "PARADNN_BLAS_CORE_CHOICE",
       "--blas-core",
       "BLAS",
       "fp32 GEMM",
       {},
       "an OpenBLAS core name (letters and digits, e.g. SkylakeX)"},
      {"aten_capability",
       "ATEN_CPU_CAPABILITY",
       "PARADNN_ATEN_CAPABILITY_CHOICE",
       "--aten-capability",
       "ATen",
       "fp32 elementwise",
       {"default", "avx2", "avx512"},
       "default, avx2 or avx512"},
  };
  return *infos;
}

const StackSettingInfo* FindStackSettingInfo(absl::string_view component) {
  for (const StackSettingInfo& info : StackSettingInfos()) {
    if (component == info.component) return &info;
  }
  return nullptr;
}

absl::Status ValidateStackValue(const StackSettingInfo& setting, absl::string_view value,
                                absl::string_view field) {
  if (value == "auto" || value == "as-installed") return absl::OkStatus();
  const bool ok =
      setting.names.empty()
          ? !value.empty() && value.size() <= 64 &&
                std::all_of(value.begin(), value.end(),
                            [](char c) { return absl::ascii_isalnum(c) || c == '-' || c == '_'; })
          : std::find(setting.names.begin(), setting.names.end(), value) != setting.names.end();
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": '", value, "' is not auto, as-installed or ", setting.names_help));
}

std::optional<std::string> SlowStackCondition(
    const google::protobuf::RepeatedPtrField<v1::StackFinding>& findings,
    absl::string_view component, absl::string_view in_use) {
  const v1::StackFinding* installed = nullptr;
  const v1::StackFinding* best = nullptr;
  for (const v1::StackFinding& f : findings) {
    if (f.component() != component) continue;
    if (f.as_installed()) installed = &f;
    if (f.correct() && (best == nullptr || f.flops_per_sec() > best->flops_per_sec())) best = &f;
  }
  if (installed == nullptr || best == nullptr || installed->flops_per_sec() <= 0 ||
      best->flops_per_sec() < kSlowStackFactor * installed->flops_per_sec() ||
      (!in_use.empty() && !absl::EqualsIgnoreCase(in_use, installed->setting()))) {
    return std::nullopt;
  }
  const StackSettingInfo* info = FindStackSettingInfo(component);
  if (info == nullptr) return std::nullopt;
  return absl::StrFormat("%s runs %s kernels; this CPU supports %s (%.1fx faster %s measured)",
                         info->library, installed->setting(), best->setting(),
                         best->flops_per_sec() / installed->flops_per_sec(), info->workload);
}

double ProcessMemoryEstimateBytes(double model_estimate_bytes) {
  if (!(model_estimate_bytes > 0)) return 0;
  return kRuntimeBaselineBytes + kAllocatorSlack * model_estimate_bytes;
}

}  // namespace paradnn::platform
