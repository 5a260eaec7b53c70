// The analytic counts of the four vision families: a walk over the layer
// records (VisionLayers) that the LibTorch models are checked against, so
// counts and networks describe one network.
#include <optional>
#include <vector>

#include "model/families/vision.h"
#include "model/family.h"

namespace paradnn::model {
namespace {

using Kind = VisionLayer::Kind;

// Bytes per element of a vision step's tensors at its precision.
struct VisionElementBytes {
  bool mixed = false;  // autocast: 16-bit compute copies of float32 weights
  double w = 4;        // weights
  double c = 4;        // compute copies of weights
  double a = 4;        // activations
  double x = 4;        // the image: float32 in mixed precision
};

// What the layers of a vision step add up to.
struct VisionTally {
  WorkBreakdown b;
  int64_t params = 0;
  int64_t macs = 0;
  double executed = 0;
  double matmul_params = 0;  // conv/linear parameters (autocast copies them)
  double activation_bytes = 0;
  double largest = 0, second = 0;  // the two largest activations, elements
};

// A convolution or linear layer: its MACs, weights, casts and gradients.
void CountVisionMatmul(const VisionLayer& l, const VisionElementBytes& e, double batch,
                       VisionTally* t) {
  const double n_in = batch * static_cast<double>(l.in.elements());
  const double n_out = batch * static_cast<double>(l.out.elements());
  const double p = static_cast<double>(l.Params());
  const double mac = static_cast<double>(l.Macs());
  t->macs += l.Macs();
  t->executed += 2 * batch * mac * (l.reads_image ? 2 : 3);
  t->matmul_params += p;
  const double e_in = l.reads_image ? (e.mixed ? e.c : e.x) : e.a;
  // Forward.
  t->b.weight_bytes += e.mixed ? p * (e.w + 2 * e.c) : p * e.w;
  t->b.activation_fwd_bytes += n_in * e_in + n_out * e.a;
  if (l.reads_image && e.mixed) {
    t->b.activation_fwd_bytes += n_in * (e.x + e.c);  // cast of the image
    t->activation_bytes += n_in * e.c;
  }
  t->activation_bytes += n_out * e.a;
  // Backward: weight gradient (and bias gradient), input gradient.
  t->b.activation_bwd_bytes += n_out * e.a + n_in * e_in;
  t->b.gradient_bytes += p * e.c;
  if (e.mixed) t->b.gradient_bytes += p * (e.c + e.w);
  if (l.bias) {
    t->b.bias_relu_flops += 2 * n_out;
    t->b.activation_bwd_bytes += n_out * e.a;
  }
  if (!l.reads_image) {
    t->b.activation_bwd_bytes += n_out * e.a + n_in * e.a;
    t->b.weight_bytes += (p - (l.bias ? l.out.c : 0)) * e.c;
  }
}

// One layer's FLOPs and bytes, forward and backward, into `t`.
void CountVisionLayer(const VisionLayer& l, const VisionElementBytes& e, double batch,
                      VisionTally* t) {
  const double n_in = batch * static_cast<double>(l.in.elements());
  const double n_out = batch * static_cast<double>(l.out.elements());
  const double p = static_cast<double>(l.Params());
  t->params += l.Params();
  for (double n : {n_in, n_out}) {
    if (n > t->largest) {
      t->second = t->largest;
      t->largest = n;
    } else if (n > t->second) {
      t->second = n;
    }
  }
  switch (l.kind) {
    case Kind::kConv:
    case Kind::kLinear:
      CountVisionMatmul(l, e, batch, t);
      break;
    case Kind::kBatchNorm:
      t->b.bias_relu_flops +=
          (kBatchNormForwardFlopsPerElement + kBatchNormBackwardFlopsPerElement) * n_out;
      t->b.weight_bytes += p * e.w;
      t->b.gradient_bytes += p * e.w;
      t->b.activation_fwd_bytes += 2 * n_out * e.a;
      t->b.activation_bwd_bytes += 3 * n_out * e.a;
      t->activation_bytes += n_out * e.a;
      break;
    case Kind::kRelu:
      t->b.bias_relu_flops += 2 * n_out;
      t->b.activation_fwd_bytes += 2 * n_out * e.a;
      t->b.activation_bwd_bytes += 3 * n_out * e.a;
      break;
    case Kind::kMaxPool:
      t->b.bias_relu_flops += static_cast<double>(l.kernel * l.kernel) * n_out + n_out;
      t->b.activation_fwd_bytes += n_in * e.a + n_out * (e.a + 8);
      t->b.activation_bwd_bytes += n_out * (e.a + 8) + n_in * e.a;
      t->activation_bytes += n_out * (e.a + 8);
      break;
    case Kind::kAvgPool:
      t->b.bias_relu_flops += 2 * static_cast<double>(l.kernel * l.kernel) * n_out;
      t->b.activation_fwd_bytes += (n_in + n_out) * e.a;
      t->b.activation_bwd_bytes += (n_in + n_out) * e.a;
      t->activation_bytes += n_out * e.a;
      break;
    case Kind::kGlobalAvgPool:
      t->b.bias_relu_flops += 2 * n_in;
      t->b.activation_fwd_bytes += (n_in + n_out) * e.a;
      t->b.activation_bwd_bytes += (n_in + n_out) * e.a;
      t->activation_bytes += n_out * e.a;
      break;
    case Kind::kAdd:
      t->b.bias_relu_flops += n_out;
      t->b.activation_fwd_bytes += 3 * n_out * e.a;
      t->activation_bytes += n_out * e.a;
      break;
    case Kind::kConcat:
      t->b.bias_relu_flops += n_out;
      t->b.activation_fwd_bytes += 2 * n_out * e.a;
      t->b.activation_bwd_bytes += 3 * n_out * e.a;
      t->activation_bytes += n_out * e.a;
      break;
    case Kind::kDropout:
      t->b.bias_relu_flops +=
          (kDropoutForwardFlopsPerElement + kDropoutBackwardFlopsPerElement) * n_out;
      t->b.activation_fwd_bytes += 3 * n_out * e.a;
      t->b.activation_bwd_bytes += 3 * n_out * e.a;
      t->activation_bytes += 2 * n_out * e.a;  // output and mask
      break;
    case Kind::kFork: {
      const double extra = static_cast<double>(l.operands - 1);
      t->b.bias_relu_flops += extra * n_in;
      t->b.activation_bwd_bytes += 3 * extra * n_in * e.a;
      break;
    }
  }
}

}  // namespace

WorkCounts CountVision(const ModelSpec& spec) {
  const std::optional<VisionArch> arch = VisionArchOf(spec.family);
  const VisionShape s = VisionShapeOf(spec);
  const std::vector<VisionLayer> layers = VisionLayers(*arch, s.image, s.output);
  const double batch = static_cast<double>(s.batch);
  VisionElementBytes e;
  e.mixed = spec.precision == Precision::kMixedBf16 || spec.precision == Precision::kMixedFp16;
  e.w = WeightElementBytes(spec.precision);
  e.c = e.mixed ? 2.0 : e.w;
  e.a = ActivationElementBytes(spec.precision);
  e.x = e.mixed ? 4.0 : e.a;

  VisionTally tally;
  for (const VisionLayer& l : layers) CountVisionLayer(l, e, batch, &tally);
  WorkCounts out;
  out.breakdown = tally.b;
  WorkBreakdown& b = out.breakdown;
  double activation_bytes = tally.activation_bytes;
  const double image_elems = batch * 3 * static_cast<double>(s.image * s.image);
  activation_bytes += image_elems * e.x;
  const double logits = batch * static_cast<double>(s.output);
  b.activation_fwd_bytes += 2 * logits * e.a;
  b.activation_bwd_bytes += 2 * logits * e.a;
  activation_bytes += 2 * logits * e.a;
  b.loss_flops = logits * (kLossForwardFlopsPerLogit + kLossBackwardFlopsPerLogit);

  StepTotals t;
  t.params = tally.params;
  t.macs_per_example = static_cast<double>(tally.macs);
  t.batch = batch;
  t.executed_flops = tally.executed;
  t.activation_bytes = activation_bytes;
  t.weight_element_bytes = e.w;
  t.optimizer = spec.optimizer;
  if (e.mixed) {  // 16-bit copies of the matmul and convolution weights
    t.cast_params = tally.matmul_params;
    t.cast_element_bytes = e.c;
  }
  const double state_bytes = FillStepCounts(t, &b, &out.counts);
  out.counts.set_peak_memory_estimate_bytes(state_bytes + activation_bytes + batch * 8 +
                                            (tally.largest + tally.second) * e.a);
  return out;
}

}  // namespace paradnn::model
