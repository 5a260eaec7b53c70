// A short, fixed matmul that tells how fast the host is running right now.
// The worker's calibration records it; each job runs it before and after
// timing, so a host that has slowed down since calibration (another tenant,
// thermal or frequency limits: drift that neither load average nor steal
// time shows inside a VM) is flagged on the result. The header is
// torch-free; host_probe.cc is a LibTorch unit.
#ifndef PARADNN_WORKER_RUNNER_HOST_PROBE_H_
#define PARADNN_WORKER_RUNNER_HOST_PROBE_H_

namespace paradnn::runner {

// float32 mm of 512x512x512 with LibTorch's current thread settings: the
// median FLOP/s of 15 timed calls after 3 warm-up calls (about 20 ms on a
// 2-core host).
double ProbeHostMatmulFlops();

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_HOST_PROBE_H_
