// The devices a job runs on: the job's device string checked against what
// this LibTorch can run (CPU, CUDA), its data-parallel replicas' devices,
// and the device-side waits and memory peaks the timing loop reads. A
// LibTorch header; job_devices.cc is the one unit that reads the CUDA
// caching allocator (PARADNN_WITH_C10_CUDA, worker/runner/CMakeLists.txt).
#ifndef PARADNN_WORKER_RUNNER_JOB_DEVICES_H_
#define PARADNN_WORKER_RUNNER_JOB_DEVICES_H_

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// The devices of the job's replicas (one without params.devices): "cpu" (or
// empty), "cuda" (device 0, or GPUs 0..N-1 for N replicas) or "cuda:N".
// InvalidArgument (the UNSUPPORTED outcome) saying why this runner cannot:
// a device this LibTorch has not, too few GPUs, replicas on one pinned GPU,
// CPU replicas in one process, which run only for tests
// ($PARADNN_TEST_CPU_REPLICAS=1) and are then flagged suspect on `m`, or a
// gang (RunnerJob.gang) whose device this build cannot join over c10d.
absl::StatusOr<std::vector<torch::Device>> JobDevices(const v1::RunnerJob& job, v1::Measurement* m);

// Waits for the device's queued work: a step's time is the time to finish it.
void SynchronizeDevice(const torch::Device& device);

// The CUDA caching allocator's peak of allocated bytes on `device` since
// ResetDevicePeak; 0 on the CPU and where LibTorch has no c10_cuda.
void ResetDevicePeak(const torch::Device& device);
int64_t DevicePeakBytes(const torch::Device& device);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_JOB_DEVICES_H_
