// Analytic work and memory of one training step, per PARADNN_MODELS.md
// "Counting work". Torch-free: the coordinator-side tools and --describe use
// the same numbers the runner reports.
//
// FC with L hidden layers has L+1 Linear layers; layer k maps d[k-1] -> d[k]
// with d = (I, N, ..., N, O). B is the batch.
//
//   params            = sum_k (d[k-1]+1)*d[k] = (I+1)N + (L-1)(N+1)N + (N+1)O
//   macs_per_example  = sum_k d[k-1]*d[k]     = IN + (L-1)N^2 + NO
//   model_flops       = 6 * macs_per_example * B          (ParaDnn convention)
//   executed_flops    = sum_k 2*B*d[k-1]*d[k]  forward
//                     + sum_k 2*B*d[k-1]*d[k]  weight gradients
//                     + sum_{k>1} 2*B*d[k-1]*d[k]  input gradients
//                       (the first layer's input needs no gradient)
//                     = model_flops - 2*B*I*N
//   other_flops       = non-matmul arithmetic, each op counted as one FLOP per
//                       element (exp and log included):
//                       bias add (fwd) and bias gradient (bwd): B*d[k] each;
//                       ReLU fwd and bwd: B*N each per hidden layer;
//                       softmax cross-entropy: kLossForwardFlopsPerLogit and
//                       kLossBackwardFlopsPerLogit per logit (B*O);
//                       optimizer: OptimizerFlopsPerParam() per parameter.
//
// Bytes per step (method "layerwise-traffic-v1"): every tensor a kernel reads
// or writes is counted once per kernel (ideal caching inside a kernel, none
// between kernels), at its element size: e_w for stored weights, gradients
// and optimizer state; e_c for the weights a matmul reads (= e_w, or 2 bytes
// for the autocast copy in mixed precision); e_a for activations.
//   forward,  per layer: read weights and bias, read input activation,
//             write output; hidden layers: ReLU reads and writes B*N;
//             mixed precision also reads the float32 master and writes the
//             16-bit copy of every parameter; loss reads logits and writes
//             log-probabilities.
//   backward: loss reads log-probabilities, writes logit gradients; hidden
//             layers: ReLU reads output gradient and saved output, writes
//             input gradient; per layer: weight gradient reads the output
//             gradient and the saved input and writes dW; bias gradient reads
//             the output gradient and writes db; for k > 1 the input gradient
//             reads the output gradient and W and writes B*d[k-1]; mixed
//             precision casts each 16-bit gradient to float32.
//   optimizer: LibTorch 1.13's update as it runs, one element-wise kernel
//             at a time (no fused/foreach kernels in its C++ optimizers):
//             OptimizerTensorPassesPerParam() tensor reads and writes of
//             params*e_w bytes each.
// The original ParaDnn divided FLOPs by parameter bytes only, which
// overstates arithmetic intensity.
//
// activation_bytes: every activation tensor of one step: the input (and its
// 16-bit copy in mixed precision), per
// hidden layer the Linear output and the ReLU output, the logits and the
// log-probabilities.
// peak_memory_estimate_bytes: weights + gradients + optimizer state
// (+ 16-bit weight copies in mixed precision) + activation_bytes + labels
// (int64) + the two largest activation gradients alive at once in backward.
#ifndef PARADNN_WORKER_RUNNER_MODEL_COUNTS_H_
#define PARADNN_WORKER_RUNNER_MODEL_COUNTS_H_

#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/model_spec.h"

namespace paradnn::runner {

inline constexpr const char* kBytesMethod = "layerwise-traffic-v1";
inline constexpr double kLossForwardFlopsPerLogit = 5;   // max, subtract, exp, sum, log-sub
inline constexpr double kLossBackwardFlopsPerLogit = 4;  // exp, scale, subtract one-hot, mean

// Arithmetic per parameter of one optimizer step, as LibTorch 1.13 computes
// it: RMSProp with momentum 12 (square average 4, sqrt + eps 2, momentum
// buffer 4, update 2), SGD with momentum 4, plain SGD 2.
double OptimizerFlopsPerParam(OptimizerKind optimizer);

// Tensor-sized reads plus writes of one optimizer step per parameter, kernel
// by kernel as LibTorch 1.13 runs it:
//   RMSProp with momentum 18: sq.mul_ 2, sq.addcmul_(g, g) 3, avg = sq.sqrt()
//     2, avg.add_(eps) 2, buf.mul_ 2, buf.addcdiv_(g, avg) 4, p.add_(buf) 3;
//   SGD with momentum 8: buf.mul_ 2, buf.add_(g) 3, p.add_(buf) 3;
//   SGD 3: p.add_(g).
double OptimizerTensorPassesPerParam(OptimizerKind optimizer);

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

struct WorkCounts {
  v1::ModelCounts counts;
  WorkBreakdown breakdown;
};

// Counts for `spec` (spec.family must be "fc", as ParseModelSpec ensures).
WorkCounts CountWork(const ModelSpec& spec);

// CountWork(spec).counts.
v1::ModelCounts CountModel(const ModelSpec& spec);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODEL_COUNTS_H_
