#include "worker/runner/models/fc.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/model_counts.h"
#include "tests/unit/worker/runner/train_losses.h"
#include "worker/runner/outcome.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CountModel;
using model::FcShape;
using model::MakeFcSpec;
using model::ModelSpec;
using model::OptimizerKind;
using model::OptimizerName;
using model::Precision;
namespace {

ModelSpec Tiny(Precision precision, OptimizerKind optimizer = OptimizerKind::kRmsProp) {
  return MakeFcSpec(FcShape{/*layer=*/2, /*node=*/16, /*input=*/32, /*output=*/4, /*batch=*/8},
                    precision, optimizer);
}

TEST(FcModelTest, ParameterCountMatchesFormula) {
  for (const FcShape& shape :
       {FcShape{2, 16, 32, 4, 8}, FcShape{1, 3, 5, 7, 1}, FcShape{4, 64, 100, 10, 2}}) {
    FcNet net(shape);
    const ModelSpec spec = MakeFcSpec(shape);
    const int64_t formula = (shape.input + 1) * shape.node +
                            (shape.layer - 1) * (shape.node + 1) * shape.node +
                            (shape.node + 1) * shape.output;
    EXPECT_EQ(CountParameters(*net), formula);
    EXPECT_EQ(CountParameters(*net), CountModel(spec).params());
    // layer hidden Linear layers + the head, each with weight and bias.
    EXPECT_EQ(net->parameters().size(), static_cast<size_t>(2 * (shape.layer + 1)));
  }
}

TEST(FcModelTest, ShapesAndDtypes) {
  Trainer trainer(Tiny(Precision::kBFloat16), 1, ContextForPrecision(Precision::kBFloat16));
  for (const auto& p : trainer.parameters()) EXPECT_EQ(p.scalar_type(), torch::kBFloat16);
  torch::Tensor loss = trainer.Step();
  EXPECT_EQ(loss.dim(), 0);
  for (const auto& p : trainer.parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().scalar_type(), torch::kBFloat16);
  }
}

TEST(FcModelTest, LossFallsInFloat32) {
  const std::vector<double> losses = TrainLosses(Tiny(Precision::kFloat32), 20);
  EXPECT_NEAR(losses.front(), std::log(4.0), 0.5);  // near-uniform predictions at first
  EXPECT_LT(losses.back(), 0.8 * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST(FcModelTest, LossFallsInBFloat16) {
  const std::vector<double> losses = TrainLosses(Tiny(Precision::kBFloat16), 20);
  EXPECT_LT(losses.back(), 0.8 * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST(FcModelTest, LossFallsWithEveryOptimizer) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum}) {
    const std::vector<double> losses = TrainLosses(Tiny(Precision::kFloat32, kind), 20);
    EXPECT_LT(losses.back(), losses.front()) << OptimizerName(kind);
  }
}

TEST(FcModelTest, MixedBFloat16KeepsFloat32MasterWeights) {
  const std::vector<double> losses = TrainLossesWithFloat32Masters(Tiny(Precision::kMixedBf16), 20);
  EXPECT_LT(losses.back(), 0.8 * losses.front());
}

// The harness classifies what LibTorch's CPU allocator actually says.
TEST(FcModelTest, AllocationFailureMessageIsClassifiedOom) {
  try {
    torch::Tensor huge = torch::empty({int64_t{1} << 46}, torch::kFloat32);  // 256 TiB
    FAIL() << "allocated " << huge.numel() << " floats";
  } catch (const c10::Error& e) {
    EXPECT_EQ(ClassifyModelError(e.what_without_backtrace()), v1::OOM)
        << e.what_without_backtrace();
  }
}

// LibTorch 1.13 has no float16 matmul on the CPU; whatever it says must
// read as UNSUPPORTED, and a LibTorch that has the kernel simply trains.
TEST(FcModelTest, Float16EitherTrainsOrIsUnsupported) {
  try {
    Trainer trainer(Tiny(Precision::kFloat16), 1, ContextForPrecision(Precision::kFloat16));
    EXPECT_TRUE(std::isfinite(trainer.Step().item<double>()));
  } catch (const c10::Error& e) {
    EXPECT_EQ(ClassifyModelError(e.what_without_backtrace()), v1::UNSUPPORTED)
        << e.what_without_backtrace();
  }
}

TEST(FcModelTest, SameSeedSameLosses) {
  EXPECT_EQ(TrainLosses(Tiny(Precision::kFloat32), 3), TrainLosses(Tiny(Precision::kFloat32), 3));
}

}  // namespace
}  // namespace paradnn::runner
