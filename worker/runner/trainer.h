// The timing harness: builds the model of one RunnerJob, warms it up, times
// training steps until the stopping rule says so, and returns the
// Measurement. The header is torch-free so that callers (runner_main.cc)
// compile without LibTorch headers; trainer.cc is a LibTorch unit.
#ifndef PARADNN_WORKER_RUNNER_TRAINER_H_
#define PARADNN_WORKER_RUNNER_TRAINER_H_

#include <string>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// Receives what a running job reports, on the harness thread and never inside
// a timed step.
class JobObserver {
 public:
  virtual ~JobObserver() = default;
  // Every warm-up and timed step, only when RunnerJob.stream_steps is set.
  virtual void OnStep(const v1::StepMetric& step) = 0;
  // Facts worth keeping beside the result (thread settings, warm-up length).
  virtual void OnLog(const std::string& line) = 0;
  // Once, with the model built, before the first warm-up step (concurrent
  // replicas wait there for one another, job_replicas.h).
  virtual void BeforeWarmup() {}
};

// Measures `job` on the CPU and returns the Measurement with config (defaults
// written out), counts, statistics, every timed sample (steps under 1 ms are
// timed in blocks, stats.block_steps) and the outcome; with
// settings.profile, an operator breakdown of a few more steps recorded after
// timing (op_profile). An OK
// result carries in `suspect` the conditions (suspect_conditions.h) that held:
// the BLAS loaded, the cpufreq governor, the host's 1-minute load average at
// the first and after the last step, and the CV of the timed steps.
// Never throws and never aborts on a model error: invalid settings or config
// give ERROR; a device or dtype LibTorch cannot run here gives UNSUPPORTED; a
// memory estimate above the host's memory gives PREDICTED_OOM without
// building; c10::Error / std::bad_alloc during build or training give OOM
// (allocation failures) or ERROR, with the message in `error`.
//
// Thread counts are applied first, before any parallel work:
// at::set_num_threads(intra), at::set_num_interop_threads(inter) (LibTorch
// allows the latter once per process), and the BLAS library's own pool is
// sized to `intra` so that intra_op_threads=1 really is one core. The values
// in effect are recorded. `observer` may be null. Not thread-safe: LibTorch's
// thread settings are process-wide.
//
// Family noop (model/families/noop.h) builds, sets and times nothing: OK at once.
v1::Measurement RunJob(const v1::RunnerJob& job, JobObserver* observer);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_TRAINER_H_
