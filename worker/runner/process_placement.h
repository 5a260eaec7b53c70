// Where a job's threads settings put the runner process beyond its CPU
// list (platform/thread_profile.h; docs/tuning.md "Placement"): one
// logical CPU per physical core (cores=physical, and the guideline) and
// its memory on the NUMA nodes of its CPUs (numa=on), as `taskset` and
// `numactl --membind` would from outside. Torch-free.
#ifndef PARADNN_WORKER_RUNNER_PROCESS_PLACEMENT_H_
#define PARADNN_WORKER_RUNNER_PROCESS_PLACEMENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace paradnn::runner {

// Places this process, whose CPUs are `cpus` (RunnerJob.cpus, else what it
// started with): with `physical_cores`, confines it to the first logical
// CPU of each physical core among them; with `numa`, binds its memory
// (MPOL_BIND) to the nodes of the CPUs it then has, and reads the policy
// back. Call before LibTorch's pools start. Returns what was done, for
// Measurement.thread_pinning ("" when neither is asked); InvalidArgument
// (the UNSUPPORTED outcome) with the kernel's reason when it refuses.
absl::StatusOr<std::string> PlaceProcess(const std::vector<int>& cpus, bool physical_cores,
                                         bool numa);

// The memory policy of this process as text: "memory bound to NUMA node 0
// (MPOL_BIND)", "memory policy: default (first touch)", and so on.
std::string DescribeMemoryPolicy();

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_PROCESS_PLACEMENT_H_
