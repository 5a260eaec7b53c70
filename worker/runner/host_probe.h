// A short, fixed matmul that tells how fast the host is running right now.
// The worker's calibration records it; jobs run it before and after timing
// (or reuse the worker's newest reading while it is young), so a host that
// has slowed down since calibration (another tenant, thermal or frequency
// limits: drift that neither load average nor steal time shows inside a
// VM) is flagged on the result. The header is torch-free; host_probe.cc is
// a LibTorch unit.
#ifndef PARADNN_WORKER_RUNNER_HOST_PROBE_H_
#define PARADNN_WORKER_RUNNER_HOST_PROBE_H_

namespace paradnn::runner {

// float32 mm of 512x512x512 with LibTorch's current thread settings: the
// median FLOP/s of `timed_calls` timed calls after 3 warm-up calls, and on
// the process's first call one 1024^3 matmul before them (15: the
// calibration's figure, about 70 ms on a 2-core host).
double ProbeHostMatmulFlops(int timed_calls = 15);

// The timed calls of the sentinel's matmul: the median of 7 estimates the
// same figure as the calibration's 15 at half the cost (its cost target:
// at most 3 % of worker time; with 15, read on both sides of every job, it
// took 4.6 % of 4-second jobs; the worker now also reuses a young reading,
// worker/sentinel_memory.h).
inline constexpr int kSentinelMatmulCalls = 7;

// The latency-bound half of the host-speed sentinel: the median seconds of
// one tiny FC training step (forward, backward and an SGD update of a
// 256x256 float32 layer on a batch of 64; about 0.3 ms on a 2-vCPU EPYC) over 31 steps after
// 5 warm-up steps, with LibTorch's current thread settings. Big enough for
// the BLAS to use its threads, small enough that waking them is much of its
// time: it moves with scheduling delays that a large matmul hides.
double ProbeHostLatencySeconds();

// One reading of both sentinel workloads.
struct SentinelReading {
  double compute_ratio = 0;  // ProbeHostMatmulFlops() / the calibrated figure
  double latency_s = 0;      // ProbeHostLatencySeconds()
  double seconds = 0;        // wall time the reading took
};

// Reads the sentinel against the calibration's matmul probe
// (`reference_flops_per_sec` > 0).
SentinelReading ReadSentinel(double reference_flops_per_sec);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_HOST_PROBE_H_
