// The CNN family in LibTorch: built parameters and MACs (from the real
// tensor shapes) against the analytic counts, and training in every
// precision.
#include "worker/runner/models/cnn.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/model_counts.h"
#include "tests/unit/worker/runner/train_losses.h"
#include "worker/runner/outcome.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CnnBlockFn;
using model::CnnConvLayers;
using model::CnnHeadFeatures;
using model::CnnShape;
using model::CountModel;
using model::DescribeSpec;
using model::MakeCnnSpec;
using model::ModelSpec;
using model::OptimizerKind;
using model::OptimizerName;
using model::Precision;
using model::PrecisionName;
namespace {

// The smallest network the head accepts, with a few classes to memorize.
CnnShape Tiny(CnnBlockFn fn = CnnBlockFn::kResidual) {
  return CnnShape{fn, {1, 1, 1, 1}, /*filter=*/4, /*image=*/193, /*output=*/4, /*batch=*/4};
}

std::vector<CnnShape> Grid() {
  std::vector<CnnShape> shapes;
  for (CnnBlockFn fn : {CnnBlockFn::kResidual, CnnBlockFn::kBottleneck}) {
    shapes.push_back({fn, {1, 1, 1, 1}, 4, 193, 4, 1});
    shapes.push_back({fn, {2, 1, 3, 1}, 3, 250, 10, 1});
    shapes.push_back({fn, {1, 2, 1, 2}, 8, 300, 7, 1});
  }
  return shapes;
}

TEST(CnnModelTest, BuiltParametersMatchCounts) {
  for (const CnnShape& shape : Grid()) {
    CnnNet net(shape);
    EXPECT_EQ(CountParameters(*net), CountModel(MakeCnnSpec(shape)).params())
        << DescribeSpec(MakeCnnSpec(shape));
    // BN running statistics are buffers, not trainable parameters.
    int64_t buffers = 0;
    for (const auto& b : net->buffers()) buffers += b.numel();
    EXPECT_GT(buffers, 0);
  }
}

TEST(CnnModelTest, BuiltResNet50Has25557032Parameters) {
  CnnNet net(CnnShape{CnnBlockFn::kBottleneck, {3, 4, 6, 3}, 64, 224, 1000, 1});
  EXPECT_EQ(CountParameters(*net), 25557032);
}

// MACs from the shapes the convs actually see: k^2 * Cin * Cout * Hout * Wout
// per example, plus the head's in * out.
TEST(CnnModelTest, MacsFromRealShapesMatchCounts) {
  torch::NoGradGuard no_grad;
  for (const CnnShape& shape : Grid()) {
    CnnNet net(shape);
    net->train();
    const int64_t batch = 2;
    int64_t conv_macs = 0;
    int convs = 0;
    net->set_conv_observer(
        [&](const torch::nn::Conv2dImpl& conv, const torch::Tensor& in, const torch::Tensor& out) {
          const auto& w = conv.weight;  // [Cout, Cin, kh, kw]
          EXPECT_EQ(in.size(1), w.size(1));
          EXPECT_EQ(out.size(1), w.size(0));
          conv_macs += out.size(0) * w.size(2) * w.size(3) * in.size(1) * out.size(1) *
                       out.size(2) * out.size(3);
          ++convs;
        });
    const torch::Tensor logits = net->forward(torch::rand({batch, 3, shape.image, shape.image}));
    ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{batch, shape.output}));
    int64_t head_in = 0;
    for (const auto& item : net->named_parameters()) {
      if (item.key() == "head.weight") head_in = item.value().size(1);
    }
    ASSERT_GT(head_in, 0);
    const int64_t macs = conv_macs / batch + head_in * shape.output;
    EXPECT_EQ(macs, CountModel(MakeCnnSpec(shape)).macs_per_example())
        << DescribeSpec(MakeCnnSpec(shape));
    EXPECT_EQ(convs, static_cast<int>(CnnConvLayers(shape).size()));
    EXPECT_EQ(head_in, CnnHeadFeatures(shape));
  }
}

TEST(CnnModelTest, InputsAreNchwInTheWeightDtype) {
  const ModelSpec spec = MakeCnnSpec(Tiny(), Precision::kBFloat16);
  Trainer trainer(spec, 1, ContextForPrecision(spec.precision));
  for (const auto& p : trainer.parameters()) EXPECT_EQ(p.scalar_type(), torch::kBFloat16);
  torch::Tensor loss = trainer.Step();
  EXPECT_EQ(loss.dim(), 0);
  for (const auto& p : trainer.parameters()) ASSERT_TRUE(p.grad().defined());
}

TEST(CnnModelTest, LossFallsInFloat32) {
  for (CnnBlockFn fn : {CnnBlockFn::kResidual, CnnBlockFn::kBottleneck}) {
    const std::vector<double> losses = TrainLosses(MakeCnnSpec(Tiny(fn), Precision::kFloat32), 20);
    EXPECT_LT(losses.back(), 0.8 * losses.front()) << losses.front() << " -> " << losses.back();
  }
}

TEST(CnnModelTest, LossFallsInBFloat16) {
  for (CnnBlockFn fn : {CnnBlockFn::kResidual, CnnBlockFn::kBottleneck}) {
    const std::vector<double> losses = TrainLosses(MakeCnnSpec(Tiny(fn), Precision::kBFloat16), 20);
    EXPECT_LT(losses.back(), 0.8 * losses.front()) << losses.front() << " -> " << losses.back();
  }
}

TEST(CnnModelTest, LossFallsInMixedBFloat16WithFloat32MasterWeights) {
  const std::vector<double> losses = TrainLossesWithFloat32Masters(
      MakeCnnSpec(Tiny(CnnBlockFn::kBottleneck), Precision::kMixedBf16), 20);
  EXPECT_LT(losses.back(), 0.8 * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST(CnnModelTest, LossFallsWithEveryOptimizer) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum}) {
    const std::vector<double> losses =
        TrainLosses(MakeCnnSpec(Tiny(), Precision::kFloat32, kind), 20);
    EXPECT_LT(losses.back(), losses.front()) << OptimizerName(kind);
  }
}

// LibTorch 1.13's CPU lacks float16 conv kernels and float16 autocast:
// whatever it says must read as UNSUPPORTED; a LibTorch that has them trains.
TEST(CnnModelTest, Float16EitherTrainsOrIsUnsupported) {
  for (Precision precision : {Precision::kFloat16, Precision::kMixedFp16}) {
    const ModelSpec spec = MakeCnnSpec(Tiny(), precision);
    try {
      Trainer trainer(spec, 1, ContextForPrecision(spec.precision));
      EXPECT_TRUE(std::isfinite(trainer.Step().item<double>())) << PrecisionName(precision);
    } catch (const c10::Error& e) {
      EXPECT_EQ(ClassifyModelError(e.what_without_backtrace()), v1::UNSUPPORTED)
          << PrecisionName(precision) << ": " << e.what_without_backtrace();
    }
  }
}

TEST(CnnModelTest, SameSeedSameLosses) {
  const ModelSpec spec = MakeCnnSpec(Tiny(), Precision::kFloat32);
  EXPECT_EQ(TrainLosses(spec, 3), TrainLosses(spec, 3));
}

}  // namespace
}  // namespace paradnn::runner
