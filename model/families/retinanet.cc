// The retinanet family: RetinaNet (Lin et al. 2017) with a ResNet-50 FPN
// backbone, trained on one synthetic image batch with focal and smooth-L1
// losses. Hyper-parameters and analytic counts.
//
// Architecture (worker/runner/models/retinanet.cc builds exactly this; NCHW layout):
// - Backbone ResNet-50 v1.5 (torchvision's: the stride-2 of a bottleneck is
//   on its 3×3 conv), no FC: stem conv7×7/2 (3→64) → BN → ReLU →
//   maxpool3×3/2; stages of 3, 4, 6, 3 bottlenecks of widths 64, 128, 256,
//   512 (output 4×), strides 1, 2, 2, 2; projection shortcut (conv1×1 + BN)
//   on every stage's first block. Convs without bias. C3, C4, C5 = outputs of
//   stages 2, 3, 4 (512, 1024, 2048 channels at S/8, S/16, S/32).
// - BatchNorm in training mode (eps 1e-5, momentum 0.1), γ and β trainable.
//   torchvision's detection models freeze BN (FrozenBatchNorm2d): we train
//   it, as the ParaDnn CNN family does, because the step then does the work a
//   from-scratch training step does.
// - FPN: laterals conv1×1 (C3, C4, C5 → 256, bias), top-down P5' = lat5,
//   P4' = lat4 + up2(P5'), P3' = lat3 + up2(P4') (nearest), outputs
//   P3..P5 = conv3×3(256, bias) of P3'..P5'; P6 = conv3×3/2 on C5 (the
//   paper's choice; torchvision uses P5); P7 = conv3×3/2 on ReLU(P6).
// - Heads shared by all levels, no normalization: class subnet 4 × (conv3×3
//   256 + ReLU) → conv3×3 to A·K, box subnet 4 × (conv3×3 256 + ReLU) →
//   conv3×3 to A·4; A = 9 anchors. Class-predictor bias initialized to
//   −log((1−π)/π), π = 0.01; other head convs N(0, 0.01) weights, zero bias.
//
// Parameters (K = classes):
//   backbone 23,508,032 (ResNet-50's 25,557,032 less its 1000-way FC,
//     2,049,000; BN γ, β included)
//   FPN 7,997,440 = laterals (512+1024+2048)·256 + 3·256, outputs
//     3·(9·256² + 256), P6 9·2048·256 + 256, P7 9·256² + 256
//   heads 2·4·(9·256² + 256) + (9·256·9K + 9K) + (9·256·36 + 36)
//   K = 80: 37,968,692. Published RetinaNet-R50-FPN: ≈ 37.7–38 M in Detectron
//   (P6 from C5, as here); torchvision's retinanet_resnet50_fpn has 34.0 M
//   because its P6 reads P5 (256 channels, −4,128,768) and its BN is frozen.
//
// Synthetic data: image [B, 3, S, S] uniform in [0, 1); per image
// max(1, round(1 %·anchors)) positive anchors (random positions) with a class
// uniform in 1..K, the rest background (0); box targets uniform in
// [−1, 1) for positives. Losses: sigmoid focal loss (α 0.25, γ 2) summed over
// every anchor and class and divided by the number of positives, plus
// smooth-L1 (β = 1/9) summed over the positives' 4 box values and divided by
// the number of positives.
//
// MACs are exact per conv from the real shapes: k²·Cin·Cout·Hout·Wout
// (pad k/2; a stride-2 3×3 conv on side n gives ceil(n/2)). The stem conv
// reads the image, which needs no gradient: executed_flops = model_flops −
// 2·B·MACs(stem). Head convs run once per level with the same weights: their
// MACs count per level, their params once.
//
// other_flops (layer_ledger.h constants, one FLOP per element per
// operation): BN 8 fwd / 10 bwd, ReLU 1 / 1, residual and top-down adds,
// max-pool 8 compares per output, nearest upsampling's gradient (3 adds per
// 4 gradients), conv bias add and gradient, gradient sums where a tensor
// feeds several ops, the per-level gradient sums of shared head weights,
// focal loss 16 fwd / 18 bwd per logit (kernels: softplus 3, x·t 1, sub 1,
// sigmoid 3, p−t 1, abs 1, square 1, α_t 2, two products 2, sum 1; backward
// as LibTorch 1.13's autograd runs them), smooth-L1 5 / 3 per positive box
// value, and the optimizer.
// Bytes: "layerwise-traffic-v3" via LayerLedger; the head outputs' permute
// to [B, anchors, K] and the concatenation of levels are real copies.
// Activation and peak memory: LayerLedger, + image, one-hot class targets
// (activation dtype) and box targets and positive indices.

#include "model/families/retinanet.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "model/family.h"
#include "model/layer_ledger.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kRetinaNetParams[] = {
    {"batch", 1, kMaxModelBatch, true, "images per training step"},
    kDevicesRule,
    kHostsRule,
    {"image", 64, 4096, false, "height and width of the input images", 512, 32,
     "the FPN adds upsampled maps to the backbone's stride-8, -16 and -32 maps, which line "
     "up only when image is a multiple of 32"},
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"output", 1, 100000, false, "object classes", 80},
    kOverlapRule,
};

// max_pool2d_with_indices 3×3/2, per output element: 8 compares; reads the
// input (4 outputs' worth) and writes the output (its int64 indices are
// counted apart); backward zero-fills dX (4 outputs' worth) and scatters dY.
constexpr ElementwiseCost kMaxPoolCost = {8, 0, 5, 5, 1};
// Nearest 2× upsampling, per output element: forward reads a quarter input and
// writes the output; backward sums 4 gradients into one (3 adds per 4).
constexpr ElementwiseCost kUpsampleCost = {0, 0.75, 1.25, 1.25, 1};
// Zero-fill of the gradient of the box outputs before the positives' scatter.
constexpr ElementwiseCost kZeroFillCost = {0, 0, 0, 1, 0};

constexpr double kFocalForwardFlops = 16, kFocalBackwardFlops = 18;
constexpr double kFocalForwardPasses = 28, kFocalBackwardPasses = 38, kFocalKept = 11;
constexpr double kSmoothL1ForwardFlops = 5, kSmoothL1BackwardFlops = 3;

double Sq(double x) { return x * x; }

// conv k×k (pad k/2) from cin at side `in` to cout at side `out`.
void Conv(LayerLedger& l, double k, double cin, double cout, double in, double out, bool bias,
          bool input_grad = true, bool first_use = true, double in_bytes = 0) {
  l.Matmul(k * k * cin * cout * Sq(out), cin * Sq(in), cout * Sq(out), k * k * cin * cout,
           bias ? cout : 0, input_grad, first_use, in_bytes);
}

// C2..C5 of the ResNet-50 backbone: channels and side of each stage's output.
struct BackboneOutputs {
  double channels[4] = {0, 0, 0, 0};
  double side[4] = {0, 0, 0, 0};
};

// The backbone's bottlenecks, from the stem's output at `side`.
BackboneOutputs CountBackbone(LayerLedger& l, double side) {
  double cin = 64;
  BackboneOutputs out;
  for (int stage = 0; stage < 4; ++stage) {
    const double w = static_cast<double>(kResNet50Widths[stage]);
    for (int64_t block = 0; block < kResNet50Blocks[stage]; ++block) {
      const bool first = block == 0;
      const double stride = (first && stage > 0) ? 2 : 1;
      const double out_side = side / stride;
      l.Fork(cin * Sq(side), 2);  // main path and shortcut
      l.BeginBranches();
      Conv(l, 1, cin, w, side, side, false);
      l.Norm(kBatchNormCost, w * Sq(side), w);
      l.Elementwise(kReluCost, w * Sq(side));
      Conv(l, 3, w, w, side, out_side, false);
      l.Norm(kBatchNormCost, w * Sq(out_side), w);
      l.Elementwise(kReluCost, w * Sq(out_side));
      Conv(l, 1, w, 4 * w, out_side, out_side, false);
      l.Norm(kBatchNormCost, 4 * w * Sq(out_side), 4 * w);
      l.NextBranch();
      if (first) {
        Conv(l, 1, cin, 4 * w, side, out_side, false);
        l.Norm(kBatchNormCost, 4 * w * Sq(out_side), 4 * w);
      }
      l.EndBranches();
      l.Elementwise(kAddCost, 4 * w * Sq(out_side));
      l.Elementwise(kReluCost, 4 * w * Sq(out_side));
      cin = 4 * w;
      side = out_side;
    }
    out.channels[stage] = cin;
    out.side[stage] = side;
  }
  return out;
}

// The class and box subnets, shared across levels P3..P7, and both losses.
void CountHeadsAndLosses(LayerLedger& l, const RetinaNetShape& s, const double* level_side) {
  const double e_a = l.activation_element_bytes();
  const double batch = l.batch();
  const double f = kRetinaNetFpnChannels;
  const double anchors = kRetinaNetAnchors;
  const double classes = static_cast<double>(s.output);
  double positions = 0;
  // The ten subnets (class and box on each level) side by side; the FPN
  // before them is counted as one chain, so the width is a little low.
  l.BeginBranches();
  for (int level = 3; level <= 7; ++level) {
    const double ls = level_side[level];
    positions += Sq(ls);
    l.Fork(f * Sq(ls), 2);                        // class and box subnets
    for (int subnet = 0; subnet < 2; ++subnet) {  // class, box
      if (level > 3 || subnet > 0) l.NextBranch();
      const double predicted = subnet == 0 ? anchors * classes : anchors * 4;
      for (int64_t k = 0; k < kRetinaNetHeadConvs; ++k) {
        Conv(l, 3, f, f, ls, ls, true, true, /*first_use=*/level == 3);
        l.Elementwise(kReluCost, f * Sq(ls));
      }
      Conv(l, 3, f, predicted, ls, ls, true, true, /*first_use=*/level == 3);
      l.Elementwise(kCopyCost, predicted * Sq(ls));  // permute to [B, H·W·A, ·]
    }
  }
  l.EndBranches();
  const double total_anchors = anchors * positions;
  l.Elementwise(kCopyCost, total_anchors * classes);  // cat over levels
  l.Elementwise(kCopyCost, total_anchors * 4);
  // Focal loss over every anchor and class.
  l.Loss(total_anchors * classes, kFocalForwardFlops, kFocalBackwardFlops, kFocalForwardPasses,
         kFocalBackwardPasses, kFocalKept);
  // Smooth-L1 on the positives' boxes: gather (2 passes; backward
  // index_put 2 passes), loss reads prediction and target; backward writes
  // the gradient.
  const double positives = static_cast<double>(RetinaNetPositivesPerImage(s.image));
  l.Loss(positives * 4, kSmoothL1ForwardFlops, kSmoothL1BackwardFlops, 4, 5, 1);
  l.Elementwise(kZeroFillCost, total_anchors * 4);
  // Targets: one-hot classes (activation dtype), boxes, positive indices.
  l.AddTargetBytes(batch * (total_anchors * classes * e_a + positives * (4 * e_a + 8)));
}

WorkCounts CountRetinaNet(const ModelSpec& spec) {
  const RetinaNetShape s = RetinaNetShapeOf(spec);
  LayerLedger l(spec);
  const double e_a = l.activation_element_bytes();
  const double image = static_cast<double>(s.image);
  const double batch = l.batch();
  const double pixels = 3 * Sq(image);
  // The image: float32 in mixed precision, cast by autocast for the stem.
  const double e_image = l.mixed() ? 4.0 : e_a;
  l.AddActivationBytes(batch * pixels * e_image);
  if (l.mixed()) {
    l.AddForwardBytes(batch * pixels * (4.0 + 2.0));
    l.AddActivationBytes(batch * pixels * 2.0);
  }
  // Stem.
  double side = image / 2;
  Conv(l, 7, 3, 64, image, side, false, /*input_grad=*/false, true, l.mixed() ? 2.0 : e_a);
  l.Norm(kBatchNormCost, 64 * Sq(side), 64);
  l.Elementwise(kReluCost, 64 * Sq(side));
  side /= 2;
  l.Elementwise(kMaxPoolCost, 64 * Sq(side));
  l.AddForwardBytes(batch * 64 * Sq(side) * 8);  // indices written
  l.AddActivationBytes(batch * 64 * Sq(side) * 8);
  const BackboneOutputs c = CountBackbone(l, side);
  const double* c_out = c.channels;
  const double* c_side = c.side;
  // C3 and C4 also feed their laterals, C5 its lateral and P6.
  l.Fork(c_out[1] * Sq(c_side[1]), 2);
  l.Fork(c_out[2] * Sq(c_side[2]), 2);
  l.Fork(c_out[3] * Sq(c_side[3]), 2);
  // FPN.
  const double f = kRetinaNetFpnChannels;
  double level_side[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int level = 3; level <= 7; ++level) {
    level_side[level] = static_cast<double>(RetinaNetLevelSide(s.image, level));
  }
  Conv(l, 1, c_out[3], f, level_side[5], level_side[5], true);  // lateral 5 = P5'
  l.Fork(f * Sq(level_side[5]), 2);                             // output conv, upsample
  Conv(l, 1, c_out[2], f, level_side[4], level_side[4], true);  // lateral 4
  l.Elementwise(kUpsampleCost, f * Sq(level_side[4]));
  l.Elementwise(kAddCost, f * Sq(level_side[4]));  // P4'
  l.Fork(f * Sq(level_side[4]), 2);
  Conv(l, 1, c_out[1], f, level_side[3], level_side[3], true);  // lateral 3
  l.Elementwise(kUpsampleCost, f * Sq(level_side[3]));
  l.Elementwise(kAddCost, f * Sq(level_side[3]));  // P3'
  for (int level = 3; level <= 5; ++level) {
    Conv(l, 3, f, f, level_side[level], level_side[level], true);
  }
  Conv(l, 3, c_out[3], f, level_side[5], level_side[6], true);  // P6
  l.Fork(f * Sq(level_side[6]), 2);                             // heads, ReLU
  l.Elementwise(kReluCost, f * Sq(level_side[6]));
  Conv(l, 3, f, f, level_side[6], level_side[7], true);  // P7
  CountHeadsAndLosses(l, s, level_side);
  return l.Finish();
}

}  // namespace

RetinaNetShape RetinaNetShapeOf(const ModelSpec& spec) {
  return RetinaNetShape{spec.batch(), spec.Param("image"), spec.Param("output")};
}

ModelSpec MakeRetinaNetSpec(const RetinaNetShape& shape, Precision precision,
                            OptimizerKind optimizer) {
  return ModelSpec{
      "retinanet", {{"batch", shape.batch}, {"image", shape.image}, {"output", shape.output}},
      {},          precision,
      optimizer,   {}};
}

int64_t RetinaNetLevelSide(int64_t image, int level) {
  if (level <= 5) return image >> level;
  int64_t side = image >> 5;
  for (int l = 6; l <= level; ++l) side = (side + 1) / 2;
  return side;
}

int64_t RetinaNetAnchorsPerImage(int64_t image) {
  int64_t positions = 0;
  for (int level = 3; level <= 7; ++level) {
    const int64_t side = RetinaNetLevelSide(image, level);
    positions += side * side;
  }
  return kRetinaNetAnchors * positions;
}

int64_t RetinaNetPositivesPerImage(int64_t image) {
  const auto n = static_cast<int64_t>(std::llround(
      kRetinaNetPositiveFraction * static_cast<double>(RetinaNetAnchorsPerImage(image))));
  return n < 1 ? 1 : n;
}

int64_t RetinaNetParams(int64_t classes) {
  int64_t backbone = 7 * 7 * 3 * 64 + 2 * 64;  // stem conv + BN
  int64_t cin = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t w = kResNet50Widths[stage];
    for (int64_t block = 0; block < kResNet50Blocks[stage]; ++block) {
      backbone += cin * w + 2 * w + 9 * w * w + 2 * w + w * 4 * w + 2 * 4 * w;
      if (block == 0) backbone += cin * 4 * w + 2 * 4 * w;
      cin = 4 * w;
    }
  }
  const int64_t f = kRetinaNetFpnChannels;
  const int64_t conv3 = 9 * f * f + f;
  const int64_t fpn = (512 + 1024 + 2048) * f + 3 * f + 3 * conv3 + (9 * 2048 * f + f) + conv3;
  const int64_t a = kRetinaNetAnchors;
  const int64_t heads = 2 * kRetinaNetHeadConvs * conv3 + (9 * f * a * classes + a * classes) +
                        (9 * f * a * 4 + a * 4);
  return backbone + fpn + heads;
}

constexpr OptionRule kRetinaNetOptions[] = {kMemoryFormatRule};

extern const FamilyDef kRetinaNetFamily = {
    "retinanet",
    "RetinaNet: ResNet-50 v1.5 + FPN P3-P7 + class/box subnets, focal + smooth-L1 losses",
    kRetinaNetParams,
    kRetinaNetOptions,
    kConvRoof,
    /*check=*/nullptr,
    CountRetinaNet};

}  // namespace paradnn::model
