#include "worker/device_spec.h"

#include <gtest/gtest.h>

namespace paradnn::worker {
namespace {

TEST(DeviceSpecTest, AcceptsKnownDevices) {
  for (const char* device : {"cpu", "cuda", "cuda:0", "cuda:7", "cuda:1023", "tpu"}) {
    EXPECT_TRUE(ValidateDevice(device).ok()) << device;
  }
}

TEST(DeviceSpecTest, RejectsOthersNamingTheFlag) {
  for (const char* device :
       {"", "gpu", "CPU", "cuda:", "cuda:-1", "cuda:+1", "cuda:x", "cuda:1024", "cpu:0"}) {
    absl::Status status = ValidateDevice(device);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << device;
    EXPECT_NE(status.message().find("--device"), absl::string_view::npos) << status;
  }
}

TEST(DeviceSpecTest, KindDropsTheIndex) {
  EXPECT_EQ(DeviceKind("cpu"), "cpu");
  EXPECT_EQ(DeviceKind("cuda"), "cuda");
  EXPECT_EQ(DeviceKind("cuda:3"), "cuda");
  EXPECT_EQ(DeviceKind("tpu"), "tpu");
}

}  // namespace
}  // namespace paradnn::worker
