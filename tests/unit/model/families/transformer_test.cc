// Torch-free checks of the transformer and retinanet families' rules and
// analytic counts against independent hand counts.
#include "model/families/transformer.h"

#include <gtest/gtest.h>

#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::model {
namespace {

TEST(TransformerFamilyTest, ParamsMatchClosedFormAndPublishedBase) {
  // Base with the paper's 37000-token shared vocabulary: 63.08 M, against the
  // published 65 M (rounded) — within the 63–65 M implementations report.
  EXPECT_EQ(TransformerParams(37000), 63082496);
  EXPECT_EQ(TransformerParams(32000), 60522496);
  for (int64_t vocab : {2, 50, 37000}) {
    const ModelSpec spec = MakeTransformerSpec({/*batch=*/2, /*length=*/8, vocab});
    EXPECT_EQ(CountModel(spec).params(), TransformerParams(vocab)) << vocab;
  }
}

// Hand count, head by head, of one attention sublayer with Lq queries and Lk
// keys: per head, the three projections to d_k, the score matrix Lq×Lk over
// d_k and the context Lq×d_k over Lk; then the output projection d×d.
int64_t AttentionMacs(int64_t lq, int64_t lk) {
  const int64_t d = 512, heads = 8, dk = 64;
  int64_t macs = 0;
  for (int64_t h = 0; h < heads; ++h) {
    macs += lq * d * dk;   // Q_h
    macs += lk * d * dk;   // K_h
    macs += lk * d * dk;   // V_h
    macs += lq * lk * dk;  // Q_h K_hᵀ
    macs += lq * lk * dk;  // P_h V_h
  }
  return macs + lq * d * d;  // output projection
}

TEST(TransformerFamilyTest, MacsMatchHandCountPerLayer) {
  for (int64_t length : {1, 8, 128}) {
    for (int64_t vocab : {50, 32000}) {
      const int64_t d = 512, f = 2048;
      const int64_t ffn = length * d * f + length * f * d;
      const int64_t encoder_layer = AttentionMacs(length, length) + ffn;
      const int64_t decoder_layer = 2 * AttentionMacs(length, length) + ffn;
      const int64_t expected = 6 * encoder_layer + 6 * decoder_layer + length * d * vocab;
      const ModelSpec spec = MakeTransformerSpec({/*batch=*/3, length, vocab});
      const v1::ModelCounts c = CountModel(spec);
      EXPECT_EQ(c.macs_per_example(), expected) << length << " " << vocab;
      EXPECT_DOUBLE_EQ(c.model_flops(), 6.0 * static_cast<double>(expected) * 3);
      // No matmul reads the network input (the embedding gather does).
      EXPECT_DOUBLE_EQ(c.executed_flops(), c.model_flops());
    }
  }
  // One attention sublayer at L = 128: 4·L·d² + 2·L²·d.
  EXPECT_EQ(AttentionMacs(128, 128), 4 * 128 * 512 * 512 + 2 * 128 * 128 * 512);
}

TEST(TransformerFamilyTest, OtherWorkBytesAndMemoryScale) {
  const v1::ModelCounts small = CountModel(MakeTransformerSpec({1, 32, 1000}));
  const v1::ModelCounts twice = CountModel(MakeTransformerSpec({2, 32, 1000}));
  const v1::ModelCounts longer = CountModel(MakeTransformerSpec({1, 64, 1000}));
  EXPECT_GT(small.other_flops(), 0);
  // Weight traffic is per step, activation traffic per example.
  EXPECT_GT(twice.bytes_per_step(), small.bytes_per_step());
  EXPECT_LT(twice.bytes_per_step(), 2 * small.bytes_per_step());
  EXPECT_DOUBLE_EQ(twice.activation_bytes(), 2 * small.activation_bytes());
  // Attention scores grow with L²: doubling L more than doubles activations.
  EXPECT_GT(longer.activation_bytes(), 2 * small.activation_bytes());
  // Memory holds at least weights, gradients and RMSProp's two states.
  EXPECT_GT(small.peak_memory_estimate_bytes(), 4.0 * 4 * static_cast<double>(small.params()));
  const v1::ModelCounts bf16 = CountModel(MakeTransformerSpec({1, 32, 1000}, Precision::kBFloat16));
  EXPECT_LT(bf16.bytes_per_step(), small.bytes_per_step());
  EXPECT_EQ(bf16.params(), small.params());
}

TEST(TransformerFamilyTest, DefaultsAndRanges) {
  v1::ModelConfig config;
  config.set_family("transformer");
  (*config.mutable_params())["batch"] = 4;
  absl::StatusOr<ModelSpec> spec = ParseModelSpec(config, FieldStyle::kFlag);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->Param("length"), 128);
  EXPECT_EQ(spec->Param("vocab"), 32000);
  (*config.mutable_params())["vocab"] = 1;
  spec = ParseModelSpec(config, FieldStyle::kFlag);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("--vocab"), std::string::npos) << spec.status();
}

}  // namespace
}  // namespace paradnn::model
