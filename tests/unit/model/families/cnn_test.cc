// The CNN family's validation and analytic counts, torch-free, against hand
// formulas written independently of model/families/cnn.cc and published numbers.
#include "model/families/cnn.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "model/family.h"
#include "model/model_counts.h"

namespace paradnn::model {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Parameters by the closed form of docs/models.md "CNN".
int64_t HandParams(const CnnShape& s) {
  const int64_t f = s.filter;
  const bool bottleneck = s.block_fn == CnnBlockFn::kBottleneck;
  int64_t total = 49 * 3 * f + 2 * f;  // stem conv, BN
  int64_t in = f;
  for (int g = 0; g < 4; ++g) {
    const int64_t w = f << g;
    for (int64_t j = 0; j < s.blocks[g]; ++j) {
      const int64_t cin = j == 0 ? in : (bottleneck ? 4 * w : w);
      if (bottleneck) {
        total += cin * w + 2 * w + 9 * w * w + 2 * w + 4 * w * w + 8 * w;
        if (j == 0) total += cin * 4 * w + 8 * w;
      } else {
        total += 9 * cin * w + 2 * w + 9 * w * w + 2 * w;
        if (j == 0) total += cin * w + 2 * w;
      }
    }
    in = bottleneck ? 4 * w : w;
  }
  const int64_t side = CeilDiv(s.image, 32) - 6;
  return total + (in * side * side + 1) * s.output;
}

// Forward MACs per example with the map sides in closed form: every
// stride-2 stage halves a side rounding up.
int64_t HandMacs(const CnnShape& s, int64_t* stem_macs) {
  const int64_t f = s.filter;
  const bool bottleneck = s.block_fn == CnnBlockFn::kBottleneck;
  const int64_t s1 = CeilDiv(s.image, 2);
  *stem_macs = 49 * 3 * f * s1 * s1;
  int64_t total = *stem_macs;
  int64_t side = CeilDiv(s1, 2);
  int64_t in = f;
  for (int g = 0; g < 4; ++g) {
    const int64_t w = f << g;
    const int64_t out = g == 0 ? side : CeilDiv(side, 2);
    for (int64_t j = 0; j < s.blocks[g]; ++j) {
      const int64_t cin = j == 0 ? in : (bottleneck ? 4 * w : w);
      const int64_t hin = j == 0 ? side : out;  // first 1x1 of a bottleneck runs before the stride
      if (bottleneck) {
        total += cin * w * hin * hin + 9 * w * w * out * out + 4 * w * w * out * out;
        if (j == 0) total += cin * 4 * w * out * out;
      } else {
        total += 9 * cin * w * out * out + 9 * w * w * out * out;
        if (j == 0) total += cin * w * out * out;
      }
    }
    in = bottleneck ? 4 * w : w;
    side = out;
  }
  return total + in * (side - 6) * (side - 6) * s.output;
}

v1::ModelConfig Config(const std::string& block_fn, int64_t block, int64_t filter, int64_t image,
                       int64_t output, int64_t batch, const std::string& blocks = "") {
  v1::ModelConfig c;
  c.set_family("cnn");
  (*c.mutable_params())["block"] = block;
  (*c.mutable_params())["filter"] = filter;
  (*c.mutable_params())["image"] = image;
  (*c.mutable_params())["output"] = output;
  (*c.mutable_params())["batch"] = batch;
  if (!block_fn.empty()) (*c.mutable_options())["block_fn"] = block_fn;
  if (!blocks.empty()) (*c.mutable_options())["blocks"] = blocks;
  return c;
}

std::vector<CnnShape> Grid() {
  std::vector<CnnShape> shapes;
  for (CnnBlockFn fn : {CnnBlockFn::kResidual, CnnBlockFn::kBottleneck}) {
    for (int64_t image : {193, 200, 224, 250, 300}) {
      shapes.push_back({fn, {1, 1, 1, 1}, 16, image, 500, 64});
      shapes.push_back({fn, {2, 2, 2, 2}, 32, image, 1000, 8});
      shapes.push_back({fn, {3, 4, 6, 3}, 64, image, 1500, 1});
      shapes.push_back({fn, {1, 2, 1, 3}, 3, image, 7, 2});
    }
  }
  return shapes;
}

TEST(CnnFamilyTest, ParamsMatchHandFormula) {
  for (const CnnShape& s : Grid()) {
    const WorkCounts w = CountWork(MakeCnnSpec(s));
    EXPECT_EQ(w.counts.params(), HandParams(s)) << DescribeSpec(MakeCnnSpec(s));
  }
}

TEST(CnnFamilyTest, MacsAndFlopsMatchHandFormula) {
  for (const CnnShape& s : Grid()) {
    const WorkCounts w = CountWork(MakeCnnSpec(s));
    int64_t stem = 0;
    const int64_t macs = HandMacs(s, &stem);
    const double b = static_cast<double>(s.batch);
    EXPECT_EQ(w.counts.macs_per_example(), macs) << DescribeSpec(MakeCnnSpec(s));
    EXPECT_DOUBLE_EQ(w.counts.model_flops(), 6.0 * static_cast<double>(macs) * b);
    EXPECT_DOUBLE_EQ(w.counts.executed_flops(),
                     6.0 * static_cast<double>(macs) * b - 2.0 * static_cast<double>(stem) * b);
  }
}

// blocks "3,4,6,3", bottleneck, filter 64, image 224, 1000 classes is
// exactly ResNet-50 (v1.5 puts the stride in the 3x3 conv as we do).
TEST(CnnFamilyTest, ResNet50MatchesPublishedCounts) {
  auto spec =
      ParseModelSpec(Config("bottleneck", 1, 64, 224, 1000, 32, "3,4,6,3"), FieldStyle::kProto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::ModelCounts c = CountModel(*spec);
  EXPECT_EQ(c.params(), 25557032);
  // torchvision resnet50: 4.09 G multiply-accumulates per 224x224 image.
  EXPECT_EQ(c.macs_per_example(), 4089184256);
}

// torchvision's ResNet-18/34 have an identity shortcut in their first group;
// ours always projects (+ 64*64 conv weights + 2*64 BN parameters).
TEST(CnnFamilyTest, ResidualMatchesResNet18And34PlusGroupOneProjection) {
  auto r18 = ParseModelSpec(Config("residual", 2, 64, 224, 1000, 1), FieldStyle::kProto);
  ASSERT_TRUE(r18.ok()) << r18.status();
  EXPECT_EQ(CountModel(*r18).params(), 11689512 + 64 * 64 + 128);
  auto r34 = ParseModelSpec(Config("residual", 1, 64, 224, 1000, 1, "3,4,6,3"), FieldStyle::kProto);
  ASSERT_TRUE(r34.ok()) << r34.status();
  EXPECT_EQ(CountModel(*r34).params(), 21797672 + 64 * 64 + 128);
}

TEST(CnnFamilyTest, ImageBelow193IsRejectedWithTheReason) {
  for (FieldStyle style : {FieldStyle::kProto, FieldStyle::kFlag}) {
    auto spec = ParseModelSpec(Config("residual", 1, 16, 192, 10, 2), style);
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(spec.status().message());
    EXPECT_TRUE(
        absl::StrContains(message, style == FieldStyle::kProto ? "config.params.image" : "--image"))
        << message;
    EXPECT_TRUE(absl::StrContains(message, "7x7 average pool")) << message;
    EXPECT_TRUE(absl::StrContains(message, "193")) << message;
  }
  EXPECT_TRUE(ParseModelSpec(Config("residual", 1, 16, 193, 10, 2), FieldStyle::kProto).ok());
  // The family's own check catches a spec made in code.
  ModelSpec made = MakeCnnSpec({CnnBlockFn::kResidual, {1, 1, 1, 1}, 16, 100, 10, 2});
  const absl::Status s = FindFamily("cnn")->check(made, FieldStyle::kFlag);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "--image")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "7x7 average pool")) << s;
}

TEST(CnnFamilyTest, OptionsAreValidated) {
  auto missing = ParseModelSpec(Config("", 1, 16, 224, 10, 2), FieldStyle::kFlag);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "--block_fn")) << missing.status();
  auto wrong = ParseModelSpec(Config("dense", 1, 16, 224, 10, 2), FieldStyle::kProto);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(absl::StrContains(wrong.status().message(), "config.options.block_fn"));
  for (const char* bad : {"3,4,6", "3,4,6,3,1", "0,1,1,1", "03,4,6,3", " 3,4,6,3", "+3,4,6,3",
                          "65,1,1,1", "a,b,c,d", "3,,6,3", ","}) {
    auto spec = ParseModelSpec(Config("residual", 1, 16, 224, 10, 2, bad), FieldStyle::kProto);
    ASSERT_FALSE(spec.ok()) << "'" << bad << "'";
    EXPECT_TRUE(absl::StrContains(spec.status().message(), "config.options.blocks"))
        << spec.status();
  }
  auto ok = ParseModelSpec(Config("BOTTLENECK", 2, 16, 224, 10, 2, "1,64,2,3"), FieldStyle::kProto);
  ASSERT_TRUE(ok.ok()) << ok.status();
  const CnnShape shape = CnnShapeOf(*ok);
  EXPECT_EQ(shape.block_fn, CnnBlockFn::kBottleneck);
  EXPECT_EQ(shape.blocks, (std::array<int64_t, 4>{1, 64, 2, 3}));
  auto uniform = ParseModelSpec(Config("residual", 5, 16, 224, 10, 2), FieldStyle::kProto);
  ASSERT_TRUE(uniform.ok());
  EXPECT_EQ(CnnShapeOf(*uniform).blocks, (std::array<int64_t, 4>{5, 5, 5, 5}));
  EXPECT_TRUE(ParseModelSpec(Config("residual", 65, 16, 224, 10, 2), FieldStyle::kProto)
                  .status()
                  .message()
                  .find("config.params.block") != absl::string_view::npos);
}

TEST(CnnFamilyTest, MakeCnnSpecRoundTripsThroughValidation) {
  for (const CnnShape& s : Grid()) {
    const ModelSpec spec = MakeCnnSpec(s);
    v1::ModelConfig config;
    config.set_family("cnn");
    for (const auto& [k, v] : spec.params) (*config.mutable_params())[k] = v;
    for (const auto& [k, v] : spec.options) (*config.mutable_options())[k] = v;
    auto parsed = ParseModelSpec(config, FieldStyle::kProto);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(CnnShapeOf(*parsed).blocks, s.blocks);
  }
}

TEST(CnnFamilyTest, ConvLayersFollowTheFloorArithmetic) {
  const CnnShape s{CnnBlockFn::kBottleneck, {1, 2, 1, 1}, 8, 250, 10, 1};
  const std::vector<CnnConvLayer> convs = CnnConvLayers(s);
  // stem + 3 per block + one projection per group.
  EXPECT_EQ(convs.size(), 1u + 3 * 5 + 4);
  EXPECT_EQ(convs[0].out_size, 125);  // (250 + 6 - 7) / 2 + 1
  EXPECT_EQ(convs[1].in_size, 63);    // max-pool: (125 + 2 - 3) / 2 + 1
  const CnnConvLayer& last_main = convs[convs.size() - 2];
  EXPECT_EQ(last_main.out_size, 8);  // ceil(250 / 32)
  EXPECT_EQ(last_main.out_channels, 4 * 8 * 8);
  EXPECT_TRUE(convs.back().projection);
  EXPECT_EQ(CnnHeadFeatures(s), 4 * 8 * 8 * 2 * 2);
  int projections = 0;
  for (const CnnConvLayer& c : convs) projections += c.projection;
  EXPECT_EQ(projections, 4);
}

TEST(CnnFamilyTest, BytesAndMemoryFollowPrecisionAndBatch) {
  const CnnShape s{CnnBlockFn::kResidual, {2, 2, 2, 2}, 32, 224, 1000, 16};
  const WorkCounts fp32 = CountWork(MakeCnnSpec(s, Precision::kFloat32));
  const WorkCounts bf16 = CountWork(MakeCnnSpec(s, Precision::kBFloat16));
  const WorkCounts mixed = CountWork(MakeCnnSpec(s, Precision::kMixedBf16));
  EXPECT_EQ(fp32.counts.params(), bf16.counts.params());
  EXPECT_DOUBLE_EQ(fp32.counts.executed_flops(), bf16.counts.executed_flops());
  // Every byte halves from float32 to pure bfloat16 except the int64
  // max-pool indices (B x f x 56 x 56, written in forward, read in backward).
  const double indices = 2 * 8.0 * 16 * 32 * 56 * 56;
  EXPECT_DOUBLE_EQ(2 * (bf16.counts.bytes_per_step() - indices),
                   fp32.counts.bytes_per_step() - indices);
  EXPECT_LT(mixed.counts.bytes_per_step(), fp32.counts.bytes_per_step());
  EXPECT_GT(mixed.counts.bytes_per_step(), bf16.counts.bytes_per_step());
  const WorkBreakdown& b = fp32.breakdown;
  EXPECT_DOUBLE_EQ(fp32.counts.bytes_per_step(), b.weight_bytes + b.gradient_bytes +
                                                     b.optimizer_bytes + b.activation_fwd_bytes +
                                                     b.activation_bwd_bytes);
  EXPECT_DOUBLE_EQ(fp32.counts.other_flops(), b.bias_relu_flops + b.loss_flops + b.optimizer_flops);
  EXPECT_DOUBLE_EQ(b.optimizer_flops, 12.0 * static_cast<double>(fp32.counts.params()));
  EXPECT_DOUBLE_EQ(b.loss_flops, 9.0 * 16 * 1000);
  // Activations dominate and grow linearly with the batch.
  CnnShape big = s;
  big.batch = 32;
  const WorkCounts fp32_big = CountWork(MakeCnnSpec(big, Precision::kFloat32));
  EXPECT_DOUBLE_EQ(fp32_big.counts.activation_bytes(), 2 * fp32.counts.activation_bytes());
  EXPECT_GT(fp32.counts.activation_bytes(), 4.0 * static_cast<double>(fp32.counts.params()) * 4);
  EXPECT_GT(fp32.counts.peak_memory_estimate_bytes(),
            fp32.counts.activation_bytes() + 4.0 * 4 * static_cast<double>(fp32.counts.params()));
  EXPECT_LT(bf16.counts.peak_memory_estimate_bytes(), fp32.counts.peak_memory_estimate_bytes());
}

}  // namespace
}  // namespace paradnn::model
