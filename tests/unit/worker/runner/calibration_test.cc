// Calibration with LibTorch: the roofs are positive and ordered, and the
// bandwidth sweep shows the cache plateau above memory. No timing thresholds
// beyond these ordering facts.
#include "worker/runner/calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace paradnn::runner {
namespace {

bool CpuHasFlag(const std::string& flag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string word; words >> word;) {
      if (word == flag) return true;
    }
    return false;
  }
  return false;
}

class CalibrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    CalibrationOptions options;
    options.matmul_seconds_per_dtype = 1.5;
    options.bandwidth_seconds_per_point = 0.05;
    options.bandwidth_bytes = {32LL << 10, 256LL << 10, 1LL << 20, 256LL << 20};
    calibration_ = new Calibration(Calibrate(options));
  }
  static void TearDownTestSuite() { delete calibration_; }
  static const v1::MatmulRoof* Roof(const std::string& dtype,
                                    const std::string& kernel = "matmul") {
    for (const v1::MatmulRoof& roof : calibration_->matmul_roofs) {
      if (roof.dtype() == dtype && roof.kernel() == kernel) return &roof;
    }
    return nullptr;
  }
  static Calibration* calibration_;
};
Calibration* CalibrationTest::calibration_ = nullptr;

TEST_F(CalibrationTest, RoofsArePositiveWithTheShapeThatReachedThem) {
  EXPECT_GT(calibration_->threads, 0);
  ASSERT_GE(calibration_->matmul_roofs.size(), 2u);
  EXPECT_EQ(calibration_->matmul_roofs[0].dtype(), "float32");
  EXPECT_EQ(calibration_->matmul_roofs[1].dtype(), "bfloat16");
  for (const v1::MatmulRoof& roof : calibration_->matmul_roofs) {
    EXPECT_GT(roof.flops_per_sec(), 0) << roof.dtype();
    if (roof.kernel() == "conv") continue;
    EXPECT_EQ(roof.kernel(), "matmul");
    EXPECT_GE(roof.m(), 1024) << roof.dtype();
    EXPECT_GE(roof.n(), 1024) << roof.dtype();
    EXPECT_GE(roof.k(), 1024) << roof.dtype();
    EXPECT_EQ(roof.datasheet_flops_per_sec(), 0) << roof.dtype();
  }
}

TEST_F(CalibrationTest, ConvolutionRoofsOfEveryDtypeLibTorchConvolves) {
  // oneDNN's convolutions are their own kernel path: a CNN is measured
  // against them, not against the BLAS.
  for (const char* dtype : {"float32", "bfloat16"}) {
    const v1::MatmulRoof* conv = Roof(dtype, "conv");
    ASSERT_NE(conv, nullptr) << dtype;
    EXPECT_GT(conv->flops_per_sec(), 0) << dtype;
    // The implicit GEMM of one of the calibration shapes (batch 32, 28x28).
    EXPECT_EQ(conv->m(), 32 * 28 * 28) << dtype;
    EXPECT_TRUE(conv->k() == 128 * 9 || conv->k() == 256) << conv->k();
  }
}

TEST_F(CalibrationTest, Bfloat16RoofIsAtLeastFloat32WhereTheCpuHasBf16Instructions) {
  if (!CpuHasFlag("avx512_bf16") && !CpuHasFlag("amx_bf16")) {
    GTEST_SKIP() << "no avx512_bf16 or amx_bf16: bfloat16 matmuls are emulated here";
  }
  const v1::MatmulRoof* fp32 = Roof("float32");
  const v1::MatmulRoof* bf16 = Roof("bfloat16");
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(bf16, nullptr);
  EXPECT_GE(bf16->flops_per_sec(), fp32->flops_per_sec())
      << "bfloat16 " << bf16->flops_per_sec() / 1e9 << " GFLOP/s, float32 "
      << fp32->flops_per_sec() / 1e9 << " GFLOP/s";
}

TEST_F(CalibrationTest, CacheResidentBandwidthExceedsMemoryBandwidth) {
  for (const std::string kernel : {"copy", "triad"}) {
    double cache_best = 0, memory = 0;
    int64_t last_bytes = 0;
    int points = 0;
    for (const v1::BandwidthPoint& point : calibration_->bandwidth) {
      if (point.kernel() != kernel) continue;
      ++points;
      EXPECT_GT(point.bytes_per_sec(), 0) << kernel << " " << point.bytes();
      EXPECT_GT(point.bytes(), last_bytes) << kernel << ": sizes increase";
      last_bytes = point.bytes();
      if (point.bytes() <= (1LL << 20)) cache_best = std::max(cache_best, point.bytes_per_sec());
      memory = point.bytes_per_sec();  // the last, largest working set
    }
    EXPECT_EQ(points, 4) << kernel;
    EXPECT_GT(last_bytes, 200LL << 20) << kernel;
    EXPECT_GT(cache_best, memory) << kernel << ": cache " << cache_best / 1e9 << " GB/s, memory "
                                  << memory / 1e9 << " GB/s";
  }
}

TEST(CalibratedPlatformTest, KeepsTheUncalibratedFingerprintAndStampsTheTime) {
  CalibrationOptions options;
  options.matmul_seconds_per_dtype = 0.1;
  options.bandwidth_seconds_per_point = 0.01;
  options.bandwidth_bytes = {64LL << 10};
  const v1::Platform platform = CalibratedPlatform(options);
  EXPECT_FALSE(platform.fingerprint().empty());
  EXPECT_GT(platform.calibrated_unix_ms(), 1'600'000'000'000);
  EXPECT_GE(platform.matmul_roofs_size(), 2);
  EXPECT_EQ(platform.bandwidth_size(), 2);  // copy and triad at one size
  // The host-speed probe, at the calibration's thread count, below the
  // float32 GEMM roof of larger shapes but not absurdly so. Only the GEMM
  // one: the probe is a GEMM, and a conv roof can sit 25x above it (oneDNN
  // convs beside OpenBLAS's Prescott GEMM on an AVX-512 Xeon: 274 GFLOP/s
  // against an 11 GFLOP/s probe).
  EXPECT_GT(platform.probe_flops_per_sec(), 0);
  EXPECT_GE(platform.probe_threads(), 1);
  for (const v1::MatmulRoof& roof : platform.matmul_roofs()) {
    if (roof.dtype() == "float32" && roof.kernel() == "matmul") {
      EXPECT_GT(platform.probe_flops_per_sec(), 0.05 * roof.flops_per_sec());
    }
  }
}

}  // namespace
}  // namespace paradnn::runner
