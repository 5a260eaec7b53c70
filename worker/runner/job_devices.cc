#include "worker/runner/job_devices.h"

#include <torch/cuda.h>
#include <torch/version.h>
#ifdef PARADNN_WITH_C10_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "model/family.h"
#include "worker/runner/data_parallel.h"

namespace paradnn::runner {
namespace {

// The torch device of a job's device string: "cpu" (or empty), "cuda"
// (device 0) or "cuda:N". InvalidArgument, naming the device, where this
// LibTorch cannot run (the UNSUPPORTED outcome).
absl::StatusOr<torch::Device> JobDevice(const std::string& name) {
  if (name.empty() || name == "cpu") return torch::Device(torch::kCPU);
  int index = 0;
  const bool cuda = name == "cuda" || (absl::StartsWith(name, "cuda:") &&
                                       absl::SimpleAtoi(name.substr(5), &index) && index >= 0);
  if (!cuda) {
    return absl::InvalidArgumentError(
        absl::StrCat("device '", name, "': this runner measures on cpu, cuda or cuda:N"));
  }
  if (!torch::cuda::is_available()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device '", name, "': this runner's LibTorch ", TORCH_VERSION,
        " has no CUDA (a CPU build, or no GPU visible); build paradnn-runner against a CUDA "
        "LibTorch (docs/backends.md)"));
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("device '", name, "': only ", count, " CUDA device(s) visible"));
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

// Set to 1, lets a job's data-parallel replicas (params.devices) run on the
// CPU as threads of one process, joined over Gloo. Otherwise refused:
// threads of one process share its cores and BLAS pool, so their times say
// nothing of a multi-socket host's. A gang (params.hosts) on the CPU needs
// no such setting: one replica per process, each on its worker's CPUs.
constexpr const char* kCpuReplicasForTestsEnv = "PARADNN_TEST_CPU_REPLICAS";

bool CpuReplicasForTests() {
  const char* value = std::getenv(kCpuReplicasForTestsEnv);
  return value != nullptr && std::string(value) == "1";
}

// The device of each of the job's `replicas` (params.devices): `first`
// alone, or GPUs 0..replicas-1 for a worker of device "cuda".
// InvalidArgument (the UNSUPPORTED outcome) saying why this runner cannot.
absl::StatusOr<std::vector<torch::Device>> ReplicaDevices(const std::string& job_device,
                                                          const torch::Device& first,
                                                          int64_t replicas) {
  if (replicas <= 1) return std::vector<torch::Device>{first};
  const std::string what = absl::StrCat("devices ", replicas, ": ");
  if (first.is_cpu() && !CpuReplicasForTests()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, "data-parallel replicas run one per CUDA device; this job is on cpu"));
  }
  if (first.is_cuda() && job_device != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "this worker is pinned to one GPU (", job_device,
        "); a worker started with --device cuda lends every visible GPU to a job's replicas"));
  }
  if (first.is_cuda()) {
    const auto visible = static_cast<int64_t>(torch::cuda::device_count());
    if (replicas > visible) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "only ", visible, " CUDA device(s) visible to this runner"));
    }
  }
  if (absl::StatusOr<std::string> backend = CollectiveBackendFor(first.type()); !backend.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, backend.status().message()));
  }
  std::vector<torch::Device> devices;
  for (int64_t r = 0; r < replicas; ++r) {
    devices.push_back(
        first.is_cpu() ? first : torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(r)));
  }
  return devices;
}

}  // namespace

absl::StatusOr<std::vector<torch::Device>> JobDevices(const v1::RunnerJob& job,
                                                      v1::Measurement* m) {
  const std::string& job_device = job.device();
  absl::StatusOr<torch::Device> first = JobDevice(job_device);
  if (!first.ok()) return first.status();
  const int64_t replicas = model::DataParallelDevices(job.config());
  absl::StatusOr<std::vector<torch::Device>> devices = ReplicaDevices(job_device, *first, replicas);
  if (devices.ok() && job.has_gang()) {
    // A gang's ranks join over c10d whatever their count here (CPU: Gloo).
    if (absl::StatusOr<std::string> backend = CollectiveBackendFor(first->type()); !backend.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("hosts ", job.gang().hosts(), ": ", backend.status().message()));
    }
  }
  if (devices.ok() && replicas > 1 && first->is_cpu()) {
    m->add_suspect(absl::StrCat("CPU replicas (", kCpuReplicasForTestsEnv,
                                "=1): threads of one process sharing its cores and BLAS pool; a "
                                "test of the data-parallel code, not a measurement"));
  }
  return devices;
}

void SynchronizeDevice(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

#ifdef PARADNN_WITH_C10_CUDA
// The caching allocator's statistics start over for each job.
void ResetDevicePeak(const torch::Device& device) {
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
}
int64_t DevicePeakBytes(const torch::Device& device) {
  if (!device.is_cuda()) return 0;
  // The stats' type moved namespaces in LibTorch 2.5 (c10::CachingDeviceAllocator);
  // index 0 is StatType::AGGREGATE in 1.13 and 2.x alike.
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
  return stats.allocated_bytes[0].peak;
}
#else
void ResetDevicePeak(const torch::Device&) {}
int64_t DevicePeakBytes(const torch::Device&) { return 0; }
#endif

}  // namespace paradnn::runner
