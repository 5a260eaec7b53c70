#include "worker/runner/model_counts.h"

#include <algorithm>
#include <vector>

namespace paradnn::runner {

double OptimizerFlopsPerParam(OptimizerKind optimizer) {
  switch (optimizer) {
    case OptimizerKind::kRmsProp:
      return 12;
    case OptimizerKind::kMomentum:
      return 4;
    case OptimizerKind::kSgd:
      return 2;
  }
  return 0;
}

double OptimizerTensorPassesPerParam(OptimizerKind optimizer) {
  switch (optimizer) {
    case OptimizerKind::kRmsProp:
      return 18;
    case OptimizerKind::kMomentum:
      return 8;
    case OptimizerKind::kSgd:
      return 3;
  }
  return 0;
}

WorkCounts CountWork(const ModelSpec& spec) {
  const FcShape& s = spec.fc;
  // Layer widths d[0..L+1]; doubles so that products never overflow.
  std::vector<double> d;
  d.push_back(static_cast<double>(s.input));
  for (int64_t k = 0; k < s.layer; ++k) d.push_back(static_cast<double>(s.node));
  d.push_back(static_cast<double>(s.output));
  const double batch = static_cast<double>(s.batch);
  const bool mixed =
      spec.precision == Precision::kMixedBf16 || spec.precision == Precision::kMixedFp16;
  const double e_w = WeightElementBytes(spec.precision);
  const double e_c = mixed ? 2.0 : e_w;
  const double e_a = ActivationElementBytes(spec.precision);
  // Mixed precision keeps the synthetic input in float32; autocast casts it.
  const double e_x = mixed ? 4.0 : e_a;
  // What the first matmul reads (and saves for its weight gradient): the input,
  // or its 16-bit autocast copy.
  const double e_x_matmul = mixed ? e_c : e_x;
  const double states = OptimizerStateTensors(spec.optimizer);

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

    // Forward.
    b.weight_bytes += mixed ? p * (e_w + 2 * e_c) : p * e_w;
    b.activation_fwd_bytes += batch * in * (first ? e_x_matmul : e_a) + batch * out_w * e_a;
    if (first && mixed) b.activation_fwd_bytes += batch * in * (e_x + e_c);  // cast of x
    if (hidden) b.activation_fwd_bytes += 2 * batch * out_w * e_a;           // ReLU
    b.bias_relu_flops += batch * out_w;                                      // bias add
    if (hidden) b.bias_relu_flops += batch * out_w;                          // ReLU

    // Backward.
    if (hidden) {
      b.activation_bwd_bytes += 3 * batch * out_w * e_a;  // ReLU: read dA, read A, write dZ
      b.bias_relu_flops += batch * out_w;
    }
    b.activation_bwd_bytes += batch * out_w * e_a + batch * in * (first ? e_x_matmul : e_a);  // dW
    b.activation_bwd_bytes += batch * out_w * e_a;                                            // db
    b.bias_relu_flops += batch * out_w;
    b.gradient_bytes += p * e_c;
    if (mixed) b.gradient_bytes += p * (e_c + e_w);
    if (!first) {
      b.activation_bwd_bytes += batch * out_w * e_a + batch * in * e_a;  // dX
      b.weight_bytes += w * e_c;
    }
  }
  const double logits = batch * d.back();
  b.activation_fwd_bytes += 2 * logits * e_a;  // loss: read logits, write log-probs
  b.activation_bwd_bytes += 2 * logits * e_a;  // loss: read log-probs, write dlogits
  b.loss_flops = logits * (kLossForwardFlopsPerLogit + kLossBackwardFlopsPerLogit);
  const double pd = static_cast<double>(params);
  b.optimizer_bytes = OptimizerTensorPassesPerParam(spec.optimizer) * pd * e_w;
  b.optimizer_flops = OptimizerFlopsPerParam(spec.optimizer) * pd;

  double hidden_elems = 0;
  for (size_t k = 1; k < layers; ++k) hidden_elems += 2 * d[k];
  const double activation_bytes =
      batch * d.front() * (e_x + (mixed ? e_c : 0)) + batch * hidden_elems * e_a + 2 * logits * e_a;
  const double max_width = *std::max_element(d.begin() + 1, d.end());

  v1::ModelCounts& c = out.counts;
  c.set_params(params);
  c.set_macs_per_example(macs);
  c.set_model_flops(6.0 * static_cast<double>(macs) * batch);
  c.set_executed_flops(executed);
  c.set_other_flops(b.bias_relu_flops + b.loss_flops + b.optimizer_flops);
  c.set_bytes_per_step(b.weight_bytes + b.gradient_bytes + b.optimizer_bytes +
                       b.activation_fwd_bytes + b.activation_bwd_bytes);
  c.set_activation_bytes(activation_bytes);
  double state_bytes = pd * e_w * (2 + states);  // weights, gradients, optimizer state
  if (mixed) state_bytes += 2 * pd * e_c;        // 16-bit weight copies and gradients
  c.set_peak_memory_estimate_bytes(state_bytes + activation_bytes + batch * 8 +
                                   2 * batch * max_width * e_a);
  return out;
}

v1::ModelCounts CountModel(const ModelSpec& spec) { return CountWork(spec).counts; }

}  // namespace paradnn::runner
