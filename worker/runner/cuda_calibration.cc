#include "worker/runner/cuda_calibration.h"

#include <ATen/Context.h>
#include <ATen/Version.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "platform/silicon_peak.h"
#include "worker/runner/cuda_driver.h"
#include "worker/runner/platform.h"
#include "worker/runner/platform_torch.h"

namespace paradnn::runner {
namespace {

using Clock = std::chrono::steady_clock;

struct CudaMatmulShape {
  int64_t m, n, k;
};
// Square shapes, cheapest first: a large GPU reaches its roof only from
// about 8192^3 (16384^3 is 8.8 TFLOP, about 11 ms at 800 TFLOP/s).
constexpr CudaMatmulShape kCudaMatmulShapes[] = {{4096, 4096, 4096},
                                                 {8192, 8192, 8192},
                                                 {12288, 12288, 12288},
                                                 {16384, 16384, 16384},
                                                 {8192, 8192, 32768}};

// Seconds per call of `fn`, the fastest of `reps` timed batches of `batch`
// calls each, the device synchronized around every batch (one warm-up batch
// first).
template <typename Fn>
double FastestPerCall(int index, Fn&& fn, int batch, int reps) {
  double best = std::numeric_limits<double>::infinity();
  for (int rep = -1; rep < reps; ++rep) {
    torch::cuda::synchronize(index);
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < batch; ++i) fn();
    torch::cuda::synchronize(index);
    if (rep >= 0) best = std::min(best, common::SecondsBetween(start, Clock::now()) / batch);
  }
  return best;
}

struct DtypeCase {
  const char* name;
  torch::ScalarType dtype;
  const char* float32_precision;  // "highest": TF32 off; "high": TF32 allowed
};
constexpr DtypeCase kCudaDtypes[] = {{"float32", torch::kFloat32, "highest"},
                                     {"tf32", torch::kFloat32, "high"},
                                     {"bfloat16", torch::kBFloat16, "highest"},
                                     {"float16", torch::kFloat16, "highest"}};

v1::MatmulRoof MeasureCudaMatmulRoof(int index, const DtypeCase& dtype, double budget_s) {
  v1::MatmulRoof roof;
  roof.set_dtype(dtype.name);
  roof.set_kernel("matmul");
  at::globalContext().setFloat32MatmulPrecision(dtype.float32_precision);
  const auto options =
      torch::TensorOptions().dtype(dtype.dtype).device(torch::Device(torch::kCUDA, index));
  const Clock::time_point start = Clock::now();
  for (const CudaMatmulShape& shape : kCudaMatmulShapes) {
    const double flops = 2.0 * static_cast<double>(shape.m) * shape.n * shape.k;
    if (roof.flops_per_sec() > 0 &&
        common::SecondsBetween(start, Clock::now()) + 40 * flops / roof.flops_per_sec() >
            budget_s) {
      break;  // warm-up plus 3 batches of 10 would overrun the budget
    }
    torch::Tensor a = torch::randn({shape.m, shape.k}, options);
    torch::Tensor b = torch::randn({shape.k, shape.n}, options);
    torch::Tensor out = torch::empty({shape.m, shape.n}, options);
    const double rate = flops / FastestPerCall(
                                    index, [&] { torch::mm_out(out, a, b); }, 10, 3);
    spdlog::debug("calibrate cuda:{}: {} {}x{}x{}: {:.1f} TFLOP/s", index, dtype.name, shape.m,
                  shape.n, shape.k, rate / 1e12);
    if (rate > roof.flops_per_sec()) {
      roof.set_flops_per_sec(rate);
      roof.set_m(shape.m);
      roof.set_n(shape.n);
      roof.set_k(shape.k);
    }
  }
  at::globalContext().setFloat32MatmulPrecision("highest");  // PyTorch's default
  return roof;
}

// dst.copy_(src) on the device: bytes moved = both arrays.
v1::BandwidthPoint MeasureCudaCopy(int index, int64_t working_set_bytes) {
  const int64_t elements = std::max<int64_t>(1, working_set_bytes / 8);
  const auto options =
      torch::TensorOptions().dtype(torch::kFloat32).device(torch::Device(torch::kCUDA, index));
  torch::Tensor src = torch::rand({elements}, options);
  torch::Tensor dst = torch::empty({elements}, options);
  const double per_copy = FastestPerCall(
      index, [&] { dst.copy_(src); }, 20, 3);
  v1::BandwidthPoint point;
  point.set_kernel("copy");
  point.set_bytes(elements * 8);
  point.set_bytes_per_sec(static_cast<double>(elements) * 8 / per_copy);
  return point;
}

}  // namespace

absl::StatusOr<v1::Platform> CollectCudaPlatform(const std::string& device,
                                                 const std::string& driver_library) {
  absl::StatusOr<int> index = CudaDeviceIndex(device);
  if (!index.ok()) return index.status();
  absl::StatusOr<CudaDeviceFacts> facts = QueryCudaDevice(*index, driver_library);
  if (!facts.ok()) return facts.status();
  if (!torch::cuda::is_available()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the driver sees ", facts->device_count, " GPU(s) (", facts->name,
        ") but this runner's LibTorch ", TORCH_VERSION,
        " has no CUDA (a CPU build such as Debian's): build paradnn-runner against a CUDA "
        "LibTorch (-DPARADNN_RUNNER_ONLY=ON, docs/backends.md)"));
  }
  v1::Platform platform = CollectPlatform();  // the host's side
  platform.set_device_kind("cuda");
  platform.set_device_name(facts->name);
  platform.set_memory_bytes(facts->memory_bytes);
  platform.set_base_clock_hz(0);
  platform.set_max_clock_hz(facts->max_clock_hz);
  platform.set_compute_capability(absl::StrCat(facts->major, ".", facts->minor));
  platform.set_sm_count(facts->sm_count);
  platform.set_cuda_driver_version(CudaVersionText(facts->driver_version));
  const CudaBuildVersions versions = ParseCudaBuildVersions(at::show_config());
  platform.set_cuda_runtime_version(versions.cuda_runtime);
  platform.set_cudnn_version(versions.cudnn);
  platform.set_theoretical_memory_bytes_per_sec(TheoreticalMemoryBandwidth(*facts));
  platform.set_cuda_device_count(DataParallelDeviceCount(device, facts->device_count));
  platform.clear_silicon_peaks();
  for (const v1::SiliconPeak& peak : platform::CudaSiliconPeaks(
           {facts->major, facts->minor, facts->sm_count, facts->max_clock_hz, facts->name})) {
    *platform.add_silicon_peaks() = peak;
  }
  platform.set_fingerprint(PlatformFingerprint(platform));
  return platform;
}

absl::StatusOr<v1::Platform> CalibratedCudaPlatform(const CudaCalibrationOptions& options) {
  absl::StatusOr<v1::Platform> platform =
      CollectCudaPlatform(options.device, options.driver_library);
  if (!platform.ok()) return platform;
  const int device_index = *CudaDeviceIndex(options.device);
  torch::NoGradGuard no_grad;
  for (const DtypeCase& dtype : kCudaDtypes) {
    *platform->add_matmul_roofs() =
        MeasureCudaMatmulRoof(device_index, dtype, options.matmul_seconds_per_dtype);
  }
  std::vector<int64_t> sizes = options.bandwidth_bytes;
  if (sizes.empty())
    sizes = {int64_t{64} << 20, int64_t{256} << 20, int64_t{1} << 30, int64_t{4} << 30};
  for (const int64_t bytes : sizes) {
    *platform->add_bandwidth() = MeasureCudaCopy(device_index, bytes);
  }
  platform::ReconcilePeaksWithRoofs(&*platform);
  platform->set_calibrated_unix_ms(common::SystemClock().NowUnixMs());
  return platform;
}

}  // namespace paradnn::runner
