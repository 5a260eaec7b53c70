// The CPU's caches as sysfs describes them: reading them, Platform's
// cache_sizes text, and the working sets the bandwidth calibration walks.
// Torch-free; thread-safe.
#ifndef PARADNN_WORKER_RUNNER_CPU_CACHES_H_
#define PARADNN_WORKER_RUNNER_CPU_CACHES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace paradnn::runner {

// One CPU cache as /sys/devices/system/cpu/cpu0/cache/index*/ describes it.
struct CpuCache {
  int level = 0;     // "level"
  std::string type;  // "type": Data, Instruction, Unified
  std::string size;  // "size", e.g. "48K"
};

// Platform.cache_sizes: "L1d 48 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB",
// ordered by level (data before instruction); sizes in K/M/G are shown in
// the largest whole binary unit. Caches without a level or size are left out.
std::string FormatCacheSizes(std::vector<CpuCache> caches);

// The caches of cpu0 under `cache_dir` (index0, index1, ...); empty when the
// directory is unreadable.
std::vector<CpuCache> ReadCpuCaches(
    const std::string& cache_dir = "/sys/devices/system/cpu/cpu0/cache");

// The working sets of the bandwidth calibration: powers of 4 from 32 KiB,
// half of each cache level (inside its plateau) and of each private level
// (below the last) times `cores` physical cores (what all threads hold
// together), and 4x and 8x the last-level cache (DRAM), up to at least 256
// MiB and never above a quarter of `memory_bytes` (when known: the smaller
// of MemTotal and the cgroup's limit), sorted and without duplicates.
std::vector<int64_t> BandwidthWorkingSets(const std::vector<CpuCache>& caches, int cores,
                                          int64_t memory_bytes);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_CPU_CACHES_H_
