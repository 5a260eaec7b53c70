#include "common/framing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/address.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::common {
namespace {

v1::RunnerEvent StepEvent(int step, double seconds) {
  v1::RunnerEvent event;
  event.mutable_step()->set_step(step);
  event.mutable_step()->set_seconds(seconds);
  return event;
}

TEST(FramingTest, RoundTripsThroughAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_TRUE(WriteFrame(fds[1], StepEvent(1, 0.5)).ok());
  ASSERT_TRUE(WriteFrame(fds[1], StepEvent(2, 0.25)).ok());
  close(fds[1]);
  v1::RunnerEvent got;
  ASSERT_TRUE(*ReadFrame(fds[0], &got));
  EXPECT_EQ(got.step().step(), 1);
  ASSERT_TRUE(*ReadFrame(fds[0], &got));
  EXPECT_DOUBLE_EQ(got.step().seconds(), 0.25);
  EXPECT_FALSE(*ReadFrame(fds[0], &got));  // clean end of stream
  close(fds[0]);
}

TEST(FramingTest, TruncatedFrameIsAnError) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string frame = EncodeFrame(StepEvent(3, 1.0));
  ASSERT_EQ(write(fds[1], frame.data(), frame.size() - 2), static_cast<ssize_t>(frame.size() - 2));
  close(fds[1]);
  v1::RunnerEvent got;
  EXPECT_FALSE(ReadFrame(fds[0], &got).ok());
  close(fds[0]);
}

TEST(FrameDecoderTest, ReassemblesFramesSplitAnywhere) {
  const std::string stream = EncodeFrame(StepEvent(1, 0.1)) + EncodeFrame(StepEvent(2, 0.2));
  FrameDecoder decoder;
  std::vector<std::string> payloads;
  for (char c : stream) {
    ASSERT_TRUE(decoder.Append(&c, 1).ok());
    std::string payload;
    while (decoder.Next(&payload)) payloads.push_back(payload);
  }
  ASSERT_EQ(payloads.size(), 2u);
  v1::RunnerEvent second;
  ASSERT_TRUE(second.ParseFromString(payloads[1]));
  EXPECT_EQ(second.step().step(), 2);
  EXPECT_EQ(decoder.buffered_bytes(), 0u);
}

TEST(FrameDecoderTest, RefusesOversizedFrame) {
  FrameDecoder decoder;
  const char header[4] = {'\xff', '\xff', '\xff', '\x7f'};
  EXPECT_FALSE(decoder.Append(header, 4).ok());
}

TEST(AddressTest, AcceptsHostPortAndUnix) {
  EXPECT_TRUE(ValidateAddress("127.0.0.1:7070", "--listen").ok());
  EXPECT_TRUE(ValidateAddress("unix:/tmp/x.sock", "--listen").ok());
  EXPECT_TRUE(ValidateAddress("[::1]:0", "--listen").ok());
  absl::Status bad = ValidateAddress("localhost", "--listen");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--listen"), std::string::npos);
  EXPECT_FALSE(ValidateAddress("h:99999", "--listen").ok());
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:1"));
  EXPECT_TRUE(IsLoopbackAddress("unix:/x"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:7070"));
}

// Loopback is what an address is, not how it begins: names are resolved,
// literals parsed (issue 36: "127.invalid" counted as loopback).
TEST(AddressTest, LoopbackIsResolvedNotMatchedAsText) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:1"));
  EXPECT_TRUE(IsLoopbackAddress("127.45.6.7:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::ffff:127.0.0.1]:1"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:1"));     // /etc/hosts: loopback only
  EXPECT_FALSE(IsLoopbackAddress("127.invalid:1"));  // a name (that resolves to nothing)
  EXPECT_FALSE(IsLoopbackAddress("[::]:1"));
  EXPECT_FALSE(IsLoopbackAddress("[::ffff:10.0.0.1]:1"));
  EXPECT_FALSE(IsLoopbackAddress("10.1.2.3:1"));
  EXPECT_FALSE(IsLoopbackAddress(":7070"));
}

// A Host header is never resolved: a web page's own name pointed at
// 127.0.0.1 (DNS rebinding) must not pass.
TEST(AddressTest, LoopbackHostHeaderIsALiteralOrLocalhost) {
  for (const char* host : {"127.0.0.1", "127.0.0.1:9464", "[::1]:9464", "[::1]", "localhost",
                           "LocalHost:80", "127.1.2.3:8080"}) {
    EXPECT_TRUE(IsLoopbackHostHeader(host)) << host;
  }
  for (const char* host : {"evil.example", "evil.example:9464", "127.invalid:9464", "",
                           "10.0.0.1:9464", "localhost.evil.example", "[::2]:1", "0.0.0.0"}) {
    EXPECT_FALSE(IsLoopbackHostHeader(host)) << host;
  }
}

// Where a gang's rendezvous is reached when its worker does not say: the
// address its stream came from.
TEST(AddressTest, PeerHostIsTheAddressAStreamCameFrom) {
  EXPECT_EQ(PeerHost("ipv4:10.0.0.5:41234"), "10.0.0.5");
  EXPECT_EQ(PeerHost("ipv6:[fd00::5]:41234"), "fd00::5");
  EXPECT_EQ(PeerHost("ipv6:[::1]:1"), "::1");
  EXPECT_EQ(PeerHost("unix:/tmp/coordinator.sock"), "127.0.0.1");
  EXPECT_EQ(PeerHost("unix:"), "127.0.0.1");
  for (const char* unreadable : {"", "ipv4:", "ipv6:fd00::5:1", "ipv6:[fd00::5", "tcp:1.2.3.4:5"}) {
    EXPECT_EQ(PeerHost(unreadable), "") << unreadable;
  }
}

TEST(AddressTest, FlagBeatsEnvironmentBeatsDefault) {
  unsetenv(kCoordinatorEnv);
  EXPECT_EQ(*ResolveCoordinatorAddress(""), kDefaultCoordinatorAddress);
  setenv(kCoordinatorEnv, "unix:/tmp/env.sock", 1);
  EXPECT_EQ(*ResolveCoordinatorAddress(""), "unix:/tmp/env.sock");
  EXPECT_EQ(*ResolveCoordinatorAddress("10.0.0.1:1"), "10.0.0.1:1");
  unsetenv(kCoordinatorEnv);
}

}  // namespace
}  // namespace paradnn::common
