#include "common/run_settings.h"

#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"

namespace paradnn::common {

v1::RunSettings WithRunDefaults(const v1::RunSettings& settings) {
  v1::RunSettings out = settings;
  if (out.ci() == 0) out.set_ci(kDefaultCi);
  if (out.max_seconds() == 0) out.set_max_seconds(kDefaultMaxSeconds);
  if (out.warmup_steps() == 0) out.set_warmup_steps(kDefaultWarmupSteps);
  if (out.min_steps() == 0) out.set_min_steps(kDefaultMinSteps);
  if (out.max_steps() == 0) out.set_max_steps(kDefaultMaxSteps);
  if (out.intra_op_threads() == 0) {
    out.set_intra_op_threads(static_cast<int32_t>(UsableCpuCount()));
  }
  if (out.inter_op_threads() == 0) out.set_inter_op_threads(kDefaultInterOpThreads);
  return out;
}

absl::Status ValidateRunSettings(const v1::RunSettings& s) {
  auto bad = [](const char* field, const auto& value, const char* allowed) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is out of range; allowed ", allowed));
  };
  // !(x >= 0) rather than x < 0: NaN is out of range too.
  if (!(s.ci() >= 0) || s.ci() >= 1)
    return bad("run.ci", s.ci(), "0 < ci < 1 (relative half-width, 0.02 = ±2 %)");
  if (!(s.max_seconds() >= 0) || s.max_seconds() > 86400)
    return bad("run.max_seconds", s.max_seconds(), "0 < seconds <= 86400");
  if (s.warmup_steps() < 0 || s.warmup_steps() > 100000)
    return bad("run.warmup_steps", s.warmup_steps(), "1..100000");
  // A result carries every timed step; the coordinator takes at most
  // 100,000 (server/result_validation.h).
  if (s.min_steps() < 0 || s.min_steps() > 100000)
    return bad("run.min_steps", s.min_steps(), "2..100000");
  if (s.min_steps() == 1)
    return bad("run.min_steps", s.min_steps(), "at least 2 (a CI needs two samples)");
  if (s.max_steps() < 0 || s.max_steps() > 100000)
    return bad("run.max_steps", s.max_steps(), "2..100000");
  if (s.max_steps() != 0 && s.max_steps() < std::max(2, s.min_steps())) {
    return bad("run.max_steps", s.max_steps(), "at least run.min_steps and at least 2");
  }
  if (s.intra_op_threads() < 0 || s.intra_op_threads() > 1024)
    return bad("run.intra_op_threads", s.intra_op_threads(), "1..1024");
  if (s.inter_op_threads() < 0 || s.inter_op_threads() > 1024)
    return bad("run.inter_op_threads", s.inter_op_threads(), "1..1024");
  if (s.profile_steps() < 0 || s.profile_steps() > 1000)
    return bad("run.profile_steps", s.profile_steps(), "1..1000");
  if (!(s.timeout_seconds() >= 0) || s.timeout_seconds() > 7 * 86400)
    return bad("run.timeout_seconds", s.timeout_seconds(), "0 < seconds <= 604800");
  // Under a second no job fits (1e-300 was accepted and planned nothing).
  if (!(s.budget_seconds() >= 0) || (s.budget_seconds() > 0 && s.budget_seconds() < 1) ||
      s.budget_seconds() > 365 * 86400) {
    return bad("run.budget", s.budget_seconds(), "1 <= seconds <= 31536000 (a year), or none");
  }
  // Under 0.1 % no host here measures; 100 % and more is no target.
  if (!(s.target_interval() >= 0) || (s.target_interval() > 0 && s.target_interval() < 0.001) ||
      s.target_interval() >= 1) {
    return bad("run.target_interval", s.target_interval(),
               "a fraction 0.001 <= target < 1 (0.03 or 3% = +-3 %), or none");
  }
  return absl::OkStatus();
}

double JobDeadlineSeconds(const v1::RunSettings& settings) {
  if (settings.timeout_seconds() > 0) return settings.timeout_seconds();
  const double budget = settings.max_seconds() > 0 ? settings.max_seconds() : kDefaultMaxSeconds;
  return 3 * budget + 120;
}

}  // namespace paradnn::common
