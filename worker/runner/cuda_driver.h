// What the NVIDIA driver says of a GPU (its name, compute capability, SMs,
// clocks, memory and the driver's version), read through the CUDA driver
// API loaded at run time (dlopen of libcuda.so.1): no CUDA header or library
// at build time, so the same runner builds against Debian's CPU LibTorch and
// a GPU host's CUDA one, and a host without a driver gets a clear error.
// Torch-free. The facts feed the CUDA platform record (platform_torch.cc):
// fingerprint, the theoretical peaks (platform/silicon_peak.h) and HBM's
// theoretical bandwidth.
#ifndef PARADNN_WORKER_RUNNER_CUDA_DRIVER_H_
#define PARADNN_WORKER_RUNNER_CUDA_DRIVER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace paradnn::runner {

struct CudaDeviceFacts {
  int index = 0;
  int device_count = 0;  // GPUs the driver sees
  std::string name;      // e.g. "NVIDIA H200"
  int major = 0;         // compute capability
  int minor = 0;
  int sm_count = 0;
  double max_clock_hz = 0;     // peak SM clock
  double memory_clock_hz = 0;  // peak memory clock
  int memory_bus_bits = 0;
  int64_t memory_bytes = 0;
  int driver_version = 0;  // cuDriverGetVersion: 12040 is CUDA 12.4
};

// The facts of GPU `index` through the driver library `library`.
// FailedPrecondition when the library cannot be loaded (no NVIDIA driver)
// or lacks an entry point; Unavailable when the driver answers with an
// error (no GPU, a bad index), with the driver's own words.
absl::StatusOr<CudaDeviceFacts> QueryCudaDevice(int index,
                                                const std::string& library = "libcuda.so.1");

// "12.4" for 12040; "" for 0.
std::string CudaVersionText(int version);

// HBM/GDDR's theoretical bandwidth: two transfers per memory clock over the
// bus (bytes/s); 0 when the driver did not say.
double TheoreticalMemoryBandwidth(const CudaDeviceFacts& facts);

// "cuda" -> 0, "cuda:3" -> 3; InvalidArgument for anything else.
absl::StatusOr<int> CudaDeviceIndex(const std::string& device);

// The GPUs a worker of `device` lends its data-parallel jobs (replica r on
// GPU r): every one the driver sees (`visible`) for "cuda", only its own for
// "cuda:N" (workers pinned one per GPU must not share).
int DataParallelDeviceCount(const std::string& device, int visible);

// The CUDA runtime and cuDNN versions in at::show_config()'s text ("  -
// CUDA Runtime 12.4", "  - CuDNN 90.1"); "" where it names none (a CPU
// build).
struct CudaBuildVersions {
  std::string cuda_runtime;
  std::string cudnn;
};
CudaBuildVersions ParseCudaBuildVersions(const std::string& show_config);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_CUDA_DRIVER_H_
