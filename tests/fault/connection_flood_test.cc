// Connections with no token and no HTTP/2 that eat the coordinator's file
// descriptors, against a real process started with a small limit: /readyz
// says not ready while descriptors run short, and the coordinator closes
// connections that never finish their handshake (10 s) so that it serves
// again without anyone closing them. Past the limit gRPC 1.51 stops
// listening for good (the limit is raised to the hard one at start and the
// unit's LimitNOFILE is 65536, so that readiness says so long before): the
// coordinator then drains and restarts in place, and a worker connected
// before the flood works on after it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

int Port(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

// `count` bare TCP connections to `address` (no HTTP/2, no token); the ones
// the kernel took.
std::vector<int> Flood(const std::string& address, int count) {
  std::vector<int> flood;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(Port(address)));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      flood.push_back(fd);
    } else {
      close(fd);
    }
  }
  return flood;
}

// A coordinator in a temporary folder, its descriptors limited.
class ConnectionFloodTest : public ::testing::Test {
 protected:
  // Starts the coordinator on `db` with at most `nofile` open descriptors.
  void StartWithDescriptors(const std::string& db, int nofile) {
    const std::string limit = "--nofile=" + std::to_string(nofile) + ":" + std::to_string(nofile);
    started_ = StartCoordinatorWithMetrics(&coordinator_, dir_, db, {"/usr/bin/prlimit", limit});
    ASSERT_FALSE(started_.address.empty()) << ReadFile(dir_.File("coordinator.log"));
  }

  // SIGTERMs the coordinator and expects a clean exit (its log where not).
  void ExpectCleanExit() {
    coordinator_.Signal(SIGTERM);
    std::optional<int> status = coordinator_.Wait(std::chrono::milliseconds(20000));
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << ReadFile(dir_.File("coordinator.log"));
  }

  TempDir dir_;
  ChildProcess coordinator_;
  StartedCoordinator started_;
};

TEST_F(ConnectionFloodTest, RunningOutOfDescriptorsIsReportedAndSurvived) {
  ASSERT_NO_FATAL_FAILURE(StartWithDescriptors("flood.db", 256));
  const std::string& address = started_.address;
  const int metrics = started_.metrics_port;
  ASSERT_EQ(HttpStatus(metrics, "/readyz", nullptr), 200);

  // 210 bare TCP connections to the gRPC port: with the ~31 descriptors
  // the process holds anyway, past 90 % of 256 but short of all.
  std::vector<int> flood = Flood(address, 210);
  ASSERT_EQ(flood.size(), 210u);
  std::string body;
  ASSERT_TRUE(WaitFor(
      [&] {
        return HttpStatus(metrics, "/readyz", &body) == 503 &&
               body.find("file descriptors:") != std::string::npos;
      },
      seconds(5)))
      << body << ReadFile(dir_.File("coordinator.log"));
  EXPECT_NE(body.find("of 256 open; new connections may be refused"), std::string::npos) << body;
  // Nobody closes them: the handshake timeout gives the descriptors back.
  ASSERT_TRUE(WaitFor([&] { return HttpStatus(metrics, "/readyz", nullptr) == 200; }, seconds(40)))
      << ReadFile(dir_.File("coordinator.log"));
  CommandResult status_cli = RunCommand({BinDir() + "/paradnn", "--coordinator", address, "status"},
                                        std::chrono::milliseconds(10000));
  EXPECT_EQ(status_cli.exit_code, 0) << status_cli.err;
  EXPECT_TRUE(coordinator_.running());
  for (int fd : flood) close(fd);
  ExpectCleanExit();
}

// Idle connections to the HTTP port (the dashboard's and /metrics') that
// never send a request: the coordinator keeps at most 256 of them and closes
// the one waiting longest for each new connection, so that /metrics and
// /readyz answer at once even with more idle connections than descriptors.
TEST_F(ConnectionFloodTest, IdleHttpConnectionsAreEvictedSoThatMetricsAnswer) {
  ASSERT_NO_FATAL_FAILURE(StartWithDescriptors("idle.db", 512));
  const std::string metrics_address = "127.0.0.1:" + std::to_string(started_.metrics_port);
  // More than the 512 descriptors the process may hold in all.
  std::vector<int> idle = Flood(metrics_address, 700);
  ASSERT_EQ(idle.size(), 700u);
  // Answered while every idle connection is still open on our side (the
  // server's own idle timeout, 10 s, would otherwise be what frees them).
  std::string body;
  EXPECT_EQ(HttpStatus(started_.metrics_port, "/metrics", &body), 200) << body;
  EXPECT_NE(body.find("paradnn_"), std::string::npos);
  std::string ready;
  EXPECT_EQ(HttpStatus(started_.metrics_port, "/readyz", &ready), 200) << ready;
  // Every idle connection came before the /metrics one; all but the 256
  // newest were closed to make room (and say so), before their own timeout.
  const std::string evicted_line = "\nparadnn_http_idle_connections_closed_total ";
  const size_t at = body.find(evicted_line);
  ASSERT_NE(at, std::string::npos) << "no eviction counter in /metrics";
  EXPECT_GE(std::stoll(body.substr(at + evicted_line.size())), 700 + 1 - 256) << body.substr(at);
  char byte = 0;
  EXPECT_EQ(recv(idle[0], &byte, 1, MSG_DONTWAIT), 0) << "the oldest idle connection is still open";
  for (int fd : idle) close(fd);
  EXPECT_TRUE(coordinator_.running()) << ReadFile(dir_.File("coordinator.log"));
  ExpectCleanExit();
}

TEST_F(ConnectionFloodTest, PastTheLimitTheCoordinatorRestartsInPlace) {
  ASSERT_NO_FATAL_FAILURE(StartWithDescriptors("flood.db", 256));
  const std::string& address = started_.address;
  ChildProcess worker;
  worker.Start(
      {BinDir() + "/paradnn-worker", "--coordinator", address, "--worker-id", "steady", "--device",
       "cpu", "--calibrate", "never", "--max-backoff-ms", "500", "--runner", PARADNN_FAKE_RUNNER},
      dir_.File("worker.log"));
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {BinDir() + "/paradnn", "--coordinator", address});
    return RunCommand(args, std::chrono::milliseconds(60000));
  };
  ASSERT_TRUE(WaitFor([&] { return cli({"workers"}).out.find("steady") != std::string::npos; },
                      seconds(30)))
      << ReadFile(dir_.File("worker.log"));

  // More connections than descriptors: gRPC's accept4 fails with EMFILE.
  std::vector<int> flood = Flood(address, 300);
  ASSERT_TRUE(WaitFor(
      [&] {
        return ReadFile(dir_.File("coordinator.log")).find("restarting in place:") !=
               std::string::npos;
      },
      seconds(30)))
      << ReadFile(dir_.File("coordinator.log"));
  const std::string log = ReadFile(dir_.File("coordinator.log"));
  EXPECT_NE(log.find("Failed accept4: Too many open files"), std::string::npos) << log;
  EXPECT_NE(log.find("gRPC stopped accepting connections on " + address), std::string::npos) << log;
  for (int fd : flood) close(fd);

  // The same process (pid) on the same addresses, ready, serving the CLI
  // and the worker that was connected before.
  ASSERT_TRUE(WaitFor([&] { return HttpStatus(started_.metrics_port, "/readyz", nullptr) == 200; },
                      seconds(30)))
      << ReadFile(dir_.File("coordinator.log"));
  EXPECT_TRUE(coordinator_.running());
  EXPECT_EQ(ReadFile(dir_.File("addr")), address + "\n");
  const std::string sweep = dir_.File("sweep.yaml");
  std::ofstream(sweep)
      << "name: after-flood\nfamily: fc\nparams:\n  layer: 1\n  node: {values: [8, 9, 10]}\n"
         "  input: 8\n  output: 4\n  batch: 4\n";
  CommandResult submit = cli({"submit", sweep, "-q"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err << ReadFile(dir_.File("coordinator.log"));
  CommandResult watch = cli({"watch", submit.out.substr(0, submit.out.find('\n'))});
  EXPECT_EQ(watch.exit_code, 0) << watch.err << ReadFile(dir_.File("worker.log"));
  CommandResult results =
      cli({"results", submit.out.substr(0, submit.out.find('\n')), "--format", "csv"});
  EXPECT_EQ(results.exit_code, 0) << results.err;
  EXPECT_NE(results.out.find("steady"), std::string::npos) << results.out;

  worker.Signal(SIGTERM);
  EXPECT_TRUE(worker.Wait(std::chrono::milliseconds(20000)).has_value());
  ExpectCleanExit();
}

}  // namespace
}  // namespace paradnn::testing
