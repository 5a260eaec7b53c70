#include "worker/runner/job_sentinel.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"
#include "worker/runner/host_probe.h"
#include "worker/runner/platform.h"

namespace paradnn::runner {
namespace {

// Seconds from `start` until now (named apart from trainer.cc's, which
// shares this target's unity batches).
double SentinelSecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void SentinelBefore(const v1::RunnerJob& job, std::chrono::steady_clock::time_point handed_over,
                    v1::Measurement* m, SuspectFacts* facts) {
  v1::HostSentinel& sentinel = *m->mutable_sentinel();
  const v1::RecentSentinel& recent = job.recent_sentinel();
  const double since_process_start = SecondsSinceProcessStart();
  const double recent_age =
      recent.age_s() +
      (since_process_start >= 0 ? since_process_start : SentinelSecondsSince(handed_over));
  if (recent.compute_ratio() > 0 && recent_age < job.sentinel_reuse_s()) {
    sentinel.set_compute_before(recent.compute_ratio());
    sentinel.set_latency_before_s(recent.latency_s());
    sentinel.set_before_age_s(std::max(recent_age, 1e-6));  // > 0 marks it reused
  } else {
    const SentinelReading before = ReadSentinel(job.reference_probe_flops_per_sec());
    sentinel.set_compute_before(before.compute_ratio);
    sentinel.set_latency_before_s(before.latency_s);
    sentinel.set_seconds(before.seconds);
  }
  facts->probe_ratio_before = sentinel.compute_before();
}

void SentinelAfter(const v1::RunnerJob& job, std::chrono::steady_clock::time_point before_at,
                   v1::Measurement* m, SuspectFacts* facts, JobObserver* observer) {
  v1::HostSentinel& sentinel = *m->mutable_sentinel();
  const double before_age = sentinel.before_age_s() + SentinelSecondsSince(before_at);
  if (before_age >= job.sentinel_reuse_s()) {
    const SentinelReading after = ReadSentinel(job.reference_probe_flops_per_sec());
    facts->probe_ratio_after = after.compute_ratio;
    sentinel.set_compute_after(after.compute_ratio);
    sentinel.set_latency_after_s(after.latency_s);
    sentinel.set_seconds(sentinel.seconds() + after.seconds);
  }
  const std::string before_note =
      sentinel.before_age_s() > 0
          ? absl::StrFormat(" (the worker's reading, %.1f s old)", sentinel.before_age_s())
          : "";
  const std::string after =
      sentinel.compute_after() > 0
          ? absl::StrFormat("%.0f %% after; tiny step %.3f ms, %.3f ms",
                            sentinel.compute_after() * 100, sentinel.latency_before_s() * 1e3,
                            sentinel.latency_after_s() * 1e3)
          : absl::StrFormat(
                "not read after (the reading before is %.1f s old, reused up to "
                "%.1f s); tiny step %.3f ms",
                before_age, job.sentinel_reuse_s(), sentinel.latency_before_s() * 1e3);
  if (observer == nullptr) return;
  observer->OnLog(
      absl::StrFormat("host-speed sentinel: matmul at %.0f %% of its calibrated speed "
                      "before timing%s, %s",
                      sentinel.compute_before() * 100, before_note, after));
}

}  // namespace paradnn::runner
