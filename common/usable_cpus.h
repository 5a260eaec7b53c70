// How many CPUs this process may run on: its affinity (a worker's --cpus,
// taskset, a cgroup cpuset), not the host's count. Default thread counts
// follow it, so that a confined process does not oversubscribe its CPUs.
#ifndef PARADNN_COMMON_USABLE_CPUS_H_
#define PARADNN_COMMON_USABLE_CPUS_H_

namespace paradnn::common {

// CPU_COUNT of sched_getaffinity; the online CPUs where that fails; >= 1.
int UsableCpuCount();

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_USABLE_CPUS_H_
