// CPU lists in Linux's cpulist syntax ("0-3,8", as
// /sys/devices/system/cpu/online and taskset -c write it), and the CPUs this
// process may run on. The worker's --cpus confines its runners; workers
// that share a host each get their own set, so that the ranks of a
// data-parallel gang (or two single jobs) do not take each other's cores;
// the runner confines itself to RunnerJob.cpus; paradnn local splits its
// CPUs among its workers; default thread counts follow the affinity.
#ifndef PARADNN_COMMON_CPU_LIST_H_
#define PARADNN_COMMON_CPU_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paradnn::common {

// The largest CPU number a cpu_set_t (and so sched_setaffinity) can name.
inline constexpr int kMaxCpuNumber = 1023;

// The CPUs `text` names, ascending and without repeats: comma-separated
// items, each a CPU number N or an inclusive range A-B (A <= B), with
// spaces around items and a trailing newline allowed; an item repeated or
// overlapping another counts once. InvalidArgument naming `field` and the
// syntax for anything else: empty text, an empty item, a reversed range,
// a number above kMaxCpuNumber, signs, strides or other characters.
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text,
                                              absl::string_view field = "--cpus");

// `cpus` (ascending, no repeats) in the canonical form: runs of consecutive
// CPUs as ranges, "0-3,8"; "" when empty.
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs this process may run on (sched_getaffinity), ascending; empty if
// the kernel would not say.
std::vector<int> AllowedCpus();

// The ids of this process's threads (/proc/self/task), ascending: what
// the runner confines to its CPUs and what it tells apart before and after
// a library starts threads of its own.
std::vector<int> ThreadIds();

// How many: AllowedCpus' count, or the online CPUs where the kernel would
// not say; at least 1. Default thread counts (calibration, a job's intra-op
// threads) follow it, so that a confined process does not oversubscribe.
int UsableCpuCount();

// OK when every CPU of `cpus` is in `allowed` (both ascending); else
// InvalidArgument naming `field`, the CPUs outside and what is allowed:
// "--cpus: CPU 5 is outside this process's affinity; allowed: CPUs 0-1
// (this process's affinity)".
absl::Status CheckCpusAllowed(const std::vector<int>& cpus, const std::vector<int>& allowed,
                              absl::string_view field = "--cpus");

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_CPU_LIST_H_
