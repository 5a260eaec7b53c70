#include "worker/runner/models/retinanet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/model_counts.h"
#include "tests/unit/worker/runner/train_losses.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CountModel;
using model::MakeRetinaNetSpec;
using model::ModelSpec;
using model::OptimizerKind;
using model::Precision;
using model::RetinaNetAnchorsPerImage;
using model::RetinaNetParams;
namespace {

TEST(RetinaNetModelTest, ParametersEqualFormulaAndCount) {
  for (int64_t classes : {1, 3, 80}) {
    RetinaNet net(classes);
    EXPECT_EQ(CountParameters(*net), RetinaNetParams(classes)) << classes;
    EXPECT_EQ(CountParameters(*net), CountModel(MakeRetinaNetSpec({1, 64, classes})).params());
  }
}

TEST(RetinaNetModelTest, OutputsCoverEveryAnchorAndStartAtThePrior) {
  torch::manual_seed(2);
  RetinaNet net(3);
  torch::NoGradGuard no_grad;
  auto [classes, boxes] = net->forward(torch::rand({2, 3, 96, 96}));
  const int64_t anchors = RetinaNetAnchorsPerImage(96);  // 9·(144+36+9+4+1)
  EXPECT_EQ(anchors, 9 * 194);
  ASSERT_EQ(classes.sizes(), (std::vector<int64_t>{2, anchors, 3}));
  ASSERT_EQ(boxes.sizes(), (std::vector<int64_t>{2, anchors, 4}));
  // Class bias prior π = 0.01: every probability starts near 1 %.
  const double mean_p = torch::sigmoid(classes).mean().item<double>();
  EXPECT_NEAR(mean_p, 0.01, 0.005);
}

TEST(RetinaNetModelTest, FocalLossMatchesDefinition) {
  auto logits = torch::tensor({{2.0, -1.0}, {-3.0, 0.5}}, torch::kDouble);
  auto target = torch::tensor({{1.0, 0.0}, {0.0, 1.0}}, torch::kDouble);
  double expected = 0;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      const double p = 1 / (1 + std::exp(-logits[i][j].item<double>()));
      const bool t = target[i][j].item<double>() > 0.5;
      const double pt = t ? p : 1 - p;
      const double alpha = t ? 0.25 : 0.75;
      expected += -alpha * (1 - pt) * (1 - pt) * std::log(pt);
    }
  }
  EXPECT_NEAR(SigmoidFocalLossSum(logits, target).item<double>(), expected, 1e-12);
}

// Learning: batch 2 (at batch 1 the training-mode BN of stage 4 sees only
// 2×2 values per channel at image 64 and every optimizer diverges to NaN),
// plain SGD lr 0.1: ParaDnn's RMSProp (lr 0.1, momentum 0.9, eps 1) diverges
// on this from-scratch detector (loss ~1e16 within 20 steps, at image 64 and
// 128). Even plain SGD at lr 0.1 falls steadily for ~15 steps (2.91 → 2.17
// in float32) and then spikes (seed 1: 111 at step 20), so the check covers
// 15 steps and takes the best of the last 5 (spikes allowed). The cost of a step, which the runner
// measures, does not depend on it.
//
// The 16-bit cases take image 96: at image 64, P6 is 1x1 and P7's 3x3
// stride-2 convolution reads that single pixel, and oneDNN (LibTorch 1.13,
// Debian) computes that convolution's bfloat16 weight gradient wrongly -- in
// a quarter of random trials non-finite, on AVX-512 BF16 and AMX alike --
// so the loss turns NaN after a few steps. At image 96 P6 is 2x2.
// (The runner flags a job whose loss turns non-finite.)
constexpr int64_t kBFloat16Image = 96;

ModelSpec Learnable(Precision precision) {
  const bool bf16 = precision != Precision::kFloat32;
  return MakeRetinaNetSpec({/*batch=*/2, /*image=*/bf16 ? kBFloat16Image : 64, /*output=*/3},
                           precision, OptimizerKind::kSgd);
}

TEST(RetinaNetModelTest, LossFallsInFloat32) {
  const std::vector<double> losses = TrainLosses(Learnable(Precision::kFloat32), 15);
  EXPECT_TRUE(std::isfinite(losses.front()));
  for (double loss : losses) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_LT(*std::min_element(losses.end() - 5, losses.end()), 0.9 * losses.front())
      << ::testing::PrintToString(losses);
}

// Pure bfloat16 learns more slowly than float32: SGD's small updates round
// away in 8-bit mantissas, and the loss itself moves in steps of 1/64 near 3.
// On an AMD EPYC (AVX-512 BF16, no AMX) the 15 steps ran 2.94, 2.92, 2.91,
// 2.88, 2.86, 2.78, 2.77, 2.88, then 2.80-2.88: the best of the last 5 of
// the first 8 is 5.9 % under the first; on the Intel Xeons (AMX) over 10 %.
// 3 % is still several loss quanta, which a step that learns nothing does
// not reach. 8 steps, not more: LibTorch 1.13 runs these bfloat16
// convolutions with its slow reference kernels (~10 s a step on one core).
TEST(RetinaNetModelTest, LossFallsInBFloat16) {
  const std::vector<double> losses = TrainLosses(Learnable(Precision::kBFloat16), 8);
  for (double loss : losses) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_LT(*std::min_element(losses.end() - 5, losses.end()), 0.97 * losses.front())
      << ::testing::PrintToString(losses);
}

TEST(RetinaNetModelTest, MixedBFloat16Trains) {
  const ModelSpec spec = Learnable(Precision::kMixedBf16);
  Trainer trainer(spec, 1, ContextForPrecision(spec.precision));
  // 2.944, 2.927, 2.908, 2.884 on the EPYC: 4 steps show the fall.
  const std::vector<double> losses = StepLosses(trainer, 4);
  for (const auto& p : trainer.parameters()) EXPECT_EQ(p.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(std::isfinite(losses.back()));
  EXPECT_LT(losses.back(), losses.front());
}

}  // namespace
}  // namespace paradnn::runner
