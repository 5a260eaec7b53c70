// The CNN family through the built paradnn-runner's command line
// (from $PARADNN_BIN_DIR).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/worker/runner/run_runner.h"

namespace paradnn::runner {
namespace {

TEST(CnnBinaryTest, DescribeResNet50) {
  const RunnerRun r = RunRunner(
      "--family cnn --block_fn bottleneck --block 1 --blocks 3,4,6,3 --filter 64 --image 224 "
      "--output 1000 --batch 64 --describe");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("params").get<int64_t>(), 25557032);
  EXPECT_EQ(j.at("macs_per_example").get<int64_t>(), 4089184256);
  EXPECT_DOUBLE_EQ(j.at("model_flops").get<double>(), 6.0 * 4089184256 * 64);
  EXPECT_GT(j.at("bytes_per_step").get<double>(), 0);
  EXPECT_GT(j.at("peak_memory_estimate_bytes").get<double>(), 0);
}

TEST(CnnBinaryTest, SmallConfigMeasuresOk) {
  ExpectShortMeasurementOk(
      "--family cnn --block_fn residual --block 1 --filter 4 --image 193 --output 10 --batch 2");
}

TEST(CnnBinaryTest, Image192IsAUsageErrorNamingImage) {
  ExpectUsageErrorNaming(
      "--family cnn --block_fn residual --block 1 --filter 4 --image 192 --output 10 --batch 2 "
      "--describe",
      {"--image", "7x7 average pool"});
}

}  // namespace
}  // namespace paradnn::runner
