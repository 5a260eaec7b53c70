// The empirical roofline of this host, measured with LibTorch itself
// (`paradnn-runner --calibrate`): the best matmul FLOP/s per dtype the CPU
// runs and the memory bandwidth of copy and triad from cache-resident to
// far beyond the last-level cache. The header is torch-free; calibration.cc
// is a LibTorch unit.
#ifndef PARADNN_WORKER_RUNNER_CALIBRATION_H_
#define PARADNN_WORKER_RUNNER_CALIBRATION_H_

#include <cstdint>
#include <vector>

#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/stack_doctor.h"

namespace paradnn::runner {

struct CalibrationOptions {
  // Intra-op (and BLAS) threads for every measurement; 0 = all logical CPUs.
  int threads = 0;
  // Time budget of the shape sweep of one dtype. The first shape is always
  // measured (warm-up and two repetitions) even when it alone overruns it.
  double matmul_seconds_per_dtype = 4.0;
  // Time budget of one bandwidth point (kernel, size); at least three
  // repetitions are timed after one warm-up.
  double bandwidth_seconds_per_point = 0.2;
  // Time budget of the convolution roofs of one dtype (a 3x3 and a 1x1
  // convolution, channels_last and contiguous).
  double conv_seconds_per_dtype = 3.0;
  // Working-set sizes of the bandwidth sweep, in bytes (all arrays of the
  // kernel together); empty = BandwidthWorkingSets() of this host's caches
  // and memory.
  std::vector<int64_t> bandwidth_bytes;
};

// Matmul and convolution roofs (MatmulRoof.kernel "matmul" / "conv") and
// bandwidth points of this host. Sets LibTorch's intra-op
// threads and the BLAS pool to `options.threads` (the process keeps that
// setting). Roofs are listed as float32, bfloat16, float16, each only where
// LibTorch runs a matmul of that dtype on this CPU; flops_per_sec is the best
// over the shapes (2*m*n*k / fastest repetition), with the shape that reached
// it. Bandwidth points come kernel by kernel ("copy": dst.copy_(src), bytes
// moved = 2 arrays; "triad": a = b + s*c via add_out, 3 arrays) in increasing
// working set; bytes_per_sec = bytes moved / fastest repetition.
struct Calibration {
  int threads = 0;
  std::vector<v1::MatmulRoof> matmul_roofs;
  std::vector<v1::BandwidthPoint> bandwidth;
};
Calibration Calibrate(const CalibrationOptions& options);

// CollectPlatform() (before any thread setting) with the roofs of
// Calibrate(options) and calibrated_unix_ms filled; the fingerprint is that
// of the uncalibrated platform.
v1::Platform CalibratedPlatform(const CalibrationOptions& options);

// The host-speed probe's matmul now, with as many threads as a default
// calibration uses (all logical CPUs), which it leaves set: the worker
// checks a cached calibration's probe_flops_per_sec against it.
double ProbeAtCalibrationThreads();

// The stack doctor's trial in this process (`paradnn-runner --blas-trial`):
// the OpenBLAS core in use, its float32 GEMM rate (fastest of a few
// 1536^3 mm calls on every CPU) and the error of a 512^3 mm against float64
// (MaxGemmRelativeError over 4096 elements).
StackTrial MeasureBlasTrial();

// The same for ATen's CPU capability (`paradnn-runner --aten-trial`): the
// capability in use, the rate of a float32 elementwise workload a training
// step is full of (sigmoid, tanh, GELU, ReLU, softmax and an RMSprop update
// over 1M elements; 20 operations per element counted) and its largest
// error against the same workload in float64.
StackTrial MeasureAtenTrial();

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_CALIBRATION_H_
