#include "model/model_spec.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace paradnn::model {
namespace {

v1::ModelConfig FcConfig() {
  v1::ModelConfig config;
  config.set_family("fc");
  (*config.mutable_params())["layer"] = 4;
  (*config.mutable_params())["node"] = 1024;
  (*config.mutable_params())["input"] = 2000;
  (*config.mutable_params())["output"] = 200;
  (*config.mutable_params())["batch"] = 256;
  return config;
}

TEST(ModelSpecTest, ParsesFcWithDefaults) {
  auto spec = ParseModelSpec(FcConfig(), FieldStyle::kProto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->family, "fc");
  EXPECT_EQ(spec->Param("layer"), 4);
  EXPECT_EQ(spec->Param("node"), 1024);
  EXPECT_EQ(spec->Param("input"), 2000);
  EXPECT_EQ(spec->Param("output"), 200);
  EXPECT_EQ(spec->Param("batch"), 256);
  EXPECT_EQ(spec->precision, Precision::kFloat32);
  EXPECT_EQ(spec->optimizer, OptimizerKind::kRmsProp);
  EXPECT_EQ(DescribeSpec(*spec),
            "fc batch=256 input=2000 layer=4 node=1024 output=200 float32 rmsprop");
}

// A family reading a key it does not have is a bug: the process stops and
// says which.
TEST(ModelSpecDeathTest, AnUnknownParamOrOptionAbortsNamingIt) {
  auto spec = ParseModelSpec(FcConfig(), FieldStyle::kProto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_DEATH(spec->Param("width"), "ModelSpec::Param: family fc has no parameter 'width'");
  EXPECT_DEATH(spec->Option("cell"), "ModelSpec::Option: family fc has no option 'cell'");
}

TEST(ModelSpecTest, NormalizedConfigWritesDefaultsOut) {
  const v1::ModelConfig normalized = NormalizedConfig(FcConfig());
  EXPECT_EQ(normalized.precision(), "float32");
  EXPECT_EQ(normalized.optimizer(), "rmsprop");
  v1::ModelConfig config = FcConfig();
  config.set_precision("BFloat16");
  config.set_optimizer("momentum");
  EXPECT_EQ(NormalizedConfig(config).precision(), "bfloat16");
  auto spec = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->precision, Precision::kBFloat16);
  EXPECT_EQ(spec->optimizer, OptimizerKind::kMomentum);
}

TEST(ModelSpecTest, ErrorsNameTheFieldInEitherStyle) {
  v1::ModelConfig config = FcConfig();
  config.mutable_params()->erase("layer");
  auto proto = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_FALSE(proto.ok());
  EXPECT_EQ(proto.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(proto.status().message(), "config.params.layer")) << proto.status();
  auto flag = ParseModelSpec(config, FieldStyle::kFlag);
  EXPECT_TRUE(absl::StartsWith(flag.status().message(), "--layer:")) << flag.status();

  config = FcConfig();
  (*config.mutable_params())["batch"] = 0;
  auto zero = ParseModelSpec(config, FieldStyle::kFlag);
  EXPECT_TRUE(absl::StartsWith(zero.status().message(), "--batch:")) << zero.status();
  (*config.mutable_params())["batch"] = -5;
  EXPECT_FALSE(ParseModelSpec(config, FieldStyle::kFlag).ok());
}

TEST(ModelSpecTest, RejectsUnknownFamilyPrecisionOptimizerAndKeys) {
  v1::ModelConfig config = FcConfig();
  config.set_family("no_such_family");
  auto family = ParseModelSpec(config, FieldStyle::kFlag);
  EXPECT_TRUE(absl::StartsWith(family.status().message(), "--family:")) << family.status();
  EXPECT_TRUE(absl::StrContains(family.status().message(), "|fc|")) << family.status();

  config = FcConfig();
  config.set_precision("fp8");
  auto precision = ParseModelSpec(config, FieldStyle::kProto);
  EXPECT_TRUE(absl::StartsWith(precision.status().message(), "config.precision:"));
  EXPECT_TRUE(absl::StrContains(precision.status().message(), "bfloat16"));

  config = FcConfig();
  config.set_optimizer("adam");
  EXPECT_TRUE(absl::StrContains(ParseModelSpec(config, FieldStyle::kProto).status().message(),
                                "rmsprop|sgd|momentum"));

  config = FcConfig();
  (*config.mutable_params())["layers"] = 4;  // a typo must not be ignored
  auto key = ParseModelSpec(config, FieldStyle::kProto);
  EXPECT_TRUE(absl::StrContains(key.status().message(), "config.params.layers")) << key.status();
}

TEST(ModelSpecTest, ElementSizesAndOptimizerState) {
  EXPECT_EQ(WeightElementBytes(Precision::kFloat32), 4);
  EXPECT_EQ(WeightElementBytes(Precision::kBFloat16), 2);
  EXPECT_EQ(WeightElementBytes(Precision::kMixedBf16), 4);
  EXPECT_EQ(ActivationElementBytes(Precision::kMixedBf16), 2);
  EXPECT_EQ(OptimizerStateTensors(OptimizerKind::kRmsProp), 2);
  EXPECT_EQ(OptimizerStateTensors(OptimizerKind::kMomentum), 1);
  EXPECT_EQ(OptimizerStateTensors(OptimizerKind::kSgd), 0);
}

}  // namespace
}  // namespace paradnn::model
