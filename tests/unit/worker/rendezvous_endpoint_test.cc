#include "worker/rendezvous_endpoint.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace paradnn::worker {
namespace {

TEST(RendezvousEndpointTest, KeepsAFixedPort) {
  EXPECT_EQ(ResolveRendezvousPort(1).value_or(-1), 1);
  EXPECT_EQ(ResolveRendezvousPort(29500).value_or(-1), 29500);
  EXPECT_EQ(ResolveRendezvousPort(65535).value_or(-1), 65535);
}

TEST(RendezvousEndpointTest, ZeroChoosesAPortThatCanBeBound) {
  absl::StatusOr<int> port = ResolveRendezvousPort(0);
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_GT(*port, 0);
  EXPECT_LE(*port, 65535);
  // Closed again: free for the runner to listen on.
  EXPECT_TRUE(CheckRendezvousPortFree(*port).ok());
}

TEST(RendezvousEndpointTest, RefusesPortsOutOfRangeNamingTheFlag) {
  for (int64_t port : {int64_t{-1}, int64_t{65536}, int64_t{1} << 40}) {
    const absl::StatusOr<int> resolved = ResolveRendezvousPort(port);
    ASSERT_FALSE(resolved.ok()) << port;
    EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(resolved.status().message()).find("--rendezvous-port: "),
              std::string::npos);
    EXPECT_NE(std::string(resolved.status().message()).find("allowed: 1..65535, or 0"),
              std::string::npos);
  }
}

TEST(RendezvousEndpointTest, SaysWhenAFixedPortIsListenedOn) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);
  const absl::Status status = CheckRendezvousPortFree(port);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(status.message()).find("TCP port " + std::to_string(port)),
            std::string::npos)
      << status;
  ::close(fd);
}

TEST(RendezvousEndpointTest, AcceptsHostNamesAndAddresses) {
  for (const char* address :
       {"", "127.0.0.1", "worker-3.paradnn.svc.cluster.local", "::1", "fe80::1", "host_1"}) {
    EXPECT_TRUE(ValidateAdvertiseAddress(address).ok()) << address;
  }
}

TEST(RendezvousEndpointTest, RefusesWhatIsNoHostNamingTheFlag) {
  for (const std::string& address :
       {std::string("host:29500"), std::string("10.0.0.1:1"), std::string("[::1]"),
        std::string("a host"), std::string("tcp://h"), std::string("h\n"), std::string(254, 'h')}) {
    const absl::Status status = ValidateAdvertiseAddress(address);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_EQ(std::string(status.message()).rfind("--advertise-address: ", 0), 0u) << status;
  }
}

}  // namespace
}  // namespace paradnn::worker
