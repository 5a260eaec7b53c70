// Where each CPU sits: its socket (package), physical core and NUMA node,
// read from sysfs, and the two placements the threads settings ask for
// (platform/thread_profile.h): one logical CPU per physical core
// (cores=physical: hyper-thread siblings left idle) and replica shares cut
// along NUMA nodes with each process's memory on its own node (numa=on:
// what `numactl --cpunodebind=N --membind=N` does per socket). Reading and
// planning only; the runner applies them (worker/runner/thread_pinning.h).
#ifndef PARADNN_COMMON_CPU_PLACES_H_
#define PARADNN_COMMON_CPU_PLACES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace paradnn::common {

inline constexpr char kSysfsSystemRoot[] = "/sys/devices/system";

struct CpuPlace {
  int cpu = 0;
  int package = 0;  // topology/physical_package_id
  int core = 0;     // topology/core_id (unique within its package)
  int node = 0;     // the node/nodeN whose cpulist holds it
  // False where the topology files were missing: package and core are then
  // the stand-ins ReadCpuPlaces describes.
  bool topology_known = false;
};

// The places of `cpus` under `root` (kSysfsSystemRoot, or a copy of its
// layout in tests): cpu/cpuN/topology/{physical_package_id,core_id} and
// node/nodeK/cpulist. A CPU whose topology files are missing counts as its
// own core of package 0 (what a host without them gives: no siblings
// known); one in no node's list, as node 0 (a kernel without NUMA).
std::vector<CpuPlace> ReadCpuPlaces(const std::vector<int>& cpus,
                                    const std::string& root = kSysfsSystemRoot);

// One CPU per physical core, the lowest-numbered of each (package, core),
// ascending: the CPUs a process uses when it keeps off hyper-thread
// siblings.
std::vector<int> PhysicalCoreCpus(const std::vector<CpuPlace>& places);

// The NUMA nodes of `places`, ascending and without repeats.
std::vector<int> NodesOf(const std::vector<CpuPlace>& places);

// `cpus` (ascending) in `parts` contiguous shares whose sizes differ by at
// most one, the larger first; empty when there are fewer CPUs than parts.
std::vector<std::vector<int>> SplitCpus(const std::vector<int>& cpus, int parts);

// One replica's CPUs and the node its memory goes to.
struct NodeShare {
  std::vector<int> cpus;
  int node = 0;
};

// `places` in `replicas` shares, each inside one NUMA node: the nodes
// (ascending) get replicas / nodes shares each, SplitCpus of the node's
// CPUs. InvalidArgument
// naming `field` when replicas is not a multiple of the nodes spanned
// ("... span 2 NUMA nodes (node 0: CPUs 0-7, node 1: CPUs 8-15) ...") or a
// node has fewer CPUs than its replicas.
absl::StatusOr<std::vector<NodeShare>> SplitCpusByNode(const std::vector<CpuPlace>& places,
                                                       int replicas, const std::string& field);

// "node 0: CPUs 0-7, node 1: CPUs 8-15".
std::string DescribeNodes(const std::vector<CpuPlace>& places);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_CPU_PLACES_H_
