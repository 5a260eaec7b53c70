#include "model/families/retinanet.h"

#include <gtest/gtest.h>

#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::model {
namespace {

absl::StatusOr<ModelSpec> Parse(int64_t image) {
  v1::ModelConfig config;
  config.set_family("retinanet");
  (*config.mutable_params())["batch"] = 1;
  (*config.mutable_params())["image"] = image;
  return ParseModelSpec(config, FieldStyle::kProto);
}

TEST(RetinaNetFamilyTest, ImageMustBeAMultipleOf32) {
  EXPECT_TRUE(Parse(64).ok());
  EXPECT_TRUE(Parse(512).ok());
  const absl::StatusOr<ModelSpec> odd = Parse(100);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(odd.status().message().find("config.params.image"), std::string::npos);
  EXPECT_NE(odd.status().message().find("multiple of 32"), std::string::npos);
  EXPECT_FALSE(Parse(32).ok());  // below the range
  v1::ModelConfig config;
  config.set_family("retinanet");
  (*config.mutable_params())["batch"] = 2;
  absl::StatusOr<ModelSpec> spec = ParseModelSpec(config, FieldStyle::kFlag);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->Param("image"), 512);
  EXPECT_EQ(spec->Param("output"), 80);
}

TEST(RetinaNetFamilyTest, ParamsMatchClosedForm) {
  // ResNet-50 without FC 23,508,032 + FPN 7,997,440 + heads at K = 80
  // 6,463,220: 37.97 M, as Detectron's RetinaNet-R50-FPN (P6 from C5).
  EXPECT_EQ(RetinaNetParams(80), 37968692);
  for (int64_t k : {1, 3, 80}) {
    EXPECT_EQ(CountModel(MakeRetinaNetSpec({1, 64, k})).params(), RetinaNetParams(k)) << k;
  }
  // Each extra class adds one predictor channel per anchor: 9·(9·256 + 1).
  EXPECT_EQ(RetinaNetParams(4) - RetinaNetParams(3), 9 * (9 * 256 + 1));
}

TEST(RetinaNetFamilyTest, PyramidGeometry) {
  const int64_t sides64[] = {8, 4, 2, 1, 1};
  const int64_t sides512[] = {64, 32, 16, 8, 4};
  for (int level = 3; level <= 7; ++level) {
    EXPECT_EQ(RetinaNetLevelSide(64, level), sides64[level - 3]);
    EXPECT_EQ(RetinaNetLevelSide(512, level), sides512[level - 3]);
  }
  EXPECT_EQ(RetinaNetLevelSide(96, 6), 2);  // C5 3×3 → ceil(3/2)
  EXPECT_EQ(RetinaNetAnchorsPerImage(512), 9 * 5456);
  EXPECT_EQ(RetinaNetAnchorsPerImage(64), 9 * 86);
  EXPECT_EQ(RetinaNetPositivesPerImage(64), 8);     // round(7.74)
  EXPECT_EQ(RetinaNetPositivesPerImage(512), 491);  // round(491.04)
}

// Hand count of one pyramid level's FPN and head work at side s, from the
// paper's layer list (3×3 convs: 9·Cin·Cout·s²).
int64_t HeadMacsPerLevel(int64_t s, int64_t classes) {
  const int64_t f = 256;
  const int64_t subnet = 4 * 9 * f * f * s * s;
  return 2 * subnet + 9 * f * (9 * classes) * s * s + 9 * f * (9 * 4) * s * s;
}

TEST(RetinaNetFamilyTest, MacsMatchHandCount) {
  for (int64_t image : {64, 256, 512}) {
    const int64_t s3 = image / 8, s4 = image / 16, s5 = image / 32;
    const int64_t s6 = (s5 + 1) / 2, s7 = (s6 + 1) / 2;
    // ResNet-50 v1.5 convs.
    int64_t backbone = 7 * 7 * 3 * 64 * (image / 2) * (image / 2);
    int64_t side = image / 4, in = 64;
    const int64_t blocks[] = {3, 4, 6, 3}, widths[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
      const int64_t w = widths[stage];
      for (int64_t b = 0; b < blocks[stage]; ++b) {
        const int64_t out = (b == 0 && stage > 0) ? side / 2 : side;
        backbone += in * w * side * side + 9 * w * w * out * out + w * 4 * w * out * out;
        if (b == 0) backbone += in * 4 * w * out * out;
        in = 4 * w;
        side = out;
      }
    }
    // FPN level by level: P3 (lateral from C3 + output conv), P4, P5, P6, P7.
    const int64_t fpn =
        (512 * 256 + 9 * 256 * 256) * s3 * s3 + (1024 * 256 + 9 * 256 * 256) * s4 * s4 +
        (2048 * 256 + 9 * 256 * 256) * s5 * s5 + 9 * 2048 * 256 * s6 * s6 + 9 * 256 * 256 * s7 * s7;
    for (int64_t classes : {3, 80}) {
      int64_t heads = 0;
      for (int64_t s : {s3, s4, s5, s6, s7}) heads += HeadMacsPerLevel(s, classes);
      const v1::ModelCounts c = CountModel(MakeRetinaNetSpec({2, image, classes}));
      EXPECT_EQ(c.macs_per_example(), backbone + fpn + heads) << image << " " << classes;
      // Only the stem reads the image (no input gradient).
      const double stem = 7.0 * 7 * 3 * 64 * (image / 2) * (image / 2);
      EXPECT_DOUBLE_EQ(c.executed_flops(), c.model_flops() - 2.0 * 2 * stem);
    }
  }
}

TEST(RetinaNetFamilyTest, LossAndMemoryScaleWithClasses) {
  const v1::ModelCounts k3 = CountModel(MakeRetinaNetSpec({1, 256, 3}));
  const v1::ModelCounts k80 = CountModel(MakeRetinaNetSpec({1, 256, 80}));
  EXPECT_GT(k80.other_flops(), k3.other_flops());
  EXPECT_GT(k80.activation_bytes(), k3.activation_bytes());
  EXPECT_GT(k80.peak_memory_estimate_bytes(), k80.activation_bytes());
  const v1::ModelCounts mixed = CountModel(MakeRetinaNetSpec({1, 256, 80}, Precision::kMixedBf16));
  EXPECT_EQ(mixed.params(), k80.params());
  EXPECT_GT(mixed.peak_memory_estimate_bytes(), 0);
}

}  // namespace
}  // namespace paradnn::model
