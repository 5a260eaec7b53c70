#include "worker/runner/process_placement.h"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cpu_list.h"
#include "common/cpu_places.h"
#include "worker/runner/thread_pinning.h"

namespace paradnn::runner {
namespace {

// Node masks of up to 1024 nodes. The two system calls are made directly:
// libnuma's numa_set_membind is a thin wrapper over set_mempolicy, and
// calling the kernel needs neither libnuma-dev at build time nor libnuma1
// on the host.
constexpr size_t kWordBits = sizeof(unsigned long) * CHAR_BIT;
constexpr size_t kMaskWords = 1024 / kWordBits;
using NodeMask = std::array<unsigned long, kMaskWords>;
constexpr size_t kMaskBits = kMaskWords * kWordBits;

std::vector<int> NodesIn(const NodeMask& mask) {
  std::vector<int> nodes;
  for (size_t bit = 0; bit < kMaskBits; ++bit) {
    if ((mask[bit / kWordBits] >> (bit % kWordBits)) & 1UL) {
      nodes.push_back(static_cast<int>(bit));
    }
  }
  return nodes;
}

std::string NodeWord(const std::vector<int>& nodes) {
  return absl::StrCat(nodes.size() == 1 ? "NUMA node " : "NUMA nodes ",
                      common::FormatCpuList(nodes));
}

absl::StatusOr<std::string> BindMemory(const std::vector<int>& nodes) {
  NodeMask mask{};
  for (int node : nodes) {
    if (node < 0 || static_cast<size_t>(node) >= kMaskBits) {
      return absl::InvalidArgumentError(absl::StrCat("numa=on: node ", node, " is out of range"));
    }
    mask[node / kWordBits] |= 1UL << (node % kWordBits);
  }
  // The kernel reads maxnode - 1 bits.
  if (syscall(SYS_set_mempolicy, MPOL_BIND, mask.data(), kMaskBits + 1) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("numa=on: binding memory to ", NodeWord(nodes),
                                                   " failed: ", std::strerror(errno)));
  }
  return DescribeMemoryPolicy();
}

}  // namespace

std::string DescribeMemoryPolicy() {
  int mode = -1;
  NodeMask mask{};
  if (syscall(SYS_get_mempolicy, &mode, mask.data(), kMaskBits + 1, nullptr, 0) != 0) {
    return absl::StrCat("memory policy unreadable (", std::strerror(errno), ")");
  }
  switch (mode) {
    case MPOL_DEFAULT:
      return "memory policy: default (first touch)";
    case MPOL_BIND:
      return absl::StrCat("memory bound to ", NodeWord(NodesIn(mask)), " (MPOL_BIND)");
    case MPOL_PREFERRED:
      return absl::StrCat("memory preferred on ", NodeWord(NodesIn(mask)));
    case MPOL_INTERLEAVE:
      return absl::StrCat("memory interleaved over ", NodeWord(NodesIn(mask)));
    default:
      return absl::StrCat("memory policy mode ", mode);
  }
}

absl::StatusOr<std::string> PlaceProcess(const std::vector<int>& cpus, bool physical_cores,
                                         bool numa) {
  std::vector<std::string> done;
  std::vector<common::CpuPlace> places = common::ReadCpuPlaces(cpus);
  if (physical_cores) {
    const std::vector<int> physical = common::PhysicalCoreCpus(places);
    if (physical.size() == cpus.size()) {
      done.push_back(absl::StrCat("physical cores: CPUs ", common::FormatCpuList(cpus),
                                  " (no hyper-thread siblings among them)"));
    } else {
      absl::StatusOr<int> set = SetProcessAffinity(physical);
      if (!set.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("cores=physical: ", set.status().message()));
      }
      done.push_back(absl::StrCat("physical cores: CPUs ", common::FormatCpuList(physical),
                                  ", one per core of CPUs ", common::FormatCpuList(cpus),
                                  " (siblings left idle)"));
      places = common::ReadCpuPlaces(physical);
    }
  }
  if (numa) {
    absl::StatusOr<std::string> bound = BindMemory(common::NodesOf(places));
    if (!bound.ok()) return bound.status();
    done.push_back(*bound);
  }
  return absl::StrJoin(done, "; ");
}

}  // namespace paradnn::runner
