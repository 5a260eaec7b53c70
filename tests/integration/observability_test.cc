// Installs the build to a temporary prefix, starts the installed
// coordinator (with --metrics-listen) and worker (with the fake runner),
// and checks that /metrics moves as jobs finish, that /healthz and /readyz
// answer, that `paradnn fleet` reports the finished jobs, and that /readyz
// stops answering ready after SIGTERM.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

// Value of the sample line `series` (name with labels, exactly as written).
std::optional<double> Sample(const std::string& exposition, const std::string& series) {
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

// /healthz and /readyz answer 200 on a serving coordinator; other paths 404.
void ExpectHealthEndpoints(int port) {
  std::optional<HttpReply> health = HttpGet(port, "/healthz");
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 200);
  std::optional<HttpReply> ready = HttpGet(port, "/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200) << ready->body;
  std::optional<HttpReply> missing = HttpGet(port, "/nothing");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404);
}

// The metrics of a finished sweep: nothing pending, one sweep done, one
// SubmitSweep timed, a worker known, goodput ratios in [0, 1].
void ExpectEndState(const std::string& last) {
  EXPECT_EQ(Sample(last, "paradnn_jobs{state=\"pending\"}"), 0.0);
  EXPECT_EQ(Sample(last, "paradnn_sweeps{state=\"done\"}"), 1.0);
  EXPECT_EQ(
      Sample(last,
             "paradnn_rpc_duration_seconds_count{method=\"/paradnn.v1.Coordinator/SubmitSweep\"}"),
      1.0)
      << last;
  EXPECT_GE(Sample(last, "paradnn_workers{state=\"idle\",device_kind=\"cpu\"}").value_or(0) +
                Sample(last, "paradnn_workers{state=\"busy\",device_kind=\"cpu\"}").value_or(0),
            1.0)
      << last;
  // The fake runner times nothing (runtime 0); the worker did hold jobs.
  const std::optional<double> scheduling =
      Sample(last, "paradnn_goodput_scheduling_ratio{device_kind=\"cpu\"}");
  ASSERT_TRUE(scheduling.has_value()) << last;
  EXPECT_GT(*scheduling, 0.0);
  EXPECT_LE(*scheduling, 1.0);
  const std::optional<double> runtime =
      Sample(last, "paradnn_goodput_runtime_ratio{device_kind=\"cpu\"}");
  ASSERT_TRUE(runtime.has_value()) << last;
  EXPECT_GE(*runtime, 0.0);
  EXPECT_LE(*runtime, 1.0);
}

// Every coordinator log line is one JSON object.
void ExpectJsonLines(const std::string& text) {
  std::istringstream log(text);
  int lines = 0;
  for (std::string line; std::getline(log, line);) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
    ++lines;
  }
  EXPECT_GT(lines, 0);
}

// `paradnn fleet --sweep` reports the sweep's jobs on one cpu device kind.
void ExpectFleetGoodput(const std::string& address, const std::string& sweep_id, int jobs) {
  CommandResult fleet = RunCommand({BinDir() + "/paradnn", "--coordinator", address, "fleet",
                                    "--sweep", sweep_id, "--format", "json"},
                                   seconds(60));
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  const nlohmann::json goodput = nlohmann::json::parse(fleet.out);
  ASSERT_EQ(goodput.at("device_kinds").size(), 1u) << fleet.out;
  EXPECT_EQ(goodput["device_kinds"][0]["device_kind"], "cpu");
  EXPECT_EQ(std::stoll(goodput["device_kinds"][0]["jobs"].get<std::string>()), jobs);
  EXPECT_GT(goodput["device_kinds"][0]["scheduling"].get<double>(), 0.0);
  EXPECT_LE(goodput["device_kinds"][0]["scheduling"].get<double>(), 1.0);
}

// One scenario, install to SIGTERM: its steps share the processes.
// NOLINTNEXTLINE(readability-function-size): one scenario.
TEST(ObservabilityTest, InstalledCoordinatorMetricsMoveAsJobsFinish) {
  TempDir dir;
  const std::string prefix = dir.File("prefix");
  CommandResult install = RunCommand(
      {"/usr/bin/env", "cmake", "--install", PARADNN_BUILD_DIR, "--prefix", prefix}, seconds(120));
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  const std::string bin = prefix + "/bin";
  ASSERT_TRUE(std::filesystem::exists(bin + "/paradnn-coordinator")) << install.out;
  ASSERT_TRUE(std::filesystem::exists(bin + "/paradnn-worker")) << install.out;

  ChildProcess coordinator;
  coordinator.Start({bin + "/paradnn-coordinator", "--listen", "127.0.0.1:0", "--db",
                     dir.File("m.db"), "--address-file", dir.File("addr"), "--metrics-listen",
                     "127.0.0.1:0", "--metrics-address-file", dir.File("maddr"), "--heartbeat-ms",
                     "200", "--lease-timeout-ms", "5000", "--log-format", "json"},
                    dir.File("coordinator.log"));
  ASSERT_TRUE(WaitFor(
      [&] {
        return std::filesystem::exists(dir.File("maddr")) &&
               std::filesystem::exists(dir.File("addr"));
      },
      seconds(30)))
      << ReadFile(dir.File("coordinator.log"));
  std::string address = ReadFile(dir.File("addr"));
  address = address.substr(0, address.find('\n'));
  std::string metrics_address = ReadFile(dir.File("maddr"));
  const int port = std::stoi(metrics_address.substr(metrics_address.rfind(':') + 1));

  ExpectHealthEndpoints(port);

  std::optional<HttpReply> before = HttpGet(port, "/metrics");
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(before->status, 200);
  EXPECT_EQ(Sample(before->body, "paradnn_results_stored_total"), 0.0) << before->body;
  EXPECT_EQ(Sample(before->body, "paradnn_jobs{state=\"done\"}"), 0.0) << before->body;
  EXPECT_NE(before->body.find("# TYPE paradnn_rpc_duration_seconds histogram"), std::string::npos);

  ChildProcess worker;
  worker.Start({bin + "/paradnn-worker", "--coordinator", address, "--worker-id", "obs-1",
                "--runner", PARADNN_FAKE_RUNNER},
               dir.File("worker.log"));

  constexpr int kJobs = 6;
  const std::string sweep = dir.File("sweep.yaml");
  std::ofstream(sweep) << "name: obs\nfamily: fc\nparams:\n  layer: 1\n  node: {values: [8, 9, 10, "
                          "11, 12, 13]}\n  input: 8\n  output: 4\n  batch: 4\n";
  CommandResult submit = RunCommand(
      {BinDir() + "/paradnn", "--coordinator", address, "submit", sweep, "-q"}, seconds(60));
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string sweep_id = submit.out.substr(0, submit.out.find('\n'));

  // The counts move as results arrive; the DB-derived ones are cached for
  // up to 5 s, so wait for both to settle at the end state.
  std::string last;
  const bool finished = WaitFor(
      [&] {
        std::optional<HttpReply> m = HttpGet(port, "/metrics");
        if (!m || m->status != 200) return false;
        last = m->body;
        return Sample(last, "paradnn_results_stored_total") == kJobs &&
               Sample(last, "paradnn_jobs{state=\"done\"}") == kJobs;
      },
      seconds(120));
  ASSERT_TRUE(finished) << last << ReadFile(dir.File("coordinator.log"))
                        << ReadFile(dir.File("worker.log"));
  ExpectEndState(last);
  ExpectFleetGoodput(address, sweep_id, kJobs);

  ExpectJsonLines(ReadFile(dir.File("coordinator.log")));

  // SIGTERM: /readyz stops answering 200 (503 while draining, then the
  // endpoint closes with the process).
  coordinator.Signal(SIGTERM);
  EXPECT_TRUE(WaitFor(
      [&] {
        std::optional<HttpReply> r = HttpGet(port, "/readyz");
        return !r.has_value() || r->status == 503;
      },
      seconds(30)));
  EXPECT_TRUE(coordinator.Wait(std::chrono::milliseconds(30'000)).has_value());
  EXPECT_FALSE(HttpGet(port, "/healthz").has_value()) << "the endpoint stops with the coordinator";
  worker.Signal(SIGTERM);
  worker.Wait(std::chrono::milliseconds(30'000));
}

}  // namespace
}  // namespace paradnn::testing
