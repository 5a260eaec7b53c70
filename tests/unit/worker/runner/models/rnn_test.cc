#include "worker/runner/models/rnn.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "model/model_counts.h"
#include "tests/unit/worker/runner/train_losses.h"
#include "worker/runner/outcome.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CountModel;
using model::MakeRnnSpec;
using model::ModelSpec;
using model::OptimizerKind;
using model::OptimizerName;
using model::Precision;
using model::PrecisionName;
using model::RnnCell;
using model::RnnCellName;
using model::RnnGates;
using model::RnnShape;
namespace {

constexpr RnnCell kCells[] = {RnnCell::kRnn, RnnCell::kLstm, RnnCell::kGru};

// One layer: with RMSProp's eps 1.0 a stacked LSTM needs more than 20 steps
// to move far (StackedLayersLearn covers two layers with a milder bar).
ModelSpec Tiny(RnnCell cell, Precision precision) {
  return MakeRnnSpec(RnnShape{cell, /*layer=*/1, /*embed=*/32, /*length=*/8, /*vocab=*/16,
                              /*batch=*/2},
                     precision);
}

TEST(RnnModelTest, ParameterCountMatchesFormulaAndCounts) {
  for (RnnCell cell : kCells) {
    for (const auto& [layer, embed, vocab] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 1, 2}, {2, 16, 8}, {3, 5, 37}, {1, 64, 300}}) {
      const RnnShape shape{cell, layer, embed, 4, vocab, 2};
      RnnNet net(shape);
      const int64_t g = RnnGates(cell);
      const int64_t formula =
          vocab * embed + layer * g * (2 * embed * embed + 2 * embed) + embed * vocab + vocab;
      EXPECT_EQ(CountParameters(*net), formula)
          << RnnCellName(cell) << " " << layer << "x" << embed;
      EXPECT_EQ(CountParameters(*net), CountModel(MakeRnnSpec(shape)).params());
      // embedding + 4 tensors per layer (W_ih, W_hh, b_ih, b_hh) + head weight and bias.
      EXPECT_EQ(net->parameters().size(), static_cast<size_t>(1 + 4 * layer + 2));
    }
  }
}

// MACs from the shapes of the module LibTorch actually built (every 2-D
// weight but the embedding table is a matmul applied once per time step),
// against the analytic count.
TEST(RnnModelTest, MacsMatchTheBuiltModulesMatrices) {
  for (RnnCell cell : kCells) {
    const RnnShape shape{cell, 3, 12, 7, 20, 2};
    RnnNet net(shape);
    int64_t per_step = 0;
    for (const auto& item : net->named_parameters()) {
      if (item.value().dim() != 2 || absl::StrContains(item.key(), "embedding")) continue;
      per_step += item.value().size(0) * item.value().size(1);
    }
    EXPECT_EQ(CountModel(MakeRnnSpec(shape)).macs_per_example(), shape.length * per_step)
        << RnnCellName(cell);
  }
}

TEST(RnnModelTest, ForwardShapesAndDtypes) {
  for (RnnCell cell : kCells) {
    const ModelSpec spec = Tiny(cell, Precision::kBFloat16);
    Trainer trainer(spec, 1, ContextForPrecision(spec.precision));
    for (const auto& p : trainer.parameters()) EXPECT_EQ(p.scalar_type(), torch::kBFloat16);
    const torch::Tensor loss = trainer.Step();
    EXPECT_EQ(loss.dim(), 0);
    for (const auto& p : trainer.parameters()) {
      ASSERT_TRUE(p.grad().defined()) << RnnCellName(cell);
      EXPECT_EQ(p.grad().scalar_type(), torch::kBFloat16);
    }
    RnnNet net(RnnShape{cell, 2, 16, 6, 8, 4});
    const torch::Tensor tokens = torch::randint(0, 8, {6, 4}, torch::kLong);
    EXPECT_EQ(net->forward(tokens).sizes(), (std::vector<int64_t>{6, 4, 8}));
  }
}

TEST(RnnModelTest, EveryCellLearnsInFloat32) {
  for (RnnCell cell : kCells) {
    const std::vector<double> losses = TrainLosses(Tiny(cell, Precision::kFloat32), 20);
    EXPECT_NEAR(losses.front(), std::log(16.0), 0.7) << RnnCellName(cell);
    EXPECT_LT(losses.back(), 0.8 * losses.front())
        << RnnCellName(cell) << ": " << losses.front() << " -> " << losses.back();
  }
}

TEST(RnnModelTest, EveryCellLearnsInBFloat16) {
  for (RnnCell cell : kCells) {
    const std::vector<double> losses = TrainLosses(Tiny(cell, Precision::kBFloat16), 20);
    EXPECT_TRUE(std::isfinite(losses.back())) << RnnCellName(cell);
    EXPECT_LT(losses.back(), 0.8 * losses.front())
        << RnnCellName(cell) << ": " << losses.front() << " -> " << losses.back();
  }
}

TEST(RnnModelTest, EveryCellLearnsInMixedBFloat16WithFloat32Masters) {
  for (RnnCell cell : kCells) {
    SCOPED_TRACE(RnnCellName(cell));
    const std::vector<double> losses =
        TrainLossesWithFloat32Masters(Tiny(cell, Precision::kMixedBf16), 20);
    EXPECT_LT(losses.back(), 0.8 * losses.front())
        << RnnCellName(cell) << ": " << losses.front() << " -> " << losses.back();
  }
}

TEST(RnnModelTest, StackedLayersLearn) {
  for (RnnCell cell : kCells) {
    const std::vector<double> losses =
        TrainLosses(MakeRnnSpec(RnnShape{cell, 2, 64, 4, 8, 2}, Precision::kFloat32), 20);
    EXPECT_LT(losses.back(), 0.9 * losses.front())
        << RnnCellName(cell) << ": " << losses.front() << " -> " << losses.back();
  }
}

TEST(RnnModelTest, LearnsWithEveryOptimizer) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum}) {
    ModelSpec spec = Tiny(RnnCell::kLstm, Precision::kFloat32);
    spec.optimizer = kind;
    const std::vector<double> losses = TrainLosses(spec, 20);
    EXPECT_LT(losses.back(), losses.front()) << OptimizerName(kind);
  }
}

// float16 on LibTorch 1.13's CPU: either it trains or the error reads as
// UNSUPPORTED, never as a crash or an unclassified ERROR.
TEST(RnnModelTest, Float16EitherTrainsOrIsUnsupported) {
  for (Precision precision : {Precision::kFloat16, Precision::kMixedFp16}) {
    for (RnnCell cell : kCells) {
      const ModelSpec spec = Tiny(cell, precision);
      try {
        Trainer trainer(spec, 1, ContextForPrecision(spec.precision));
        EXPECT_TRUE(std::isfinite(trainer.Step().item<double>()));
      } catch (const c10::Error& e) {
        EXPECT_EQ(ClassifyModelError(e.what_without_backtrace()), v1::UNSUPPORTED)
            << PrecisionName(precision) << " " << RnnCellName(cell) << ": "
            << e.what_without_backtrace();
      }
    }
  }
}

TEST(RnnModelTest, SameSeedSameLosses) {
  EXPECT_EQ(TrainLosses(Tiny(RnnCell::kGru, Precision::kFloat32), 3),
            TrainLosses(Tiny(RnnCell::kGru, Precision::kFloat32), 3));
}

}  // namespace
}  // namespace paradnn::runner
