#include "server/utilization.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/family.h"
#include "platform/silicon_peak.h"
#include "platform/stack_findings.h"

namespace paradnn::server {
namespace {

bool RanOnCpu(const v1::Measurement& m) { return m.device().empty() || m.device() == "cpu"; }

// What the job's process ran with (a sweep's stack axis may differ from
// the platform), flagged where the doctor found that setting slow.
void FlagSlowStack(const v1::Platform& platform, const std::string& dtype,
                   const std::string& kernel, v1::Measurement* m) {
  if (!RanOnCpu(*m)) return;
  auto in_use = [&](const char* component, const std::string& platform_value) {
    const auto it = m->stack().find(component);
    return it != m->stack().end() && !it->second.empty() ? it->second : platform_value;
  };
  // float32 matmuls on a CPU go to the BLAS (LibTorch's sgemm_); conv and
  // 16-bit paths go to oneDNN and do not depend on the BLAS core.
  if (dtype == "float32" && kernel == "matmul") {
    if (std::optional<std::string> slow = platform::SlowStackCondition(
            platform.stack_findings(), "blas_core", in_use("blas_core", platform.blas_core()))) {
      m->add_suspect(*slow);
    }
  }
  // Every family's step is full of ATen's elementwise kernels.
  if (std::optional<std::string> slow =
          platform::SlowStackCondition(platform.stack_findings(), "aten_capability",
                                       in_use("aten_capability", platform.aten_capability()))) {
    m->add_suspect(*slow);
  }
}

// Silicon with a native 16-bit path runs it at least as fast as float32; a
// stack that reaches under half float32's rate on the job's kernel path
// runs a fallback instead (LibTorch 1.13 converts bfloat16 GEMMs on CPUs
// without AVX-512 BF16, and runs bfloat16 convolutions on ATen's reference
// kernels, aten::_slow_conv2d, where oneDNN has no bfloat16 path): the
// result measures that fallback, not the silicon's 16-bit rate.
constexpr double kSlowHalfPrecisionFactor = 2;

void FlagSlowHalfPrecision(const v1::Platform& platform, const std::string& dtype,
                           const std::string& kernel, v1::Measurement* m) {
  if (dtype == "float32") return;
  const v1::MatmulRoof* half = platform::CalibratedRoof(platform, kernel, dtype);
  const v1::MatmulRoof* full = platform::CalibratedRoof(platform, kernel, "float32");
  if (half == nullptr || full == nullptr ||
      !(half->flops_per_sec() * kSlowHalfPrecisionFactor < full->flops_per_sec())) {
    return;
  }
  m->add_suspect(absl::StrFormat(
      "%s %ss run at %s on this stack, %.0fx below its float32 %ss (%s): no native %s path "
      "here%s, so this result measures the stack's fallback, not the silicon",
      dtype, kernel, platform::FlopRate(half->flops_per_sec()),
      full->flops_per_sec() / half->flops_per_sec(), kernel,
      platform::FlopRate(full->flops_per_sec()), dtype,
      platform.isa_paths().empty() ? "" : absl::StrCat(" (", platform.isa_paths(), ")")));
}

// The calibrated roof of `kernel` at `dtype`, else the matmul roof (named
// so); null when neither was calibrated.
v1::MatmulRoof* FindRoof(v1::Platform* platform, const std::string& kernel,
                         const std::string& dtype, std::string* name) {
  int i = platform::CalibratedRoofIndex(*platform, kernel, dtype);
  *name = absl::StrCat(kernel, " ", dtype);
  if (i < 0) {
    i = platform::CalibratedRoofIndex(*platform, "matmul", dtype);
    if (i >= 0) *name = absl::StrCat("matmul ", dtype, " (no ", kernel, " roof calibrated)");
  }
  return i < 0 ? nullptr : platform->mutable_matmul_roofs(i);
}

}  // namespace

std::string ComputeDtype(const std::string& precision) {
  if (precision.empty() || precision == "float32") return "float32";
  if (precision == "bfloat16" || precision == "mixed_bf16") return "bfloat16";
  if (precision == "float16" || precision == "mixed_fp16") return "float16";
  return "";
}

std::string RoofKernelOf(const std::string& family) {
  const model::FamilyDef* schema = model::FindFamily(family);
  return schema == nullptr ? model::kMatmulRoof : schema->roof_kernel;
}

UtilizationRoofs::UtilizationRoofs(const v1::Platform& platform) : platform_(platform) {
  // The silicon's roof is never below what the stack was measured to reach:
  // a peak under a calibrated roof has a wrong basis (said in its
  // inconsistency) and is measured against as the calibrated figure.
  for (v1::SiliconPeak& peak : *platform_.mutable_silicon_peaks()) {
    for (const v1::MatmulRoof& roof : platform_.matmul_roofs()) {
      if (roof.dtype() != peak.dtype() || !(roof.flops_per_sec() > peak.flops_per_sec())) continue;
      if (peak.inconsistency().empty()) {
        platform::CheckPeakAgainstRoof(roof.flops_per_sec(),
                                       absl::StrCat(platform::RoofKernel(roof), " ", roof.dtype()),
                                       &peak);
      }
      peak.set_flops_per_sec(roof.flops_per_sec());
    }
  }
}

bool UtilizationRoofs::Fill(v1::Measurement* m) {
  m->clear_mfu();
  m->clear_hfu();
  m->clear_silicon_mfu();
  m->clear_silicon_hfu();
  m->clear_roof();
  const std::string dtype = ComputeDtype(m->config().precision());
  if (dtype.empty()) return false;
  const double model_rate = m->model_flops_per_sec();
  const double executed_rate = m->executed_flops_per_sec();
  // Only a clean measurement may move a roof: the FLOPs it executed are what
  // the silicon and the stack were seen to do. Anything else is shown
  // clamped at 100 % and flagged, the roof left alone.
  const bool may_raise = m->outcome() == v1::OK && m->suspect_size() == 0 && executed_rate > 0;
  bool raised = false;
  std::vector<std::string> notes;
  // utilization = rate / roof, at most 1; a clamp is said once per roof.
  auto ratio = [&](double rate, double roof, const std::string& name) {
    if (!(roof > 0) || !(rate > 0)) return 0.0;
    if (rate <= roof) return rate / roof;
    notes.push_back(absl::StrFormat("%s above the %s (%s): shown as 100 %%",
                                    platform::FlopRate(rate), name, platform::FlopRate(roof)));
    return 1.0;
  };

  const std::string kernel = RoofKernelOf(m->config().family());
  std::string roof_name;
  v1::MatmulRoof* roof = FindRoof(&platform_, kernel, dtype, &roof_name);
  if (roof != nullptr) {
    if (may_raise && executed_rate > roof->flops_per_sec()) {
      m->add_suspect(absl::StrFormat(
          "faster than the calibrated %s roof: %s executed against %s calibrated; the roof is "
          "raised to this job's rate",
          roof_name, platform::FlopRate(executed_rate), platform::FlopRate(roof->flops_per_sec())));
      roof->set_flops_per_sec(executed_rate);
      roof->set_raised_by_job(true);
      raised = true;
    }
    const std::string name = absl::StrCat("calibrated ", roof_name, " roof");
    m->set_mfu(ratio(model_rate, roof->flops_per_sec(), name));
    m->set_hfu(ratio(executed_rate, roof->flops_per_sec(), name));
    m->set_roof(roof_name);
  }

  for (v1::SiliconPeak& peak : *platform_.mutable_silicon_peaks()) {
    if (peak.dtype() != dtype || !(peak.flops_per_sec() > 0)) continue;
    if (may_raise && executed_rate > peak.flops_per_sec()) {
      m->add_suspect(absl::StrFormat(
          "faster than the theoretical %s peak (%s executed, peak %s): the peak's basis is wrong "
          "(%s); it is raised to this job's rate",
          dtype, platform::FlopRate(executed_rate), platform::FlopRate(peak.flops_per_sec()),
          peak.basis()));
      // The note is only ever added here: a peak already found wrong stays so.
      v1::SiliconPeak checked = peak;
      if (!platform::CheckPeakAgainstRoof(executed_rate, absl::StrCat(dtype, " rate of a job"),
                                          &checked) ||
          peak.inconsistency().empty()) {
        peak.set_inconsistency(checked.inconsistency());
      }
      peak.set_flops_per_sec(executed_rate);
      raised = true;
    }
    const std::string name = absl::StrCat("theoretical ", dtype, " peak");
    m->set_silicon_mfu(ratio(model_rate, peak.flops_per_sec(), name));
    m->set_silicon_hfu(ratio(executed_rate, peak.flops_per_sec(), name));
  }
  // One sentence per roof that clamped something (MFU and HFU may both).
  std::sort(notes.begin(), notes.end());
  notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
  for (std::string& note : notes) m->add_suspect(std::move(note));

  FlagSlowStack(platform_, dtype, kernel, m);
  FlagSlowHalfPrecision(platform_, dtype, kernel, m);
  return raised;
}

}  // namespace paradnn::server
