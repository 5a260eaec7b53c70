// The heap settings paradnn-runner trains with. glibc's malloc gives large
// freed blocks back to the kernel (munmap of blocks above its dynamic mmap
// threshold, trimming of the heap top) and faults them in again on the next
// step: a ParaDnn CNN step took 25k page faults and 82 ms of kernel time,
// Python's 20k and 46 ms. Keeping freed memory in the process (the largest
// mmap threshold glibc allows, 32 MiB, and a trim threshold of 2 GiB) cut
// that to 1.4k faults per step and made CNN, SqueezeNet and MobileNet steps
// 1.2-1.4x faster. Torch-free.
#ifndef PARADNN_WORKER_RUNNER_ALLOCATOR_SETTINGS_H_
#define PARADNN_WORKER_RUNNER_ALLOCATOR_SETTINGS_H_

#include <string>

namespace paradnn::runner {

// Applies the runner's malloc settings unless $PARADNN_RUNNER_MALLOC is
// "as-installed" (glibc's defaults, for stack comparisons). Call first in
// main, before models allocate; job processes forked from the zygote keep
// them. Returns and remembers the description AllocatorDescription() gives.
std::string ApplyAllocatorSettings();

// Platform.allocator: "glibc malloc (mmap_threshold 32 MiB, trim_threshold
// 2 GiB)" or "glibc malloc (as installed: dynamic mmap threshold)"; the
// as-installed text when ApplyAllocatorSettings() was not called.
std::string AllocatorDescription();

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_ALLOCATOR_SETTINGS_H_
