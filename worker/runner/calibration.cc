#include "worker/runner/calibration.h"

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "common/clock.h"
#include "common/cpu_list.h"
#include "hostfacts/host_facts.h"
#include "platform/silicon_peak.h"
#include "worker/runner/host_probe.h"
#include "worker/runner/platform.h"
#include "worker/runner/platform_torch.h"

namespace paradnn::runner {
namespace {

using Clock = std::chrono::steady_clock;

struct MatmulShape {
  int64_t m, n, k;
};

// Large square and rectangular (tall, wide, deep) shapes, cheapest first so
// that the rate seen so far predicts whether the next one fits the budget.
constexpr MatmulShape kMatmulShapes[] = {
    {1024, 1024, 1024}, {2048, 1024, 1024}, {1024, 4096, 1024}, {2048, 2048, 2048},
    {4096, 1024, 4096}, {1024, 2048, 8192}, {3072, 3072, 3072}, {4096, 4096, 4096},
};

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// Seconds of one call of `fn`.
template <typename Fn>
double TimeOnce(Fn&& fn) {
  const Clock::time_point start = Clock::now();
  fn();
  return common::SecondsBetween(start, Clock::now());
}

// The fastest of `reps` calls of `fn` after one warm-up call, with reps
// chosen from the warm-up time so that the whole takes about `budget_s`
// (bounded by [min_reps, max_reps]).
template <typename Fn>
double FastestOf(Fn&& fn, double budget_s, int min_reps, int max_reps) {
  const double first = TimeOnce(fn);
  const int reps =
      std::clamp(static_cast<int>(budget_s / std::max(first, 1e-9)), min_reps, max_reps);
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < reps; ++i) best = std::min(best, TimeOnce(fn));
  return best;
}

// Whether LibTorch runs an mm of `dtype` on this CPU (float16 does not in
// every version).
bool MatmulSupported(torch::ScalarType dtype) {
  try {
    torch::Tensor a = torch::ones({8, 8}, torch::TensorOptions().dtype(dtype));
    (void)torch::mm(a, a);
    return true;
  } catch (const c10::Error&) {
    return false;
  }
}

v1::MatmulRoof MeasureMatmulRoof(torch::ScalarType dtype, const std::string& name,
                                 double budget_s) {
  v1::MatmulRoof roof;
  roof.set_dtype(name);
  roof.set_kernel("matmul");
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(budget_s));
  const auto options = torch::TensorOptions().dtype(dtype);
  double best_rate = 0;
  bool first = true;
  for (const MatmulShape& shape : kMatmulShapes) {
    const double flops = 2.0 * static_cast<double>(shape.m) * shape.n * shape.k;
    const double left = common::SecondsBetween(Clock::now(), deadline);
    // Warm-up plus at least two repetitions must fit what is left, at the
    // best rate seen so far.
    if (!first && (left <= 0 || 3.0 * flops / best_rate > left)) continue;
    torch::Tensor a = torch::randn({shape.m, shape.k}, options);
    torch::Tensor b = torch::randn({shape.k, shape.n}, options);
    torch::Tensor out = torch::empty({shape.m, shape.n}, options);
    const double per_shape_budget = first ? 0.0 : std::min(left / 3.0, budget_s / 4.0);
    const double best_s = FastestOf([&] { torch::mm_out(out, a, b); }, per_shape_budget, 2, 10);
    const double rate = flops / best_s;
    spdlog::debug("calibrate: {} {}x{}x{}: {:.1f} GFLOP/s", name, shape.m, shape.n, shape.k,
                  rate / 1e9);
    if (rate > best_rate) {
      best_rate = rate;
      roof.set_flops_per_sec(rate);
      roof.set_m(shape.m);
      roof.set_n(shape.n);
      roof.set_k(shape.k);
    }
    first = false;
  }
  return roof;
}

// Convolution shapes of ResNet-style networks: a 3x3 (the residual block's)
// and a 1x1 expansion (the bottleneck's), batch 32 on 28x28 maps.
struct ConvShape {
  int64_t batch, in_channels, out_channels, kernel, size;
};
constexpr ConvShape kConvShapes[] = {{32, 128, 128, 3, 28}, {32, 256, 1024, 1, 28}};

// The best forward-convolution FLOP/s of `dtype` over kConvShapes in
// channels_last and contiguous layouts (oneDNN's kernels), as a "conv"
// roof; flops_per_sec 0 when LibTorch runs no convolution of that dtype.
// m, n, k are the implicit GEMM of the fastest: batch*H*W, out, in*R*S.
v1::MatmulRoof MeasureConvRoof(torch::ScalarType dtype, const std::string& name, double budget_s) {
  v1::MatmulRoof roof;
  roof.set_dtype(name);
  roof.set_kernel("conv");
  const auto options = torch::TensorOptions().dtype(dtype);
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(budget_s));
  const double per_case = budget_s / (2.0 * std::size(kConvShapes));
  bool first = true;
  for (const ConvShape& shape : kConvShapes) {
    for (const auto layout : {torch::MemoryFormat::ChannelsLast, torch::MemoryFormat::Contiguous}) {
      const double flops = 2.0 * shape.batch * shape.size * shape.size * shape.out_channels *
                           shape.in_channels * shape.kernel * shape.kernel;
      // As the matmul sweep: after the first case, warm-up plus two
      // repetitions must fit what is left at the best rate seen so far (a
      // dtype oneDNN emulates slowly ends its sweep early).
      const double left = common::SecondsBetween(Clock::now(), deadline);
      if (!first &&
          (left <= 0 || !(roof.flops_per_sec() > 0) || 3.0 * flops / roof.flops_per_sec() > left)) {
        continue;
      }
      first = false;
      try {
        torch::Tensor input =
            torch::randn({shape.batch, shape.in_channels, shape.size, shape.size}, options)
                .contiguous(layout);
        torch::Tensor weight =
            torch::randn({shape.out_channels, shape.in_channels, shape.kernel, shape.kernel},
                         options)
                .contiguous(layout);
        const int64_t padding = shape.kernel / 2;
        const double best_s =
            FastestOf([&] { (void)torch::conv2d(input, weight, {}, /*stride=*/1, padding); },
                      std::min(per_case, std::max(left, 0.0)), 2, 20);
        const double rate = flops / best_s;
        spdlog::debug("calibrate: conv {} {}x{} {}->{} {}: {:.1f} GFLOP/s", name, shape.kernel,
                      shape.kernel, shape.in_channels, shape.out_channels,
                      layout == torch::MemoryFormat::ChannelsLast ? "channels_last" : "contiguous",
                      rate / 1e9);
        if (rate > roof.flops_per_sec()) {
          roof.set_flops_per_sec(rate);
          roof.set_m(shape.batch * shape.size * shape.size);
          roof.set_n(shape.out_channels);
          roof.set_k(shape.in_channels * shape.kernel * shape.kernel);
        }
      } catch (const c10::Error& e) {
        spdlog::info("calibrate: no {} {}x{} convolution on this CPU: {}", name, shape.kernel,
                     shape.kernel, FirstLine(e.what_without_backtrace()));
      }
    }
  }
  return roof;
}

v1::BandwidthPoint MeasureBandwidth(const std::string& kernel, int64_t working_set_bytes,
                                    double budget_s) {
  const int arrays = kernel == "copy" ? 2 : 3;
  const int64_t elements = std::max<int64_t>(1, working_set_bytes / (arrays * 4));
  const auto options = torch::TensorOptions().dtype(torch::kFloat32);
  torch::Tensor a = torch::rand({elements}, options);
  torch::Tensor b = torch::rand({elements}, options);
  torch::Tensor c = arrays == 3 ? torch::rand({elements}, options) : torch::Tensor();
  const double scalar = 3.0;
  double best_s;
  if (arrays == 2) {
    best_s = FastestOf([&] { a.copy_(b); }, budget_s, 3, 100000);
  } else {
    best_s = FastestOf([&] { torch::add_out(a, b, c, scalar); }, budget_s, 3, 100000);
  }
  v1::BandwidthPoint point;
  point.set_kernel(kernel);
  point.set_bytes(elements * arrays * 4);
  point.set_bytes_per_sec(static_cast<double>(elements) * arrays * 4 / best_s);
  return point;
}

// Every CPU this process may use (a worker confined by --cpus calibrates its
// own CPUs, without oversubscribing them).
int DefaultCalibrationThreads() { return common::UsableCpuCount(); }

// Trials and the start probe run on every usable CPU, as a default
// calibration and the jobs of a host do.
void UseAllCpus() {
  const int threads = DefaultCalibrationThreads();
  at::set_num_threads(threads);
  SetBlasThreads(threads);
}

}  // namespace

Calibration Calibrate(const CalibrationOptions& options) {
  torch::NoGradGuard no_grad;
  Calibration result;
  result.threads = options.threads > 0 ? options.threads : DefaultCalibrationThreads();
  at::set_num_threads(result.threads);
  SetBlasThreads(result.threads);
  torch::manual_seed(0);

  const std::pair<torch::ScalarType, const char*> dtypes[] = {
      {torch::kFloat32, "float32"}, {torch::kBFloat16, "bfloat16"}, {torch::kFloat16, "float16"}};
  for (const auto& [dtype, name] : dtypes) {
    if (!MatmulSupported(dtype)) {
      spdlog::info("calibrate: LibTorch runs no {} matmul on this CPU; no roof", name);
      continue;
    }
    result.matmul_roofs.push_back(MeasureMatmulRoof(dtype, name, options.matmul_seconds_per_dtype));
    const v1::MatmulRoof& roof = result.matmul_roofs.back();
    spdlog::info("calibrate: {} matmul roof {:.1f} GFLOP/s at {}x{}x{} ({} threads)", name,
                 roof.flops_per_sec() / 1e9, roof.m(), roof.n(), roof.k(), result.threads);
  }
  for (const auto& [dtype, name] : dtypes) {
    v1::MatmulRoof conv = MeasureConvRoof(dtype, name, options.conv_seconds_per_dtype);
    if (!(conv.flops_per_sec() > 0)) continue;
    spdlog::info("calibrate: {} conv roof {:.1f} GFLOP/s ({} threads)", name,
                 conv.flops_per_sec() / 1e9, result.threads);
    result.matmul_roofs.push_back(std::move(conv));
  }
  const std::vector<int64_t> working_sets =
      !options.bandwidth_bytes.empty()
          ? options.bandwidth_bytes
          : BandwidthWorkingSets(
                ReadCpuCaches(),
                std::min(result.threads, std::max(1, hostfacts::ReadCpuTopology().cores)),
                hostfacts::UsableMemoryBytes());
  for (const char* kernel : {"copy", "triad"}) {
    for (int64_t bytes : working_sets) {
      result.bandwidth.push_back(
          MeasureBandwidth(kernel, bytes, options.bandwidth_seconds_per_point));
      spdlog::debug("calibrate: {} {} bytes: {:.2f} GB/s", kernel, result.bandwidth.back().bytes(),
                    result.bandwidth.back().bytes_per_sec() / 1e9);
    }
  }
  return result;
}

StackTrial MeasureBlasTrial() {
  torch::NoGradGuard no_grad;
  StackTrial trial;
  UseAllCpus();
  trial.used = DescribeOpenBlasCore().name;
  torch::manual_seed(0);
  constexpr int64_t kCheck = 512;
  torch::Tensor a = torch::rand({kCheck, kCheck}) * 2 - 1;
  torch::Tensor b = torch::rand({kCheck, kCheck}) * 2 - 1;
  torch::Tensor c = torch::mm(a, b).contiguous();
  trial.max_relative_error =
      MaxGemmRelativeError(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), kCheck,
                           kCheck, kCheck, /*samples=*/4096);
  constexpr int64_t kTime = 1536;
  torch::Tensor x = torch::randn({kTime, kTime});
  torch::Tensor y = torch::randn({kTime, kTime});
  torch::Tensor out = torch::empty({kTime, kTime});
  const double best_s = FastestOf([&] { torch::mm_out(out, x, y); }, 0.3, 2, 5);
  trial.rate = 2.0 * kTime * kTime * kTime / best_s;
  return trial;
}

StackTrial MeasureAtenTrial() {
  torch::NoGradGuard no_grad;
  StackTrial trial;
  UseAllCpus();
  trial.used = AtenCapabilityName(ParseAtenCpuCapability(at::show_config()));
  torch::manual_seed(0);
  constexpr int64_t kRows = 512, kCols = 2048;
  constexpr double kOpsPerElement = 20;
  const torch::Tensor x = torch::randn({kRows, kCols});
  const torch::Tensor grad = torch::randn({kRows, kCols});
  const torch::Tensor square_avg = torch::rand({kRows, kCols});
  auto workload = [](const torch::Tensor& x, const torch::Tensor& grad,
                     const torch::Tensor& square_avg) {
    torch::Tensor activations =
        torch::sigmoid(x) * torch::tanh(x) + torch::gelu(x) - torch::relu(x);
    torch::Tensor probabilities = torch::softmax(x, 1);
    torch::Tensor average = square_avg * 0.99 + grad * grad * 0.01;
    torch::Tensor updated = x - 0.01 * grad / (average.sqrt() + 1e-8);
    return std::vector<torch::Tensor>{activations, probabilities, updated};
  };
  const std::vector<torch::Tensor> got = workload(x, grad, square_avg);
  const std::vector<torch::Tensor> reference =
      workload(x.to(torch::kFloat64), grad.to(torch::kFloat64), square_avg.to(torch::kFloat64));
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const torch::Tensor error =
        (got[i].to(torch::kFloat64) - reference[i]).abs() / reference[i].abs().clamp_min(1.0);
    const double value = error.max().item<double>();
    // A NaN anywhere counts as error 1, as in the GEMM check.
    worst = std::isfinite(value) ? std::max(worst, value) : 1.0;
    if (worst >= 1) break;
  }
  trial.max_relative_error = worst;
  const double best_s = FastestOf([&] { (void)workload(x, grad, square_avg); }, 0.3, 3, 20);
  trial.rate = kOpsPerElement * static_cast<double>(kRows * kCols) / best_s;
  return trial;
}

double ProbeAtCalibrationThreads() {
  UseAllCpus();
  return ProbeHostMatmulFlops(kSentinelMatmulCalls);
}

v1::Platform CalibratedPlatform(const CalibrationOptions& options) {
  v1::Platform platform = CollectPlatform();
  // Before the matmuls, whose roofs are then checked against peaks at the
  // clock the cores really run at (inside a VM the OS reports a nominal one).
  RecordMeasuredClock(MeasureCoreClock(), &platform);
  const Calibration calibration = Calibrate(options);
  for (const v1::MatmulRoof& roof : calibration.matmul_roofs) *platform.add_matmul_roofs() = roof;
  for (const v1::BandwidthPoint& point : calibration.bandwidth) *platform.add_bandwidth() = point;
  platform::ReconcilePeaksWithRoofs(&platform);
  // Calibrate() left LibTorch and the BLAS at calibration.threads.
  platform.set_probe_flops_per_sec(ProbeHostMatmulFlops());
  platform.set_probe_threads(calibration.threads);
  platform.set_latency_probe_seconds(ProbeHostLatencySeconds());
  platform.set_calibrated_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count());
  return platform;
}

}  // namespace paradnn::runner
