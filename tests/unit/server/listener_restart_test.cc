#include "server/listener_restart.h"

#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace paradnn::server {
namespace {

using Args = std::vector<std::string>;

TEST(ArgumentsForRestartTest, BoundAddressesReplaceTheAskedOnesInEitherSpelling) {
  EXPECT_EQ(ArgumentsForRestart({"coord", "--listen", "127.0.0.1:0", "--db", "a.db",
                                 "--metrics-listen=127.0.0.1:0", "-v"},
                                "127.0.0.1:41234", "127.0.0.1:9464"),
            (Args{"coord", "--db", "a.db", "-v", "--listen=127.0.0.1:41234",
                  "--metrics-listen=127.0.0.1:9464"}));
}

TEST(ArgumentsForRestartTest, AddressesFromTheEnvironmentAreFixedOnTheCommandLine) {
  // --listen came from PARADNN_LISTEN or a config file: the command line,
  // which wins over both, carries the bound port.
  EXPECT_EQ(ArgumentsForRestart({"coord", "--db", "a.db"}, "0.0.0.0:50051", ""),
            (Args{"coord", "--db", "a.db", "--listen=0.0.0.0:50051"}));
}

TEST(ArgumentsForRestartTest, TheProgramNameIsKeptEvenIfItLooksLikeAFlag) {
  EXPECT_EQ(ArgumentsForRestart({"--listen", "x"}, "unix:/run/p.sock", ""),
            (Args{"--listen", "x", "--listen=unix:/run/p.sock"}));
}

TEST(GrpcListenerFailureTest, AFailedAcceptInGrpcsLogIsReported) {
  ForwardGrpcLogsToSpdlog();
  grpc_init();                                         // reads the verbosity: errors are logged
  gpr_log(GPR_ERROR, "Failed to add port to server");  // not the listener giving up
  EXPECT_EQ(GrpcListenerFailure(), "");
  // What tcp_server_posix.cc logs before it stops accepting.
  gpr_log(GPR_ERROR, "Failed accept4: %s", "Too many open files");
  EXPECT_EQ(GrpcListenerFailure(), "Failed accept4: Too many open files");
  grpc_shutdown();
}

}  // namespace
}  // namespace paradnn::server
