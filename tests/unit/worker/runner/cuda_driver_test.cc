#include "worker/runner/cuda_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "platform/silicon_peak.h"

namespace paradnn::runner {
namespace {

using ::testing::HasSubstr;

TEST(CudaDriverTest, ReadsTheGpuThroughTheDriverLibrary) {
  absl::StatusOr<CudaDeviceFacts> facts = QueryCudaDevice(0, PARADNN_FAKE_LIBCUDA);
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->name, "NVIDIA H200");
  EXPECT_EQ(facts->device_count, 1);
  EXPECT_EQ(facts->major, 9);
  EXPECT_EQ(facts->minor, 0);
  EXPECT_EQ(facts->sm_count, 132);
  EXPECT_DOUBLE_EQ(facts->max_clock_hz, 1.98e9);
  EXPECT_EQ(facts->memory_bytes, 150754820096);
  EXPECT_EQ(CudaVersionText(facts->driver_version), "13.0");
  // 2 x 3.201 GHz x 6144 bits / 8: H200's 4.8 TB/s HBM3e.
  EXPECT_NEAR(TheoreticalMemoryBandwidth(*facts), 4.917e12, 1e9);
  // The facts give Hopper's dense tensor peak: 132 SMs x 1.98 GHz x 4096.
  const std::vector<v1::SiliconPeak> peaks = platform::CudaSiliconPeaks(
      {facts->major, facts->minor, facts->sm_count, facts->max_clock_hz, facts->name});
  const v1::SiliconPeak* bf16 = platform::FindSiliconPeak(peaks, "bfloat16");
  ASSERT_NE(bf16, nullptr);
  EXPECT_NEAR(bf16->flops_per_sec(), 132 * 1.98e9 * 4096, 1e9);
}

TEST(CudaDriverTest, SaysWhatIsMissing) {
  absl::StatusOr<CudaDeviceFacts> no_driver = QueryCudaDevice(0, "/nonexistent/libcuda.so.1");
  EXPECT_EQ(no_driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(no_driver.status().message()), HasSubstr("no NVIDIA driver"));
  absl::StatusOr<CudaDeviceFacts> not_a_driver = QueryCudaDevice(0, "libm.so.6");
  EXPECT_THAT(std::string(not_a_driver.status().message()),
              HasSubstr("lacks a CUDA driver API entry point"));
  absl::StatusOr<CudaDeviceFacts> second = QueryCudaDevice(1, PARADNN_FAKE_LIBCUDA);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("the driver sees 1 GPU(s)"));
  setenv("FAKE_CUDA_INIT_ERROR", "100", 1);
  absl::StatusOr<CudaDeviceFacts> no_device = QueryCudaDevice(0, PARADNN_FAKE_LIBCUDA);
  unsetenv("FAKE_CUDA_INIT_ERROR");
  EXPECT_THAT(std::string(no_device.status().message()),
              HasSubstr("cuInit failed with error 100 (no CUDA-capable device is detected)"));
}

TEST(CudaDriverTest, VersionText) {
  EXPECT_EQ(CudaVersionText(12040), "12.4");
  EXPECT_EQ(CudaVersionText(11080), "11.8");
  EXPECT_EQ(CudaVersionText(0), "");
}

}  // namespace
}  // namespace paradnn::runner

namespace paradnn::runner {
namespace {

TEST(CudaDriverTest, DeviceIndex) {
  EXPECT_EQ(*CudaDeviceIndex("cuda"), 0);
  EXPECT_EQ(*CudaDeviceIndex("cuda:3"), 3);
  for (const char* bad : {"cuda:", "cuda:-1", "cuda:x", "gpu", "cpu"}) {
    EXPECT_THAT(std::string(CudaDeviceIndex(bad).status().message()),
                ::testing::HasSubstr("is not cuda or cuda:N"))
        << bad;
  }
}

TEST(CudaDriverTest, BuildVersionsFromShowConfig) {
  const std::string cuda_build =
      "PyTorch built with:\n  - GCC 11.2\n  - CPU capability usage: AVX512\n"
      "  - CUDA Runtime 13.0\n  - NVCC architecture flags: -gencode;arch=compute_90,code=sm_90\n"
      "  - CuDNN 91.0  (built against CUDA 13.0)\n  - Magma 2.6.1\n";
  const CudaBuildVersions versions = ParseCudaBuildVersions(cuda_build);
  EXPECT_EQ(versions.cuda_runtime, "13.0");
  EXPECT_EQ(versions.cudnn, "91.0");
  const CudaBuildVersions cpu = ParseCudaBuildVersions("PyTorch built with:\n  - GCC 12.2\n");
  EXPECT_EQ(cpu.cuda_runtime, "");
  EXPECT_EQ(cpu.cudnn, "");
}

}  // namespace
}  // namespace paradnn::runner
