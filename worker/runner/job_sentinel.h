// The host-speed sentinel around one job's timing (host_probe.h): read just
// before the first timed step, or reused from the worker's newest reading
// while that is young, and read again after the last one once the first
// reading has grown too old to hand to the next job. Torch-free header;
// the readings run LibTorch (host_probe.cc).
#ifndef PARADNN_WORKER_RUNNER_JOB_SENTINEL_H_
#define PARADNN_WORKER_RUNNER_JOB_SENTINEL_H_

#include <chrono>

#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/suspect_conditions.h"
#include "worker/runner/trainer.h"

namespace paradnn::runner {

// The sentinel just before timing, into m.sentinel and `facts`: the
// worker's newest reading (an earlier job's) while it is younger than
// job.sentinel_reuse_s, otherwise one this job reads. The reading's age
// was taken when the worker started this runner: add the runner's time
// since its process started (a runner, or a zygote's child, serves one
// job), or since RunJob began (`handed_over`) where /proc cannot say.
void SentinelBefore(const v1::RunnerJob& job, std::chrono::steady_clock::time_point handed_over,
                    v1::Measurement* m, SuspectFacts* facts);

// The sentinel just after timing, when the "before" reading (taken at
// `before_at`, then before_age_s old) is no longer young enough for the
// worker to hand to the next job; logged to `observer` (may be null).
void SentinelAfter(const v1::RunnerJob& job, std::chrono::steady_clock::time_point before_at,
                   v1::Measurement* m, SuspectFacts* facts, JobObserver* observer);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_JOB_SENTINEL_H_
