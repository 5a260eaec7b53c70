// A job's framework threads: LibTorch's intra- and inter-op pools, the BLAS
// pool and the OpenMP threads' pinning, from the job's run settings or its
// stack.threads profile (platform/thread_profile.h) resolved on the CPUs
// this process may use (model/thread_guideline.h). Recorded in the
// Measurement (intra_op_threads, inter_op_threads, thread_pinning).
#ifndef PARADNN_WORKER_RUNNER_JOB_THREADS_H_
#define PARADNN_WORKER_RUNNER_JOB_THREADS_H_

#include <optional>
#include <string>

#include "model/model_spec.h"
#include "model/thread_guideline.h"
#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/trainer.h"

namespace paradnn::runner {

// The job's stack.threads profile resolved for `spec` on the CPUs this
// process may use now (call after confining it), or nullopt without one.
// Throws std::invalid_argument for a malformed profile (the worker and the
// coordinator check it first).
std::optional<model::ThreadSettings> JobThreadProfile(const v1::RunnerJob& job,
                                                      const model::ModelSpec& spec);

// Sets the pools: `profile`'s counts and pinning where given (its counts 0:
// LibTorch's own, nothing set), else `settings`' counts and the runner's
// pinning rule. Inter-op threads start before any pinning, so that they
// keep the process's CPUs. `confinement` (what ConfineProcessToCpus did)
// goes into thread_pinning. Throws what LibTorch throws.
void ApplyJobThreads(const v1::RunSettings& settings,
                     const std::optional<model::ThreadSettings>& profile,
                     const std::string& confinement, v1::Measurement* m, JobObserver* observer);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_JOB_THREADS_H_
