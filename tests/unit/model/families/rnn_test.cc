#include "model/families/rnn.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "model/model_counts.h"

namespace paradnn::model {
namespace {

v1::ModelConfig RnnConfig(const std::string& cell) {
  v1::ModelConfig config;
  config.set_family("rnn");
  (*config.mutable_params())["layer"] = 2;
  (*config.mutable_params())["embed"] = 8;
  (*config.mutable_params())["length"] = 5;
  (*config.mutable_params())["vocab"] = 16;
  (*config.mutable_params())["batch"] = 4;
  if (!cell.empty()) (*config.mutable_options())["cell"] = cell;
  return config;
}

// The docs/models.md formula, written out independently of model/families/rnn.cc.
int64_t FormulaParams(int64_t gates, int64_t layer, int64_t embed, int64_t vocab) {
  return vocab * embed + layer * gates * (2 * embed * embed + 2 * embed) + embed * vocab + vocab;
}

// An LSTM's forward MACs for one sequence, counted step by step and gate by
// gate: each of the 4 gates multiplies the layer input x_t (E values) and
// h_{t-1} (E values) by an E-row matrix; the projection maps h_t to V logits
// at every step; the embedding is a lookup.
int64_t HandCountLstmMacs(int64_t layer, int64_t embed, int64_t length, int64_t vocab) {
  int64_t macs = 0;
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t l = 0; l < layer; ++l) {
      for (int gate = 0; gate < 4; ++gate) {
        macs += embed * embed;  // W_i? x_t
        macs += embed * embed;  // W_h? h_{t-1}
      }
    }
    macs += embed * vocab;  // projection of h_t
  }
  return macs;
}

TEST(RnnFamilyTest, ParseFillsCellAndShape) {
  for (const auto& [name, cell] : {std::pair<std::string, RnnCell>{"rnn", RnnCell::kRnn},
                                   {"LSTM", RnnCell::kLstm},
                                   {"gru", RnnCell::kGru}}) {
    auto spec = ParseModelSpec(RnnConfig(name), FieldStyle::kProto);
    ASSERT_TRUE(spec.ok()) << spec.status();
    const RnnShape shape = RnnShapeOf(*spec);
    EXPECT_EQ(shape.cell, cell);
    EXPECT_EQ(shape.layer, 2);
    EXPECT_EQ(shape.embed, 8);
    EXPECT_EQ(shape.length, 5);
    EXPECT_EQ(shape.vocab, 16);
    EXPECT_EQ(shape.batch, 4);
  }
}

TEST(RnnFamilyTest, UnknownOrMissingCellIsAClearError) {
  auto spec = ParseModelSpec(RnnConfig("transformer"), FieldStyle::kFlag);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(spec.status().message(), "--cell")) << spec.status();
  EXPECT_TRUE(absl::StrContains(spec.status().message(), "rnn|lstm|gru")) << spec.status();

  spec = ParseModelSpec(RnnConfig(""), FieldStyle::kProto);
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(absl::StrContains(spec.status().message(), "config.options.cell")) << spec.status();
  EXPECT_TRUE(absl::StrContains(spec.status().message(), "required")) << spec.status();
}

TEST(RnnFamilyTest, RangesAreEnforced) {
  v1::ModelConfig config = RnnConfig("lstm");
  (*config.mutable_params())["vocab"] = 1;
  auto spec = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(absl::StrContains(spec.status().message(), "config.params.vocab")) << spec.status();

  config = RnnConfig("lstm");
  (*config.mutable_params())["layer"] = 1025;
  EXPECT_FALSE(ParseModelSpec(config, FieldStyle::kProto).ok());

  config = RnnConfig("lstm");
  config.mutable_params()->erase("length");
  spec = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(absl::StrContains(spec.status().message(), "length")) << spec.status();
}

TEST(RnnFamilyTest, ParamsMatchFormulaForAGrid) {
  for (RnnCell cell : {RnnCell::kRnn, RnnCell::kLstm, RnnCell::kGru}) {
    const int64_t gates = cell == RnnCell::kRnn ? 1 : cell == RnnCell::kLstm ? 4 : 3;
    EXPECT_EQ(RnnGates(cell), gates);
    for (int64_t layer : {1, 3, 13}) {
      for (int64_t embed : {1, 7, 100, 900}) {
        for (int64_t vocab : {2, 33, 1024}) {
          const ModelSpec spec = MakeRnnSpec(RnnShape{cell, layer, embed, 10, vocab, 16});
          EXPECT_EQ(CountModel(spec).params(), FormulaParams(gates, layer, embed, vocab))
              << RnnCellName(cell) << " L=" << layer << " E=" << embed << " V=" << vocab;
        }
      }
    }
  }
  // One worked value: LSTM, 2 layers, E=8, V=16: 128 + 2*4*(128+16) + 128 + 16.
  EXPECT_EQ(CountModel(MakeRnnSpec(RnnShape{RnnCell::kLstm, 2, 8, 5, 16, 4})).params(), 1424);
}

TEST(RnnFamilyTest, LstmMacsMatchAStepByStepHandCount) {
  for (const RnnShape& shape :
       {RnnShape{RnnCell::kLstm, 1, 4, 3, 10, 2}, RnnShape{RnnCell::kLstm, 2, 8, 5, 16, 4},
        RnnShape{RnnCell::kLstm, 5, 100, 50, 256, 64},
        RnnShape{RnnCell::kLstm, 13, 900, 90, 1024, 1024}}) {
    const v1::ModelCounts c = CountModel(MakeRnnSpec(shape));
    const int64_t hand = HandCountLstmMacs(shape.layer, shape.embed, shape.length, shape.vocab);
    EXPECT_EQ(c.macs_per_example(), hand) << shape.layer << "x" << shape.embed;
    const double batch = static_cast<double>(shape.batch);
    EXPECT_DOUBLE_EQ(c.model_flops(), 6.0 * static_cast<double>(hand) * batch);
    // Every matmul's input gradient except h_0's (one W_hh step per layer).
    const double h0 =
        2.0 * batch * static_cast<double>(shape.layer * 4 * shape.embed * shape.embed);
    EXPECT_DOUBLE_EQ(c.executed_flops(), c.model_flops() - h0);
  }
}

TEST(RnnFamilyTest, CellsDifferByGateCount) {
  const auto counts = [](RnnCell cell) {
    return CountModel(MakeRnnSpec(RnnShape{cell, 3, 64, 20, 128, 8}));
  };
  const v1::ModelCounts rnn = counts(RnnCell::kRnn), lstm = counts(RnnCell::kLstm),
                        gru = counts(RnnCell::kGru);
  const int64_t projection = 20 * 64 * 128;
  const int64_t per_gate = 20 * 3 * 2 * 64 * 64;
  EXPECT_EQ(rnn.macs_per_example(), projection + per_gate);
  EXPECT_EQ(gru.macs_per_example(), projection + 3 * per_gate);
  EXPECT_EQ(lstm.macs_per_example(), projection + 4 * per_gate);
  EXPECT_LT(rnn.other_flops(), gru.other_flops());
  EXPECT_LT(gru.other_flops(), lstm.other_flops());
  EXPECT_LT(rnn.peak_memory_estimate_bytes(), lstm.peak_memory_estimate_bytes());
}

TEST(RnnFamilyTest, BytesAndMemoryFollowPrecision) {
  const RnnShape shape{RnnCell::kLstm, 2, 128, 30, 512, 32};
  const WorkCounts f32 = CountWork(MakeRnnSpec(shape, Precision::kFloat32));
  const WorkCounts bf16 = CountWork(MakeRnnSpec(shape, Precision::kBFloat16));
  const WorkCounts mixed = CountWork(MakeRnnSpec(shape, Precision::kMixedBf16));
  EXPECT_EQ(f32.counts.params(), bf16.counts.params());
  EXPECT_DOUBLE_EQ(f32.counts.model_flops(), bf16.counts.model_flops());
  // Pure bfloat16 halves every floating-point byte; only token ids stay.
  EXPECT_LT(bf16.counts.bytes_per_step(), 0.51 * f32.counts.bytes_per_step());
  EXPECT_LT(bf16.counts.peak_memory_estimate_bytes(),
            0.55 * f32.counts.peak_memory_estimate_bytes());
  // Mixed keeps float32 weights and optimizer state and adds the 16-bit copies.
  EXPECT_GT(mixed.breakdown.weight_bytes, bf16.breakdown.weight_bytes);
  EXPECT_DOUBLE_EQ(mixed.breakdown.optimizer_bytes, f32.breakdown.optimizer_bytes);
  for (const WorkCounts* w : {&f32, &bf16, &mixed}) {
    const WorkBreakdown& b = w->breakdown;
    EXPECT_DOUBLE_EQ(w->counts.bytes_per_step(), b.weight_bytes + b.gradient_bytes +
                                                     b.optimizer_bytes + b.activation_fwd_bytes +
                                                     b.activation_bwd_bytes);
    EXPECT_GT(w->counts.peak_memory_estimate_bytes(),
              w->counts.activation_bytes() + 4.0 * static_cast<double>(w->counts.params()));
  }
  // W_hh is read at every step: the weight traffic grows with the length.
  const WorkCounts longer =
      CountWork(MakeRnnSpec(RnnShape{RnnCell::kLstm, 2, 128, 60, 512, 32}, Precision::kFloat32));
  EXPECT_GT(longer.breakdown.weight_bytes, 1.5 * f32.breakdown.weight_bytes);
}

TEST(RnnFamilyTest, LargestPaperShapeDoesNotOverflow) {
  // Table 2's largest RNN point and the rule's extreme corners.
  const v1::ModelCounts paper =
      CountModel(MakeRnnSpec(RnnShape{RnnCell::kLstm, 13, 900, 90, 1024, 1024}));
  EXPECT_EQ(paper.params(), FormulaParams(4, 13, 900, 1024));
  EXPECT_GT(paper.model_flops(), 0);
  const v1::ModelCounts corner = CountModel(MakeRnnSpec(
      RnnShape{RnnCell::kLstm, 1024, int64_t{1} << 16, int64_t{1} << 16, int64_t{1} << 22, 1}));
  EXPECT_GT(corner.macs_per_example(), 0);
  EXPECT_EQ(corner.params(), FormulaParams(4, 1024, int64_t{1} << 16, int64_t{1} << 22));
}

}  // namespace
}  // namespace paradnn::model
