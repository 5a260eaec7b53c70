// Analytic work and memory of one training step, per docs/models.md
// "Counting work". Torch-free: the coordinator-side tools and --describe use
// the same numbers the runner reports.
//
// Each family's counting method is documented beside its count function
// (model/families/<family>.cc); docs/measurement.md summarizes them.
#ifndef PARADNN_MODEL_MODEL_COUNTS_H_
#define PARADNN_MODEL_MODEL_COUNTS_H_

#include <cstdint>

#include "model/model_spec.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::model {

inline constexpr const char* kBytesMethod = "layerwise-traffic-v3";
inline constexpr double kLossForwardFlopsPerLogit = 5;   // max, subtract, exp, sum, log-sub
inline constexpr double kLossBackwardFlopsPerLogit = 4;  // exp, scale, subtract one-hot, mean

// Arithmetic per parameter of one optimizer step, as LibTorch 1.13 computes
// it: RMSProp with momentum 12 (square average 4, sqrt + eps 2, momentum
// buffer 4, update 2), SGD with momentum 4, plain SGD 2.
double OptimizerFlopsPerParam(OptimizerKind optimizer);

// How the optimizer update runs: one kernel per parameter (the runner's
// update on the CPU, fused_optimizer.h) or kernel by kernel (LibTorch
// 1.13's torch::optim, the runner's update on CUDA).
enum class OptimizerUpdate { kFused, kPerOperation };

// Tensor-sized reads plus writes of one optimizer step per parameter.
//   kFused: read weight, gradient and state, write weight and state:
//     RMSProp with momentum 7, SGD with momentum 5, SGD 3.
//   kPerOperation, kernel by kernel as LibTorch 1.13 runs it:
//     RMSProp with momentum 18: sq.mul_ 2, sq.addcmul_(g, g) 3, avg =
//     sq.sqrt() 2, avg.add_(eps) 2, buf.mul_ 2, buf.addcdiv_(g, avg) 4,
//     p.add_(buf) 3; SGD with momentum 8: buf.mul_ 2, buf.add_(g) 3,
//     p.add_(buf) 3; SGD 3: p.add_(g).
double OptimizerTensorPassesPerParam(OptimizerKind optimizer, OptimizerUpdate update);

// Replaces the fused optimizer traffic CountModel(spec) counts in
// `counts->bytes_per_step` by that of `update`.
void CountOptimizerUpdate(const ModelSpec& spec, OptimizerUpdate update, v1::ModelCounts* counts);

// The parts that make up ModelCounts.bytes_per_step and other_flops.
struct WorkBreakdown {
  double weight_bytes = 0;          // weights read (forward, input gradients, casts)
  double gradient_bytes = 0;        // weight gradients written (and cast)
  double optimizer_bytes = 0;       // optimizer reads and writes
  double activation_fwd_bytes = 0;  // activations read and written in forward
  double activation_bwd_bytes = 0;  // activations and their gradients in backward
  double bias_relu_flops = 0;
  double loss_flops = 0;
  double optimizer_flops = 0;
};

// ModelCounts.other_flops and bytes_per_step as the sums of a breakdown.
double OtherFlops(const WorkBreakdown& b);
double BytesPerStep(const WorkBreakdown& b);

// What every family's counts are made of besides the breakdown.
struct StepTotals {
  int64_t params = 0;
  double macs_per_example = 0;  // forward multiply-accumulates
  double batch = 0;
  double executed_flops = 0;  // matmul FLOPs the step executes
  double activation_bytes = 0;
  double weight_element_bytes = 0;  // e_w: bytes per stored weight element
  OptimizerKind optimizer = OptimizerKind::kRmsProp;
  // Mixed precision: parameters cast to 16 bits each step and the bytes per
  // 16-bit element (0 otherwise).
  double cast_params = 0;
  double cast_element_bytes = 0;
};

// Fills the optimizer's bytes (fused update) and FLOPs into `b` (from
// t.optimizer, params and weight_element_bytes), then params, macs_per_example (rounded),
// model_flops (6 x MACs x batch), executed_flops, other_flops and
// bytes_per_step (from `b`) and activation_bytes; returns the state bytes of weights, gradients and
// optimizer state (plus the 16-bit copies and gradients in mixed precision),
// to which each family adds its own peak-activation terms for
// peak_memory_estimate_bytes.
double FillStepCounts(const StepTotals& t, WorkBreakdown* b, v1::ModelCounts* c);

// A model's operator parallelism as Wang, Wu, Wang, Hazelwood and Brooks
// measure it (ACM TACO 2021): its heavy operators (matmuls, convolutions,
// embedding lookups; the forward pass) and the longest chain of them that
// must run one after another. Their ratio, the average width, is how many
// operators could run at once on average: the number of inter-op pools
// their guideline starts from (issue 40).
struct OperatorWidth {
  int64_t heavy_ops = 0;
  int64_t longest_path = 0;  // heavy operators on the longest dependent chain
  // heavy_ops / longest_path; 0 for a model without heavy operators.
  double average() const {
    return longest_path > 0 ? static_cast<double>(heavy_ops) / static_cast<double>(longest_path)
                            : 0;
  }
};

struct WorkCounts {
  v1::ModelCounts counts;
  WorkBreakdown breakdown;
  OperatorWidth width;
};

// Counts for a valid `spec` (as ParseModelSpec returns), by its family.
WorkCounts CountWork(const ModelSpec& spec);

// CountWork(spec).counts.
v1::ModelCounts CountModel(const ModelSpec& spec);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_MODEL_COUNTS_H_
