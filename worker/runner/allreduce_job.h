// The runner's side of the allreduce family (model/families/allreduce.h):
// the job's process group (a gang's, or a group of one), one all-reduce per
// step, timed by the same loop as training steps (timing_loop.h), the
// slowest rank's median step and bandwidths in Measurement.data_parallel.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_ALLREDUCE_JOB_H_
#define PARADNN_WORKER_RUNNER_ALLREDUCE_JOB_H_

#include <torch/torch.h>

#include <vector>

#include "model/model_spec.h"
#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/trainer.h"

namespace paradnn::runner {

// Times `job` (family allreduce, `spec` valid) on devices.front(): fills
// build_seconds, the warm-up and timing fields, stats, step_seconds and
// data_parallel (exposed_communication_s = allreduce_s = the slowest rank's
// median step; algbw and busbw as nccl-tests defines them). Examples/s and
// FLOP rates stay 0: a step trains nothing. Throws what the collectives
// throw (GangBroken in a gang).
void MeasureAllReduce(const v1::RunnerJob& job, const model::ModelSpec& spec,
                      const v1::RunSettings& settings, const std::vector<torch::Device>& devices,
                      JobObserver* observer, v1::Measurement* m);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_ALLREDUCE_JOB_H_
