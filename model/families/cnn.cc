// The CNN family (docs/models.md "CNN"): ResNet v1 with residual or
// bottleneck blocks; its hyper-parameters, validation and analytic counts,
// walked through the LayerLedger (model/layer_ledger.h), whose op costs are
// the ones below.
//
// Notation: B batch, S image, f filter, O output; every conv is square with
// kernel k, input Cin x H x H, output Cout x H' x H' where
// H' = floor((H + 2*pad - k) / stride) + 1 (LibTorch's floor arithmetic).
// The stem conv 7x7/2 pad 3 and the max-pool 3x3/2 pad 1 each give ceil(H/2);
// so do a group's strided 3x3 (pad 1) and 1x1 (pad 0) convs, so the last
// group's map is m = ceil(S/32) and the head's 7x7/1 average pool leaves
// (m-6)^2 positions: S >= 193.
//
//   params            = sum over convs k^2*Cin*Cout
//                     + sum over BN 2*C (gamma, beta; running stats are buffers)
//                     + (Cl*(m-6)^2 + 1) * O          (head Linear, Cl = last channels)
//   macs_per_example  = sum over convs k^2*Cin*Cout*H'^2 + Cl*(m-6)^2*O
//   model_flops       = 6 * macs_per_example * B      (ParaDnn convention)
//   executed_flops    = 2*B*MACs forward + 2*B*MACs weight gradients
//                     + 2*B*(MACs - stem conv MACs) input gradients
//                       (the stem's input, the image batch, needs no gradient)
//   other_flops       = non-matmul arithmetic, per element of the tensor named:
//     BN forward (training) 7 per output element: sum for the mean 1, sum of
//       squares 2, (x - mean) * invstd 2, gamma * xhat + beta 2;
//     BN backward 9 per element: xhat again 2, sum(dy) 1, sum(dy * xhat) 2,
//       dx = gamma*invstd*(dy - mean(dy) - xhat*mean(dy*xhat)) 4;
//       (per-channel terms: running statistics, invstd, are O(C) and omitted)
//     ReLU 1 forward, 1 backward per element;
//     residual add 1 forward per output element; in backward the block
//       input's two gradients (main path and shortcut) are summed: 1 per
//       element of the block input;
//     max-pool 3x3: 8 comparisons per output element forward, 1 per output
//       element backward (scatter of the gradient to the argmax);
//     average-pool 7x7: 49 per output element forward (48 adds, 1 scale) and
//       49 backward (spread of the scaled gradient);
//     head bias 1 per logit forward, 1 backward (bias gradient);
//     softmax cross-entropy kLossForwardFlopsPerLogit + kLossBackwardFlopsPerLogit
//       per logit; optimizer OptimizerFlopsPerParam() per parameter.
//   All of it except loss and optimizer is reported as bias_relu_flops.
//
// Bytes per step (method "layerwise-traffic-v3", as for FC): every tensor a
// kernel reads or writes counted once per kernel; e_w stored weights, their
// gradients and optimizer state; e_c the weights a conv/Linear reads (e_w, or
// 2 bytes for the autocast copy in mixed precision; BN parameters are not cast
// by CPU autocast and are read at e_w); e_a activations; indices of the
// max-pool are int64 (8 bytes).
//   conv   forward: read W (e_c) and the input, write the output; mixed
//          precision also reads the float32 master and writes the 16-bit copy
//          (and casts the image batch: read 4, write 2 bytes per element).
//          backward: weight gradient reads dY and the saved input, writes dW;
//          input gradient (not the stem) reads dY and W, writes dX; mixed
//          precision casts dW to float32 (read e_c, write e_w).
//   BN     forward: 3 passes (read for statistics, read + write to normalize),
//          read gamma and beta; backward: 5 passes (dY and x read twice: once
//          for the reductions, once for dx; dx written), write dgamma, dbeta.
//   ReLU   (in place, as torchvision) forward read + write; backward read dY,
//          read the saved output, write dX.
//   add    forward read 2, write 1; backward: the gradient sum at the block
//          input reads 2, writes 1 (block-input sized).
//   maxpool forward read input, write output and int64 indices; backward read
//          dY and indices, write dX.
//   avgpool forward read input, write output; backward read dY, write dX.
//   Linear, loss, optimizer: as FC (model/families/fc.cc).
//
// activation_bytes: every activation tensor forward writes: the image batch
// (and its 16-bit copy in mixed precision), every conv output, every BN output
// (ReLU works in place on it), every add output, the max-pool output and its
// int64 indices, the average-pool output, the logits and log-probabilities.
// This is an upper bound on what autograd keeps: the BN outputs that only feed
// an add are freed once the add has run.
// peak_memory_estimate_bytes: weights + gradients + optimizer state
// (+ 16-bit copies of conv/Linear weights and their gradients in mixed
// precision) + activation_bytes + labels (int64) + the two largest activation
// gradients alive at once in backward + the largest im2col buffer of one conv
// (B*k^2*Cin*H'^2 activation elements; a conv backend may need less).
//
// Memory format: the runner builds and feeds contiguous NCHW tensors (the
// original ParaDnn used NHWC); the counts do not depend on it.

#include "model/families/cnn.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "model/family.h"
#include "model/layer_ledger.h"

namespace paradnn::model {
namespace {

constexpr int64_t kMaxBlocksPerGroup = 64;

constexpr ParamRule kCnnParams[] = {
    {"batch", 1, kMaxBatch, true, "examples per training step"},
    {"block", 1, kMaxBlocksPerGroup, true,
     "blocks in each of the four groups (option blocks overrides it per group)"},
    kDevicesRule,
    {"filter", 1, 4096, true, "channels of the stem and the first group (then 2x, 4x, 8x)"},
    kHostsRule,
    {"image", kCnnMinImage, 4096, true, "height and width of the input images", 0, 0,
     "the 7x7 average pool needs a final map of at least 7 (image >= 193)"},
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"output", 1, kMaxWidth, true, "classes (width of the last Linear)"},
    kOverlapRule,
};

constexpr const char* kBlockFns[] = {"residual", "bottleneck"};

// Four canonical decimal counts 1..64 separated by commas, or an error text
// that follows the quoted value.
absl::StatusOr<std::array<int64_t, 4>> ParseBlockCounts(const std::string& value) {
  const std::vector<std::string> parts = absl::StrSplit(value, ',');
  std::array<int64_t, 4> counts = {0, 0, 0, 0};
  bool ok = parts.size() == counts.size();
  for (size_t i = 0; ok && i < parts.size(); ++i) {
    const std::string& part = parts[i];
    // Canonical decimal only ("3", not "03", " 3" or "+3"): equal counts are
    // equal strings in stored configs (the coordinator's rule too).
    ok = !part.empty() && part.front() >= '1' && part.front() <= '9' &&
         absl::SimpleAtoi(part, &counts[i]) && absl::StrCat(counts[i]) == part &&
         counts[i] <= kMaxBlocksPerGroup;
  }
  if (ok) return counts;
  return absl::InvalidArgumentError(absl::StrCat("is not four comma-separated block counts 1..",
                                                 kMaxBlocksPerGroup, " like \"3,4,6,3\""));
}

absl::Status CheckBlockCountsText(absl::string_view value) {
  absl::StatusOr<std::array<int64_t, 4>> counts = ParseBlockCounts(std::string(value));
  return counts.ok() ? absl::OkStatus() : counts.status();
}

constexpr OptionRule kCnnOptions[] = {
    {"block_fn", kBlockFns, nullptr,
     "residual (two 3x3 convs) or bottleneck (1x1, 3x3, 1x1 with 4x channels)"},
    {"blocks",
     {},
     "",
     "blocks per group as four counts, e.g. \"3,4,6,3\" (ResNet-50); overrides block",
     CheckBlockCountsText},
    kMemoryFormatRule,
};

constexpr int64_t kGroups = 4;
constexpr double kAvgPoolFlopsPerOutput = 49;  // 7x7 window, forward and backward each

absl::Status CheckCnn(const ModelSpec& spec, FieldStyle style) {
  // The range rule already enforces it; kept so that a spec made in code
  // (MakeCnnSpec) cannot slip past with a map the head cannot pool.
  const int64_t image = spec.Param("image");
  if (image < kCnnMinImage) {
    return absl::InvalidArgumentError(
        absl::StrCat(FieldName(style, "params", "image"), ": ", image,
                     " is too small; the 7x7 average pool needs a final map of at least 7 "
                     "(ceil(image/32) >= 7), i.e. image >= ",
                     kCnnMinImage));
  }
  return absl::OkStatus();
}

// Elements per example of a C x H x H activation.
double Elems(int64_t channels, int64_t size) { return static_cast<double>(channels * size * size); }

// A conv through the ledger; `stem` for the first, whose input is the image
// batch (its 16-bit copy in mixed precision) and needs no gradient.
void CountConv(const CnnConvLayer& c, bool stem, LayerLedger* l) {
  const double p = static_cast<double>(c.kernel * c.kernel * c.in_channels * c.out_channels);
  l->Matmul(/*macs=*/p * static_cast<double>(c.out_size * c.out_size),
            Elems(c.in_channels, c.in_size), Elems(c.out_channels, c.out_size), /*weights=*/p,
            /*bias=*/0, /*input_grad=*/!stem, /*first_use=*/true,
            stem ? l->input_element_bytes() : 0);
  if (c.kernel > 1) {
    l->Workspace(static_cast<double>(c.kernel * c.kernel * c.in_channels * c.out_size *
                                     c.out_size));  // im2col columns
  }
}

// The conv's BN, and its ReLU (in place) unless it feeds an add.
void CountBnRelu(const CnnConvLayer& c, bool relu, LayerLedger* l) {
  const double out = Elems(c.out_channels, c.out_size);
  l->Norm(kBatchNormCost, out, static_cast<double>(c.out_channels));
  if (relu) l->Elementwise(kReluInPlaceCost, out);
}

WorkCounts CountCnn(const ModelSpec& spec) {
  const CnnShape s = CnnShapeOf(spec);
  const std::vector<CnnConvLayer> convs = CnnConvLayers(s);
  LayerLedger l(spec);
  const double batch = l.batch();
  l.NetworkInput(Elems(3, s.image));

  // Stem: conv -> BN -> ReLU -> max-pool.
  const CnnConvLayer& stem = convs.front();
  CountConv(stem, /*stem=*/true, &l);
  CountBnRelu(stem, /*relu=*/true, &l);
  const int64_t pooled = CnnOutputSize(stem.out_size, 3, 2, 1);
  l.MaxPool(Elems(stem.out_channels, stem.out_size), Elems(stem.out_channels, pooled), 9);

  // Blocks: CnnConvLayers lists each block's main-path convs, then its
  // projection if it has one. Every main-path conv is followed by BN; all
  // but the last by ReLU; the last BN (and the projection's BN) feed the add.
  const size_t main_convs = s.block_fn == CnnBlockFn::kResidual ? 2 : 3;
  size_t i = 1;
  while (i < convs.size()) {
    const CnnConvLayer& first = convs[i];
    // The block input feeds the main path and the shortcut.
    l.Fork(Elems(first.in_channels, first.in_size), 2);
    l.BeginBranches();  // the main path beside the projection shortcut
    for (size_t k = 0; k < main_convs; ++k, ++i) {
      CountConv(convs[i], /*stem=*/false, &l);
      CountBnRelu(convs[i], /*relu=*/k + 1 < main_convs, &l);
    }
    const CnnConvLayer& last = convs[i - 1];
    l.NextBranch();
    if (i < convs.size() && convs[i].projection) {
      CountConv(convs[i], /*stem=*/false, &l);
      CountBnRelu(convs[i], /*relu=*/false, &l);
      ++i;
    }
    l.EndBranches();
    const double block_out = Elems(last.out_channels, last.out_size);
    l.Elementwise(kAddCost, block_out);
    l.Elementwise(kReluInPlaceCost, block_out);
  }

  // Head: avgpool 7x7/1 -> flatten -> Linear, then softmax cross-entropy.
  const CnnConvLayer& tail = convs.back().projection ? convs[convs.size() - 2] : convs.back();
  const int64_t m = tail.out_size;
  l.Pool(Elems(tail.out_channels, m), Elems(tail.out_channels, m - 6), kAvgPoolFlopsPerOutput,
         kAvgPoolFlopsPerOutput);
  const double features = static_cast<double>(CnnHeadFeatures(s));
  const double classes = static_cast<double>(s.output);
  l.Matmul(features * classes, features, classes, features * classes, classes,
           /*input_grad=*/true);
  l.Loss(classes, kLossForwardFlopsPerLogit, kLossBackwardFlopsPerLogit, /*fwd_passes=*/2,
         /*bwd_passes=*/2, /*kept=*/1);
  l.AddTargetBytes(batch * kIndexElementBytes);  // int64 labels
  return l.Finish();
}

}  // namespace

int64_t CnnOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

std::vector<CnnConvLayer> CnnConvLayers(const CnnShape& shape) {
  std::vector<CnnConvLayer> convs;
  auto add = [&convs](int64_t k, int64_t stride, int64_t pad, int64_t cin, int64_t cout,
                      int64_t size, bool projection) {
    convs.push_back(CnnConvLayer{k, stride, pad, cin, cout, size,
                                 CnnOutputSize(size, k, stride, pad), projection});
    return convs.back().out_size;
  };
  const int64_t f = shape.filter;
  int64_t size = add(7, 2, 3, 3, f, shape.image, false);
  size = CnnOutputSize(size, 3, 2, 1);  // max-pool
  int64_t channels = f;
  for (int64_t g = 0; g < kGroups; ++g) {
    const int64_t width = f << g;
    const int64_t group_stride = g == 0 ? 1 : 2;
    for (int64_t j = 0; j < shape.blocks[g]; ++j) {
      const int64_t stride = j == 0 ? group_stride : 1;
      const int64_t in_size = size;
      const int64_t in_channels = channels;
      int64_t out_channels = width;
      if (shape.block_fn == CnnBlockFn::kResidual) {
        size = add(3, stride, 1, in_channels, width, in_size, false);
        size = add(3, 1, 1, width, width, size, false);
      } else {
        out_channels = 4 * width;
        size = add(1, 1, 0, in_channels, width, in_size, false);
        size = add(3, stride, 1, width, width, size, false);
        size = add(1, 1, 0, width, out_channels, size, false);
      }
      if (j == 0) add(1, stride, 0, in_channels, out_channels, in_size, true);
      channels = out_channels;
    }
  }
  return convs;
}

int64_t CnnHeadFeatures(const CnnShape& shape) {
  const std::vector<CnnConvLayer> convs = CnnConvLayers(shape);
  const CnnConvLayer& tail = convs.back().projection ? convs[convs.size() - 2] : convs.back();
  const int64_t side = CnnOutputSize(tail.out_size, 7, 1, 0);
  return tail.out_channels * side * side;
}

CnnShape CnnShapeOf(const ModelSpec& spec) {
  CnnShape shape;
  shape.block_fn =
      spec.Option("block_fn") == "bottleneck" ? CnnBlockFn::kBottleneck : CnnBlockFn::kResidual;
  const std::string& blocks = spec.Option("blocks");
  if (blocks.empty()) {
    shape.blocks.fill(spec.Param("block"));
  } else {
    auto counts = ParseBlockCounts(blocks);
    if (!counts.ok()) {
      // ParseModelSpec checked the option: an invalid spec here is a broken invariant.
      std::fprintf(stderr, "CnnShapeOf: %s\n", std::string(counts.status().message()).c_str());
      std::abort();
    }
    shape.blocks = *counts;
  }
  shape.filter = spec.Param("filter");
  shape.image = spec.Param("image");
  shape.output = spec.Param("output");
  shape.batch = spec.Param("batch");
  return shape;
}

ModelSpec MakeCnnSpec(const CnnShape& shape, Precision precision, OptimizerKind optimizer) {
  ModelSpec spec;
  spec.family = "cnn";
  const bool uniform = std::all_of(shape.blocks.begin(), shape.blocks.end(),
                                   [&](int64_t n) { return n == shape.blocks[0]; });
  spec.params = {{"block", shape.blocks[0]},
                 {"filter", shape.filter},
                 {"image", shape.image},
                 {"output", shape.output},
                 {"batch", shape.batch}};
  spec.options = {
      {"block_fn", shape.block_fn == CnnBlockFn::kBottleneck ? "bottleneck" : "residual"},
      {"blocks", uniform ? std::string() : absl::StrJoin(shape.blocks, ",")}};
  spec.precision = precision;
  spec.optimizer = optimizer;
  return spec;
}

extern const FamilyDef kCnnFamily = {
    "cnn",
    "ResNet v1: stem, four groups of residual or bottleneck blocks, avgpool, Linear(output)",
    kCnnParams,
    kCnnOptions,
    kConvRoof,
    CheckCnn,
    CountCnn};

}  // namespace paradnn::model
