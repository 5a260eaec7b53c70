// The operator breakdown of a model's profiled training steps
// (RunSettings.profile), built from the profiler's range events: the
// measured counterpart of the analytic ledger (layer_ledger.h). Torch-free:
// worker/runner/op_profiler.cc turns LibTorch's legacy profiler events into
// ProfileEvents, this aggregates them, and the CLI sums them by name
// (`paradnn results --ops`).
#ifndef PARADNN_MODEL_OP_PROFILE_H_
#define PARADNN_MODEL_OP_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::model {

// One push (range start) or pop (range end) of one thread, in the order
// that thread recorded it. A pop ends the innermost open push of the same
// handle; name, shapes and flops are read from the push.
struct ProfileEvent {
  bool push = true;
  uint64_t handle = 0;
  std::string name;
  std::string input_shapes;  // "[[64, 1024], [1024]]"; "" when not recorded
  int64_t time_ns = 0;
  double flops = 0;
};

// Per (name, input_shapes): calls, self and total seconds, flops, each
// divided by `steps`; self_share = self_seconds / step_seconds (the wall
// time of one profiled step). Self time is a range's time minus that of the
// ranges nested in it on the same thread; a range still open at the end is
// dropped. Sorted by self time, heaviest first, ties by name; at most
// `max_ops` entries (0 = all).
std::vector<v1::OpProfile> AggregateProfile(const std::vector<std::vector<ProfileEvent>>& threads,
                                            int steps, double step_seconds, size_t max_ops);

// "[[64, 1024], [1024]]" from shapes; empty shapes (scalars, non-tensors)
// print as [].
std::string FormatShapes(const std::vector<std::vector<int64_t>>& shapes);

// Operators of `profile` (heaviest first, as AggregateProfile returns it)
// summed by name over input shapes, keeping the shapes of the heaviest
// variant; heaviest self time first. What `paradnn results --ops` shows.
std::vector<v1::OpProfile> SumByName(const std::vector<v1::OpProfile>& profile);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_OP_PROFILE_H_
