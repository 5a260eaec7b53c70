// What the host says of itself: its CPUs (/proc/cpuinfo), memory
// (/proc/meminfo, the cgroup's limit), clocks and frequency scaling
// (cpufreq), kernel release and name. The one reader of these files for the
// runner (worker/runner/platform.h, which makes a v1::Platform of them) and
// the worker (worker/platform_probe.h, whose fallback platform describes the
// host when the runner cannot). Each Parse function is pure, over the text of
// its file; the Read functions read the files of this host. Torch-free,
// proto-free; thread-safe.
#ifndef PARADNN_HOSTFACTS_HOST_FACTS_H_
#define PARADNN_HOSTFACTS_HOST_FACTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace paradnn::hostfacts {

struct CpuTopology {
  std::string model_name;  // first "model name"
  int sockets = 0;         // distinct "physical id" (1 if none)
  int cores = 0;           // distinct (physical id, core id); else logical
  int logical_cpus = 0;    // "processor" entries
  // "flags" (x86) or "Features" (aarch64) of the first processor.
  std::vector<std::string> flags;
  std::string vendor;  // "vendor_id"
  int family = 0;      // "cpu family"
  int model = 0;       // "model"
  double mhz = 0;      // "cpu MHz" of the first processor (current clock)
};

// Parses /proc/cpuinfo text (x86 or aarch64 layout). With `only_cpus`,
// counts only those processors (a process's CPU share: its cores and
// sockets); empty counts all.
CpuTopology ParseCpuInfo(absl::string_view cpuinfo, const std::vector<int>& only_cpus = {});

// MemTotal of /proc/meminfo text in bytes; -1 if absent.
int64_t ParseMemTotalBytes(absl::string_view meminfo);

// ISA features that matter to deep-learning kernels, in the order
// Platform.cpu_flags lists them. The list is part of every platform's
// fingerprint (a flag added here changes the fingerprint of each host that
// has it).
inline constexpr const char* kRelevantCpuFlags[] = {"fma",         "avx2",        "avx512f",
                                                    "avx512_vnni", "avx512_bf16", "avx512_fp16",
                                                    "amx_tile",    "amx_bf16",    "amx_int8"};

// The kRelevantCpuFlags present in `flags`, space-separated.
std::string RelevantCpuFlags(const std::vector<std::string>& flags);

// The clocks the host reports, in Hz (0 = unreadable): base from cpufreq's
// base_frequency, else the "@ 2.10GHz" of the model name, else the current
// "cpu MHz" (in a VM, usually the host's nominal clock), with that source
// named; max from cpufreq's cpuinfo_max_freq.
struct CpuClocks {
  double base_hz = 0;
  double max_hz = 0;
  std::string base_label;  // "base clock", "model name clock", "cpu MHz of /proc/cpuinfo"
};
CpuClocks ParseCpuClocks(absl::string_view base_frequency_khz, absl::string_view max_frequency_khz,
                         const CpuTopology& topology);

// Platform.boost from the text of /sys/devices/system/cpu/cpufreq/boost
// ("1" = on) or, failing that, /sys/devices/system/cpu/intel_pstate/no_turbo
// ("1" = off); "" when neither is given ("" = unreadable).
std::string BoostState(absl::string_view cpufreq_boost, absl::string_view intel_no_turbo);

// The text of the file at `path`; "" when it cannot be read.
std::string ReadTextFile(const std::string& path);

// ParseCpuInfo of this host's /proc/cpuinfo (of `only_cpus` among them,
// when given); where it lists no processor, the online CPUs (sysconf, or
// only_cpus) as logical CPUs and cores.
CpuTopology ReadCpuTopology(const std::vector<int>& only_cpus = {});

// ParseCpuClocks of cpu0's cpufreq files and `topology`.
CpuClocks ReadCpuClocks(const CpuTopology& topology);

// MemTotal of this host in bytes; -1 if /proc/meminfo is unreadable.
int64_t HostMemoryBytes();

// The memory this process may use: the smaller of MemTotal and the cgroup
// v2 limit (/sys/fs/cgroup/memory.max) where one is set; -1 if unknown.
int64_t UsableMemoryBytes();

// The cpufreq scaling governor of cpu0, e.g. "performance"; "" if unreadable.
std::string ReadFrequencyGovernor();

// BoostState of this host's cpufreq and intel_pstate files.
std::string ReadBoostState();

// The kernel release (uname), e.g. "6.1.0-18-amd64"; "" if unknown.
std::string KernelRelease();

// This host's name (gethostname); "" if unknown.
std::string HostName();

}  // namespace paradnn::hostfacts

#endif  // PARADNN_HOSTFACTS_HOST_FACTS_H_
