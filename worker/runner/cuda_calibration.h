// A CUDA device's platform record and empirical roofline
// (`paradnn-runner --platform --device cuda:N`, `--calibrate --device
// cuda:N`): the GPU's facts from the driver (cuda_driver.h) with the
// theoretical peaks of its architecture, then the best matmul FLOP/s of
// float32 (TF32 off), tf32, bfloat16 and float16 through LibTorch's cuBLAS,
// and HBM's copy bandwidth. The header is torch-free; cuda_calibration.cc
// is a LibTorch unit.
#ifndef PARADNN_WORKER_RUNNER_CUDA_CALIBRATION_H_
#define PARADNN_WORKER_RUNNER_CUDA_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

struct CudaCalibrationOptions {
  std::string device = "cuda";  // cuda or cuda:N
  std::string driver_library = "libcuda.so.1";
  // Time budget of the shape sweep of one dtype (the first shape is always
  // measured).
  double matmul_seconds_per_dtype = 3.0;
  // Working sets of the copy (both arrays together); empty = 64 MiB to 4 GiB.
  std::vector<int64_t> bandwidth_bytes;
};

// The platform of `device` ("cuda" = GPU 0, or "cuda:N"): the host's facts
// (CollectPlatform's) with device_kind "cuda", the GPU's name, memory,
// clock, SMs, compute capability, versions, silicon peaks, the GPUs its
// data-parallel jobs may use (every visible one for "cuda", one for
// "cuda:N": DataParallelDeviceCount) and fingerprint. FailedPrecondition
// when this runner's LibTorch has no CUDA or there is no driver;
// Unavailable when the driver cannot give the device.
absl::StatusOr<v1::Platform> CollectCudaPlatform(
    const std::string& device, const std::string& driver_library = "libcuda.so.1");

// CollectCudaPlatform with the roofs measured and calibrated_unix_ms set.
absl::StatusOr<v1::Platform> CalibratedCudaPlatform(const CudaCalibrationOptions& options);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_CUDA_CALIBRATION_H_
