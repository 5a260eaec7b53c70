// The inception family (docs/models.md "Inception"): Inception-style blocks
// of `branches` parallel branches, the family whose operator width
// (model_counts.h OperatorWidth) grows with a parameter, so that inter-op
// pools have something to run side by side (issue 40). Counts walk the
// layers through the LayerLedger as the CNN family's do.
#include "model/families/inception.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "model/family.h"
#include "model/layer_ledger.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kInceptionParams[] = {
    {"batch", 1, kMaxBatch, true, "examples per training step"},
    {"block", 1, 64, true, "Inception blocks, one after another"},
    {"branches", 1, 16, true, "parallel branches per block (the model's operator width)"},
    kDevicesRule,
    {"filter", 1, 1024, true, "channels of each branch (a block has branches x filter)"},
    kHostsRule,
    {"image", 2, 4096, true, "height and width of the input images"},
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"output", 1, kMaxWidth, true, "classes (width of the last Linear)"},
    kOverlapRule,
};

constexpr OptionRule kInceptionOptions[] = {kMemoryFormatRule};

double Square(int64_t side) { return static_cast<double>(side * side); }

// A conv without bias of `cin` -> `cout` channels over a `side` x `side`
// map (stride 1, or the stem's stride 2 from the image of `in_side`).
void Conv(LayerLedger& l, int64_t kernel, int64_t cin, int64_t cout, int64_t in_side, int64_t side,
          bool stem) {
  const double p = static_cast<double>(kernel * kernel * cin * cout);
  l.Matmul(p * Square(side), static_cast<double>(cin) * Square(in_side),
           static_cast<double>(cout) * Square(side), p, /*bias=*/0, /*input_grad=*/!stem,
           /*first_use=*/true, stem ? l.input_element_bytes() : 0);
  if (kernel > 1) {
    l.Workspace(static_cast<double>(kernel * kernel * cin) * Square(side));  // im2col columns
  }
}

// BN and ReLU (in place) over `channels` x side x side.
void BnRelu(LayerLedger& l, int64_t channels, int64_t side) {
  const double elems = static_cast<double>(channels) * Square(side);
  l.Norm(kBatchNormCost, elems, static_cast<double>(channels));
  l.Elementwise(kReluInPlaceCost, elems);
}

WorkCounts CountInception(const ModelSpec& spec) {
  const InceptionShape s = InceptionShapeOf(spec);
  const int64_t c = InceptionChannels(s), f = s.filter, side = InceptionMapSide(s);
  LayerLedger l(spec);
  l.NetworkInput(3 * Square(s.image));
  Conv(l, 3, 3, c, s.image, side, /*stem=*/true);
  BnRelu(l, c, side);
  for (int64_t b = 0; b < s.block; ++b) {
    l.Fork(static_cast<double>(c) * Square(side), static_cast<int>(s.branches));
    l.BeginBranches();
    for (int64_t k = 0; k < s.branches; ++k) {
      if (k > 0) l.NextBranch();
      Conv(l, 1, c, f, side, side, false);
      BnRelu(l, f, side);
      Conv(l, 3, f, f, side, side, false);
      BnRelu(l, f, side);
    }
    l.EndBranches();
    l.Elementwise(kConcatCost, static_cast<double>(c) * Square(side));
  }
  // Global average pool: side² adds per output forward, as many spreads back.
  l.Pool(static_cast<double>(c) * Square(side), static_cast<double>(c), Square(side), Square(side));
  const double features = static_cast<double>(c), classes = static_cast<double>(s.output);
  l.Matmul(features * classes, features, classes, features * classes, classes,
           /*input_grad=*/true);
  l.Loss(classes, kLossForwardFlopsPerLogit, kLossBackwardFlopsPerLogit, /*fwd_passes=*/2,
         /*bwd_passes=*/2, /*kept=*/1);
  l.AddTargetBytes(l.batch() * kIndexElementBytes);  // int64 labels
  return l.Finish();
}

}  // namespace

InceptionShape InceptionShapeOf(const ModelSpec& spec) {
  InceptionShape s;
  s.block = spec.Param("block");
  s.branches = spec.Param("branches");
  s.filter = spec.Param("filter");
  s.image = spec.Param("image");
  s.output = spec.Param("output");
  s.batch = spec.Param("batch");
  return s;
}

ModelSpec MakeInceptionSpec(const InceptionShape& shape, Precision precision,
                            OptimizerKind optimizer) {
  ModelSpec spec;
  spec.family = "inception";
  spec.params = {{"block", shape.block}, {"branches", shape.branches}, {"filter", shape.filter},
                 {"image", shape.image}, {"output", shape.output},     {"batch", shape.batch}};
  spec.precision = precision;
  spec.optimizer = optimizer;
  return spec;
}

extern const FamilyDef kInceptionFamily = {
    "inception",
    "Inception-style: stem, blocks of `branches` parallel 1x1 -> 3x3 branches concatenated, "
    "global avgpool, Linear(output)",
    kInceptionParams,
    kInceptionOptions,
    kConvRoof,
    nullptr,
    CountInception,
};

}  // namespace paradnn::model
