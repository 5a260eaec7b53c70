// The FC family (PARADNN_MODELS.md "FC"): its hyper-parameters and analytic
// counts.
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
// Bytes per step (method "layerwise-traffic-v2"): every tensor a kernel reads
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

namespace paradnn::model {
namespace {

constexpr ParamRule kFcParams[] = {
    {"batch", 1, kMaxBatch, true, "examples per training step"},
    {"input", 1, kMaxWidth, true, "input features per example"},
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"layer", 1, 4096, true, "hidden Linear+ReLU layers"},
    {"node", 1, kMaxWidth, true, "units per hidden layer"},
    {"output", 1, kMaxWidth, true, "classes (width of the last Linear)"},
};

// Bytes per element of an FC step's tensors at its precision.
struct FcElementBytes {
  bool mixed = false;
  double w = 4;         // weights
  double c = 4;         // compute copies of weights (16-bit in mixed precision)
  double a = 4;         // activations
  double x = 4;         // the synthetic input (float32 in mixed precision)
  double x_matmul = 4;  // what the first matmul reads: the input or its cast
};

// One Linear (+ ReLU when hidden) layer in -> out_w over `batch` examples,
// forward and backward.
void CountLinearLayer(const FcElementBytes& e, double batch, double in, double out_w, bool first,
                      bool hidden, WorkBreakdown* b) {
  const double w = in * out_w;        // weight matrix elements
  const double p = (in + 1) * out_w;  // with bias
  // Forward.
  b->weight_bytes += e.mixed ? p * (e.w + 2 * e.c) : p * e.w;
  b->activation_fwd_bytes += batch * in * (first ? e.x_matmul : e.a) + batch * out_w * e.a;
  if (first && e.mixed) b->activation_fwd_bytes += batch * in * (e.x + e.c);  // cast of x
  if (hidden) b->activation_fwd_bytes += 2 * batch * out_w * e.a;             // ReLU
  b->bias_relu_flops += batch * out_w;                                        // bias add
  if (hidden) b->bias_relu_flops += batch * out_w;                            // ReLU

  // Backward.
  if (hidden) {
    b->activation_bwd_bytes += 3 * batch * out_w * e.a;  // ReLU: read dA, read A, write dZ
    b->bias_relu_flops += batch * out_w;
  }
  b->activation_bwd_bytes += batch * out_w * e.a + batch * in * (first ? e.x_matmul : e.a);  // dW
  b->activation_bwd_bytes += batch * out_w * e.a;                                            // db
  b->bias_relu_flops += batch * out_w;
  b->gradient_bytes += p * e.c;
  if (e.mixed) b->gradient_bytes += p * (e.c + e.w);
  if (!first) {
    b->activation_bwd_bytes += batch * out_w * e.a + batch * in * e.a;  // dX
    b->weight_bytes += w * e.c;
  }
}

WorkCounts CountFc(const ModelSpec& spec) {
  const FcShape s = FcShapeOf(spec);
  // Layer widths d[0..L+1]; doubles so that products never overflow.
  std::vector<double> d;
  d.push_back(static_cast<double>(s.input));
  for (int64_t k = 0; k < s.layer; ++k) d.push_back(static_cast<double>(s.node));
  d.push_back(static_cast<double>(s.output));
  const double batch = static_cast<double>(s.batch);
  const bool mixed =
      spec.precision == Precision::kMixedBf16 || spec.precision == Precision::kMixedFp16;
  FcElementBytes e;
  e.mixed = mixed;
  e.w = WeightElementBytes(spec.precision);
  e.c = mixed ? 2.0 : e.w;
  e.a = ActivationElementBytes(spec.precision);
  // Mixed precision keeps the synthetic input in float32; autocast casts it.
  e.x = mixed ? 4.0 : e.a;
  // What the first matmul reads (and saves for its weight gradient): the input,
  // or its 16-bit autocast copy.
  e.x_matmul = mixed ? e.c : e.x;
  const double e_w = e.w, e_c = e.c, e_a = e.a, e_x = e.x;

  WorkCounts out;
  WorkBreakdown& b = out.breakdown;
  int64_t params = 0;
  int64_t macs = 0;
  double executed = 0;
  const size_t layers = d.size() - 1;  // Linear layers, L + 1
  for (size_t k = 1; k <= layers; ++k) {
    const double in = d[k - 1];
    const double out_w = d[k];
    const double w = in * out_w;        // weight matrix elements
    const double p = (in + 1) * out_w;  // with bias
    const bool hidden = k < layers;
    const bool first = k == 1;
    params += static_cast<int64_t>(p);
    macs += static_cast<int64_t>(w);
    executed += 2 * batch * w * (first ? 2 : 3);

    CountLinearLayer(e, batch, in, out_w, first, hidden, &b);
  }
  const double logits = batch * d.back();
  b.activation_fwd_bytes += 2 * logits * e_a;  // loss: read logits, write log-probs
  b.activation_bwd_bytes += 2 * logits * e_a;  // loss: read log-probs, write dlogits
  b.loss_flops = logits * (kLossForwardFlopsPerLogit + kLossBackwardFlopsPerLogit);
  const double pd = static_cast<double>(params);

  double hidden_elems = 0;
  for (size_t k = 1; k < layers; ++k) hidden_elems += 2 * d[k];
  const double activation_bytes =
      batch * d.front() * (e_x + (mixed ? e_c : 0)) + batch * hidden_elems * e_a + 2 * logits * e_a;
  const double max_width = *std::max_element(d.begin() + 1, d.end());

  StepTotals t;
  t.params = params;
  t.macs_per_example = static_cast<double>(macs);
  t.batch = batch;
  t.executed_flops = executed;
  t.activation_bytes = activation_bytes;
  t.weight_element_bytes = e_w;
  t.optimizer = spec.optimizer;
  if (mixed) {
    t.cast_params = pd;
    t.cast_element_bytes = e_c;
  }
  const double state_bytes = FillStepCounts(t, &b, &out.counts);
  out.counts.set_peak_memory_estimate_bytes(state_bytes + activation_bytes + batch * 8 +
                                            2 * batch * max_width * e_a);
  return out;
}

}  // namespace

FcShape FcShapeOf(const ModelSpec& spec) {
  return FcShape{spec.Param("layer"), spec.Param("node"), spec.Param("input"), spec.Param("output"),
                 spec.Param("batch")};
}

ModelSpec MakeFcSpec(const FcShape& shape, Precision precision, OptimizerKind optimizer) {
  ModelSpec spec;
  spec.family = "fc";
  spec.params = {{"layer", shape.layer},
                 {"node", shape.node},
                 {"input", shape.input},
                 {"output", shape.output},
                 {"batch", shape.batch}};
  spec.precision = precision;
  spec.optimizer = optimizer;
  return spec;
}

extern const FamilyDef kFcFamily = {
    "fc",        "fully connected: input -> [Linear(node) + ReLU] x layer -> Linear(output)",
    kFcParams,   {},
    kMatmulRoof, /*check=*/nullptr,
    CountFc};

}  // namespace paradnn::model
