#include "model/model_counts.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "model/families/fc.h"
#include "model/model_spec.h"

namespace paradnn::model {
namespace {

ModelSpec Fc(int64_t l, int64_t n, int64_t i, int64_t o, int64_t b,
             Precision precision = Precision::kFloat32,
             OptimizerKind optimizer = OptimizerKind::kRmsProp) {
  return MakeFcSpec(FcShape{l, n, i, o, b}, precision, optimizer);
}

TEST(ModelCountsTest, MatchesFormulasOverAGrid) {
  for (int64_t l : {1, 2, 4, 7, 128}) {
    for (int64_t n : {1, 32, 1024, 8192}) {
      for (int64_t i : {1, 2000, 8000}) {
        for (int64_t o : {1, 200, 1000}) {
          for (int64_t b : {1, 64, 16384}) {
            SCOPED_TRACE(testing::Message()
                         << "L=" << l << " N=" << n << " I=" << i << " O=" << o << " B=" << b);
            const v1::ModelCounts c = CountModel(Fc(l, n, i, o, b));
            const int64_t params = (i + 1) * n + (l - 1) * (n + 1) * n + (n + 1) * o;
            const int64_t macs = i * n + (l - 1) * n * n + n * o;
            EXPECT_EQ(c.params(), params);
            EXPECT_EQ(c.macs_per_example(), macs);
            EXPECT_DOUBLE_EQ(c.model_flops(), 6.0 * macs * b);
            // Forward 2 MAC, weight gradient 2 MAC, input gradient 2 MAC for
            // every layer but the first.
            const double fwd = 2.0 * macs * b;
            const double wgrad = 2.0 * macs * b;
            const double igrad = 2.0 * (macs - i * n) * b;
            EXPECT_DOUBLE_EQ(c.executed_flops(), fwd + wgrad + igrad);
            EXPECT_DOUBLE_EQ(c.executed_flops(), c.model_flops() - 2.0 * b * i * n);
            EXPECT_GT(c.other_flops(), 0);
            EXPECT_GT(c.bytes_per_step(), 0);
            EXPECT_GT(c.peak_memory_estimate_bytes(), c.activation_bytes());
          }
        }
      }
    }
  }
}

TEST(ModelCountsTest, PaperShapeKnownValues) {
  const v1::ModelCounts c = CountModel(Fc(4, 1024, 2000, 200, 256));
  EXPECT_EQ(c.params(), 5402824);
  EXPECT_EQ(c.macs_per_example(), 5398528);
  EXPECT_DOUBLE_EQ(c.model_flops(), 6.0 * 5398528 * 256);
}

// L=1, N=2, I=3, O=4, B=5, float32, SGD, counted by hand from the method in
// model_counts.h.
TEST(ModelCountsTest, BytesAndOtherFlopsByHand) {
  const WorkCounts w = CountWork(Fc(1, 2, 3, 4, 5, Precision::kFloat32, OptimizerKind::kSgd));
  EXPECT_EQ(w.counts.params(), 20);
  // Weights: forward 8*4 + 12*4; input gradient of layer 2 reads W2 (8*4).
  EXPECT_DOUBLE_EQ(w.breakdown.weight_bytes, 112);
  EXPECT_DOUBLE_EQ(w.breakdown.gradient_bytes, 80);
  EXPECT_DOUBLE_EQ(w.breakdown.optimizer_bytes, 3 * 20 * 4);
  // Forward: layer 1 60+40, ReLU 80, layer 2 40+80, loss 160.
  EXPECT_DOUBLE_EQ(w.breakdown.activation_fwd_bytes, 460);
  // Backward: loss 160; layer 2 dW 120, db 80, dX 120; ReLU 120; layer 1 dW 100, db 40.
  EXPECT_DOUBLE_EQ(w.breakdown.activation_bwd_bytes, 740);
  EXPECT_DOUBLE_EQ(w.counts.bytes_per_step(), 112 + 80 + 240 + 460 + 740);
  EXPECT_DOUBLE_EQ(w.counts.activation_bytes(), 60 + 80 + 160);
  // Weights + gradients, activations, labels, two activation gradients of width 4.
  EXPECT_DOUBLE_EQ(w.counts.peak_memory_estimate_bytes(), 160 + 300 + 40 + 160);
  // Bias add + bias grad 10 + 20 each, ReLU fwd/bwd 10 each; loss 9 per logit; SGD 2.
  EXPECT_DOUBLE_EQ(w.breakdown.bias_relu_flops, 80);
  EXPECT_DOUBLE_EQ(w.breakdown.loss_flops, 20 * 9);
  EXPECT_DOUBLE_EQ(w.breakdown.optimizer_flops, 40);
  EXPECT_DOUBLE_EQ(w.counts.other_flops(), 80 + 180 + 40);
}

TEST(ModelCountsTest, SixteenBitHalvesEveryByteCount) {
  const v1::ModelCounts f32 = CountModel(Fc(4, 1024, 2000, 200, 256, Precision::kFloat32));
  const v1::ModelCounts bf16 = CountModel(Fc(4, 1024, 2000, 200, 256, Precision::kBFloat16));
  EXPECT_DOUBLE_EQ(bf16.bytes_per_step() * 2, f32.bytes_per_step());
  EXPECT_DOUBLE_EQ(bf16.activation_bytes() * 2, f32.activation_bytes());
  EXPECT_DOUBLE_EQ(bf16.model_flops(), f32.model_flops());
  const v1::ModelCounts mixed = CountModel(Fc(4, 1024, 2000, 200, 256, Precision::kMixedBf16));
  EXPECT_GT(mixed.bytes_per_step(), bf16.bytes_per_step());
  EXPECT_GT(mixed.peak_memory_estimate_bytes(), bf16.peak_memory_estimate_bytes());
}

TEST(ModelCountsTest, OptimizerStateDrivesOptimizerBytes) {
  const ModelSpec base = Fc(2, 64, 100, 10, 8);
  // Passes per parameter: fused (read weight, gradient, state; write weight,
  // state) and LibTorch's kernel by kernel.
  for (auto [kind, passes, per_operation_passes, states] :
       std::vector<std::tuple<OptimizerKind, int, int, int>>{{OptimizerKind::kSgd, 3, 3, 0},
                                                             {OptimizerKind::kMomentum, 5, 8, 1},
                                                             {OptimizerKind::kRmsProp, 7, 18, 2}}) {
    ModelSpec spec = base;
    spec.optimizer = kind;
    const WorkCounts w = CountWork(spec);
    EXPECT_DOUBLE_EQ(w.breakdown.optimizer_bytes, passes * 4.0 * w.counts.params());
    v1::ModelCounts per_operation = w.counts;
    CountOptimizerUpdate(spec, OptimizerUpdate::kPerOperation, &per_operation);
    EXPECT_DOUBLE_EQ(per_operation.bytes_per_step() - w.counts.bytes_per_step(),
                     (per_operation_passes - passes) * 4.0 * w.counts.params());
    v1::ModelCounts fused = w.counts;
    CountOptimizerUpdate(spec, OptimizerUpdate::kFused, &fused);
    EXPECT_DOUBLE_EQ(fused.bytes_per_step(), w.counts.bytes_per_step());
    // Weights, gradients and optimizer state are all resident.
    ModelSpec sgd = spec;
    sgd.optimizer = OptimizerKind::kSgd;
    EXPECT_DOUBLE_EQ(
        w.counts.peak_memory_estimate_bytes() - CountWork(sgd).counts.peak_memory_estimate_bytes(),
        states * 4.0 * w.counts.params());
    EXPECT_DOUBLE_EQ(w.breakdown.optimizer_flops,
                     OptimizerFlopsPerParam(kind) * static_cast<double>(w.counts.params()));
  }
}

}  // namespace
}  // namespace paradnn::model
