// The FC family (docs/models.md "FC"): its hyper-parameters and analytic
// counts, walked through the LayerLedger (model/layer_ledger.h), which
// applies exactly the closed forms below (checked equal, every count, on 720
// FC configurations of every precision when the closed-form code was
// replaced).
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
// Bytes per step (method "layerwise-traffic-v3"): every tensor a kernel reads
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
//   optimizer: the runner's fused update (fused_optimizer.h), one kernel
//             per parameter: OptimizerTensorPassesPerParam(kFused) tensor
//             reads and writes of params*e_w bytes each (a CUDA job, updated
//             by torch::optim, counts kPerOperation; CountOptimizerUpdate).
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

#include "model/families/fc.h"

#include <algorithm>
#include <vector>

#include "model/family.h"
#include "model/layer_ledger.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kFcParams[] = {
    {"batch", 1, kMaxBatch, true, "examples per training step"},
    kDevicesRule,
    kHostsRule,
    {"input", 1, kMaxWidth, true, "input features per example"},
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"layer", 1, 4096, true, "hidden Linear+ReLU layers"},
    {"node", 1, kMaxWidth, true, "units per hidden layer"},
    {"output", 1, kMaxWidth, true, "classes (width of the last Linear)"},
    kOverlapRule,
};

// The FC step through the LayerLedger every layered family counts with
// (model/layer_ledger.h): L hidden Linear + ReLU layers and the output
// Linear, then softmax cross-entropy over the logits. Mixed precision keeps
// the synthetic input in float32; autocast casts it, and the first matmul
// reads (and saves for its weight gradient) the 16-bit copy.
WorkCounts CountFc(const ModelSpec& spec) {
  const FcShape s = FcShapeOf(spec);
  LayerLedger l(spec);
  const double batch = l.batch();
  const double input = static_cast<double>(s.input);
  l.NetworkInput(input);
  double in = input;
  for (int64_t k = 0; k <= s.layer; ++k) {
    const bool first = k == 0;
    const bool hidden = k < s.layer;
    const double out = static_cast<double>(hidden ? s.node : s.output);
    l.Matmul(/*macs=*/in * out, in, out, /*weights=*/in * out, /*bias=*/out,
             /*input_grad=*/!first, /*first_use=*/true, first ? l.input_element_bytes() : 0);
    if (hidden) l.Elementwise(kReluCost, out);
    in = out;
  }
  // Loss: read logits, write log-probs; backward read log-probs, write
  // dlogits; the log-probs are kept.
  l.Loss(static_cast<double>(s.output), kLossForwardFlopsPerLogit, kLossBackwardFlopsPerLogit,
         /*fwd_passes=*/2, /*bwd_passes=*/2, /*kept=*/1);
  l.AddTargetBytes(batch * 8);  // int64 labels
  return l.Finish();
}

}  // namespace

FcShape FcShapeOf(const ModelSpec& spec) {
  return FcShape{spec.Param("layer"), spec.Param("node"), spec.Param("input"), spec.Param("output"),
                 spec.Param("batch")};
}

ModelSpec MakeFcSpec(const FcShape& shape, Precision precision, OptimizerKind optimizer) {
  return ModelSpec{"fc",
                   {{"layer", shape.layer},
                    {"node", shape.node},
                    {"input", shape.input},
                    {"output", shape.output},
                    {"batch", shape.batch}},
                   {},
                   precision,
                   optimizer,
                   {}};
}

extern const FamilyDef kFcFamily = {
    "fc",        "fully connected: input -> [Linear(node) + ReLU] x layer -> Linear(output)",
    kFcParams,   {},
    kMatmulRoof, /*check=*/nullptr,
    CountFc};

}  // namespace paradnn::model
