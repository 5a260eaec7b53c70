// The real-world image classifiers through the built paradnn-runner's
// command line (from $PARADNN_BIN_DIR).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/worker/runner/run_runner.h"

namespace paradnn::runner {
namespace {

TEST(VisionBinaryTest, DescribeMobileNetV1) {
  const RunnerRun r = RunRunner("--describe --family mobilenet_v1 --batch 8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("params").get<int64_t>(), 4231976);
  const int64_t macs = j.at("macs_per_example").get<int64_t>();
  EXPECT_NEAR(static_cast<double>(macs) / 569e6, 1.0, 0.02) << macs;
  EXPECT_DOUBLE_EQ(j.at("model_flops").get<double>(), 6.0 * static_cast<double>(macs) * 8);
  EXPECT_LT(j.at("executed_flops").get<double>(), j.at("model_flops").get<double>());
  EXPECT_GT(j.at("bytes_per_step").get<double>(), 0);
  EXPECT_GT(j.at("peak_memory_estimate_bytes").get<double>(), 0);
  // Defaults are written out.
  EXPECT_EQ(j.at("config").at("params").at("image").get<int64_t>(), 224);
  EXPECT_EQ(j.at("config").at("params").at("output").get<int64_t>(), 1000);
}

// ResNet-50 v1.5 at 224: exactly 4,089,184,256 MACs (torchvision's 4.09 G).
TEST(VisionBinaryTest, DescribeEveryFamily) {
  const struct {
    const char* family;
    int64_t params;
  } cases[] = {{"resnet50", 25557032},
               {"densenet121", 7978856},
               {"mobilenet_v1", 4231976},
               {"squeezenet1_0", 1248424}};
  for (const auto& c : cases) {
    const RunnerRun r = RunRunner(std::string("--describe --family ") + c.family + " --batch 4");
    ASSERT_EQ(r.exit_code, 0) << c.family << ": " << r.out;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("params").get<int64_t>(), c.params) << c.family;
    if (std::string(c.family) == "resnet50") {
      EXPECT_EQ(j.at("macs_per_example").get<int64_t>(), 4089184256);
    }
  }
}

TEST(VisionBinaryTest, SmallConfigMeasuresOk) {
  ExpectShortMeasurementOk("--family squeezenet1_0 --image 64 --output 10 --batch 2");
}

TEST(VisionBinaryTest, ImageBelow32IsAUsageErrorNamingImage) {
  ExpectUsageErrorNaming("--family densenet121 --image 16 --batch 2 --describe", {"--image"});
}

}  // namespace
}  // namespace paradnn::runner
