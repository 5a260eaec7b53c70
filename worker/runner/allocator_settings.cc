#include "worker/runner/allocator_settings.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace paradnn::runner {
namespace {

constexpr int kMmapThresholdBytes = 32 << 20;                   // glibc's maximum on 64-bit
constexpr int kTrimThresholdBytes = (1 << 30) - 1 + (1 << 30);  // 2 GiB - 1, mallopt's int
constexpr char kAsInstalled[] = "glibc malloc (as installed: dynamic mmap threshold)";
constexpr char kTuned[] = "glibc malloc (mmap_threshold 32 MiB, trim_threshold 2 GiB)";

const char* description = kAsInstalled;

}  // namespace

std::string ApplyAllocatorSettings() {
  const char* choice = std::getenv("PARADNN_RUNNER_MALLOC");
  if (choice != nullptr && std::strcmp(choice, "as-installed") == 0) {
    description = kAsInstalled;
    return description;
  }
  // Fixed thresholds also turn off glibc's dynamic threshold adjustment.
  const bool ok = mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 &&
                  mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1;
  description = ok ? kTuned : kAsInstalled;
  return description;
}

std::string AllocatorDescription() { return description; }

}  // namespace paradnn::runner
