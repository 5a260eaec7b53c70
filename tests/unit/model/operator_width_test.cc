// Operator width (model_counts.h OperatorWidth): heavy operators over the
// longest chain of them, as Wang et al. (TACO 2021) compute a model's
// average width; the ledger's branches, and every family's figure counted
// by hand from its layers.
#include <gtest/gtest.h>

#include "model/families/cnn.h"
#include "model/families/fc.h"
#include "model/families/retinanet.h"
#include "model/families/rnn.h"
#include "model/families/transformer.h"
#include "model/families/vision.h"
#include "model/layer_ledger.h"
#include "model/model_counts.h"

namespace paradnn::model {
namespace {

void OneMatmul(LayerLedger& l) { l.Matmul(16, 4, 4, 16, 0, /*input_grad=*/true); }

LayerLedger Ledger() { return LayerLedger(MakeFcSpec(FcShape{1, 4, 4, 4, 8})); }

TEST(OperatorWidthTest, OperatorsInARowHaveWidthOne) {
  LayerLedger l = Ledger();
  for (int i = 0; i < 5; ++i) OneMatmul(l);
  l.Elementwise(kReluCost, 4);  // not a heavy operator
  EXPECT_EQ(l.width().heavy_ops, 5);
  EXPECT_EQ(l.width().longest_path, 5);
  EXPECT_DOUBLE_EQ(l.width().average(), 1.0);
  EXPECT_DOUBLE_EQ(OperatorWidth{}.average(), 0.0);  // no heavy operators
}

TEST(OperatorWidthTest, BranchesCountTheirLongestOnTheChain) {
  LayerLedger l = Ledger();
  OneMatmul(l);
  l.BeginBranches();  // three branches of 3, 1 and 2 operators
  for (int i = 0; i < 3; ++i) OneMatmul(l);
  l.NextBranch();
  OneMatmul(l);
  l.NextBranch();
  OneMatmul(l);
  OneMatmul(l);
  l.EndBranches();
  OneMatmul(l);
  EXPECT_EQ(l.width().heavy_ops, 8);
  EXPECT_EQ(l.width().longest_path, 5);  // 1 + 3 + 1
  EXPECT_DOUBLE_EQ(l.Finish().width.average(), 8.0 / 5.0);
}

TEST(OperatorWidthTest, BranchesNestAndAnOpenRegionCountsAsClosed) {
  LayerLedger l = Ledger();
  l.BeginBranches();
  OneMatmul(l);
  l.BeginBranches();  // inside the first branch: 2 beside 1
  OneMatmul(l);
  OneMatmul(l);
  l.NextBranch();
  OneMatmul(l);
  l.EndBranches();
  l.NextBranch();  // the second outer branch: 2
  OneMatmul(l);
  OneMatmul(l);
  EXPECT_EQ(l.width().heavy_ops, 6);
  EXPECT_EQ(l.width().longest_path, 3);  // max(1 + 2, 2), the outer region still open
  l.EndBranches();
  EXPECT_EQ(l.width().longest_path, 3);
}

TEST(OperatorWidthTest, ARecurrenceIsItsStepsInARow) {
  LayerLedger l = Ledger();
  l.RecurrentMatmul(7, 16, 4, 4, 16, 4);
  EXPECT_EQ(l.width().heavy_ops, 7);
  EXPECT_EQ(l.width().longest_path, 7);
}

OperatorWidth WidthOf(const ModelSpec& spec) { return CountWork(spec).width; }

TEST(OperatorWidthTest, FamiliesWithoutBranchesHaveWidthOne) {
  // FC of 3 hidden layers: input -> 1 -> 2 -> 3 -> output, 4 in a row.
  const OperatorWidth fc = WidthOf(MakeFcSpec(FcShape{3, 64, 32, 10, 8}));
  EXPECT_EQ(fc.heavy_ops, 4);
  EXPECT_DOUBLE_EQ(fc.average(), 1.0);
  // LSTM, 2 layers of 20 steps: each layer's input matmul then its steps.
  const OperatorWidth rnn = WidthOf(MakeRnnSpec(RnnShape{RnnCell::kLstm, 2, 32, 20, 100, 8}));
  EXPECT_GT(rnn.heavy_ops, 40);
  EXPECT_DOUBLE_EQ(rnn.average(), 1.0);
  EXPECT_DOUBLE_EQ(
      WidthOf(MakeVisionSpec(VisionArch::kMobileNetV1, VisionShape{224, 1000, 8})).average(), 1.0);
}

TEST(OperatorWidthTest, ResidualBlocksRunTheirProjectionBesideTheMainPath) {
  // One block per group, each with a projection: stem, 4 x (2 + 1), head.
  CnnShape residual{CnnBlockFn::kResidual, {1, 1, 1, 1}, 16, 64, 10, 8};
  const OperatorWidth r = WidthOf(MakeCnnSpec(residual));
  EXPECT_EQ(r.heavy_ops, 14);
  EXPECT_EQ(r.longest_path, 10);
  CnnShape bottleneck = residual;
  bottleneck.block_fn = CnnBlockFn::kBottleneck;
  const OperatorWidth b = WidthOf(MakeCnnSpec(bottleneck));
  EXPECT_EQ(b.heavy_ops, 18);
  EXPECT_EQ(b.longest_path, 14);
  // ResNet-50: stem, 16 blocks of 3 convs, 4 downsamples beside them, fc.
  const OperatorWidth resnet =
      WidthOf(MakeVisionSpec(VisionArch::kResNet50, VisionShape{224, 1000, 8}));
  EXPECT_EQ(resnet.heavy_ops, 54);
  EXPECT_EQ(resnet.longest_path, 50);
}

TEST(OperatorWidthTest, BranchingModelsAreWider) {
  // SqueezeNet 1.0: conv1, 8 fire modules (squeeze, then two expands side
  // by side), the classifier conv.
  const OperatorWidth squeeze =
      WidthOf(MakeVisionSpec(VisionArch::kSqueezeNet10, VisionShape{224, 1000, 8}));
  EXPECT_EQ(squeeze.heavy_ops, 26);
  EXPECT_EQ(squeeze.longest_path, 18);
  // Transformer base: the two embeddings side by side; per attention Q, K
  // and V side by side, then Q·Kᵀ, P·V and the output projection; 6
  // encoder layers (attention, 2 FFN matmuls), 6 decoder layers (two
  // attentions, FFN), the tied output projection.
  const OperatorWidth transformer = WidthOf(MakeTransformerSpec(TransformerShape{8, 32, 1000}));
  EXPECT_EQ(transformer.heavy_ops, 2 + 6 * 8 + 6 * 14 + 1);
  EXPECT_EQ(transformer.longest_path, 1 + 6 * 6 + 6 * 10 + 1);
  // RetinaNet: stem, ResNet-50's 52 convs (downsamples beside the main
  // path), the FPN's 8 as one chain, then 10 subnets of 5 convs side by side.
  const OperatorWidth retina = WidthOf(MakeRetinaNetSpec(RetinaNetShape{2, 256, 80}));
  EXPECT_EQ(retina.heavy_ops, 1 + 52 + 8 + 50);
  EXPECT_EQ(retina.longest_path, 1 + 48 + 8 + 5);
}

}  // namespace
}  // namespace paradnn::model
