// Records an operator breakdown of training steps with LibTorch's profiler.
// The header is torch-free; op_profiler.cc is a LibTorch unit.
#ifndef PARADNN_WORKER_RUNNER_OP_PROFILER_H_
#define PARADNN_WORKER_RUNNER_OP_PROFILER_H_

#include <functional>
#include <vector>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// The most (operator, input shapes) entries kept per result, by self time:
// enough that per-operator sums stay whole for the suite's models; the rest
// is a tail of sub-microsecond bookkeeping ops.
inline constexpr size_t kMaxProfiledOps = 200;

// Runs `step` `steps` times under the profiler (input shapes and FLOPs
// recorded) and returns AggregateProfile of what it saw, the profiled wall
// time per step in *step_seconds. Timing is done before this: the profiler's
// own overhead must not reach the timed steps.
std::vector<v1::OpProfile> ProfileSteps(const std::function<void()>& step, int steps,
                                        double* step_seconds);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_OP_PROFILER_H_
