// WorkerAgent against an in-process fake WorkerGateway (gRPC sync service
// on 127.0.0.1) and fake_runner children: the stream protocol of
// docs/contracts.md, acks, cancels, reconnects and the shutdown drain.
#include "worker/worker_agent.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/version.h"
#include "paradnn/v1/coordinator.grpc.pb.h"
#include "tests/unit/worker/fake_gateway.h"
#include "tests/unit/worker/fake_runner_path.h"

namespace paradnn::worker {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// An agent on its own io_context thread, stopped and joined at the end.
class AgentHarness {
 public:
  explicit AgentHarness(const std::string& address,
                        std::function<void(WorkerAgentOptions&)> tweak = nullptr) {
    WorkerAgentOptions options;
    options.coordinator_address = address;
    options.worker_id = "test-worker";
    options.device = "cpu";
    options.platform.set_fingerprint("test-fingerprint");
    options.platform.set_device_kind("cpu");
    options.runner.runner_path = PARADNN_FAKE_RUNNER;
    options.initial_backoff = milliseconds(50);
    options.max_backoff = milliseconds(200);
    options.backoff_seed = 7;
    options.progress_interval = milliseconds(0);
    options.flush_timeout = milliseconds(3000);
    options.close_timeout = milliseconds(2000);
    if (tweak) tweak(options);
    agent_ = std::make_unique<WorkerAgent>(io_, options);
    agent_->Start([this] { stopped_.set_value(); });
    thread_ = std::thread([this] { io_.run(); });
  }

  ~AgentHarness() {
    if (thread_.joinable()) {
      Shutdown();
      WaitStopped();
    }
  }

  // Runs `fn` on the agent's thread and returns its value.
  template <typename Fn>
  auto OnAgentThread(Fn fn) {
    std::promise<decltype(fn(*agent_))> promise;
    auto future = promise.get_future();
    boost::asio::post(io_, [&] { promise.set_value(fn(*agent_)); });
    return future.get();
  }

  // Polls `predicate` on the agent's thread until it holds or kWait passes.
  bool EventuallyOnAgent(const std::function<bool(WorkerAgent&)>& predicate) {
    const steady_clock::time_point deadline = steady_clock::now() + kWait;
    while (steady_clock::now() < deadline) {
      if (OnAgentThread([&](WorkerAgent& agent) { return predicate(agent); })) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  void Shutdown() {
    boost::asio::post(io_, [this] { agent_->Shutdown(); });
  }

  // Reads the agent once it stopped (WaitStopped joined its thread).
  template <typename Fn>
  auto ReadAfterStop(Fn fn) {
    return fn(*agent_);
  }

  // True if the agent stopped (and its io_context ran dry) within `timeout`.
  bool WaitStopped(milliseconds timeout = kWait) {
    std::future<void> stopped = stopped_.get_future();
    if (stopped.wait_for(timeout) != std::future_status::ready) return false;
    thread_.join();
    return true;
  }

 private:
  boost::asio::io_context io_;
  std::unique_ptr<WorkerAgent> agent_;
  std::promise<void> stopped_;
  std::thread thread_;
};

std::string Address(int port) { return "127.0.0.1:" + std::to_string(port); }

// A fake gateway on a free port and an agent connected to it, past the
// hello and its ack: where the tests that assign jobs start. The agent is
// declared after the gateway, so it stops before the gateway goes away.
class ConnectedAgentTest : public ::testing::Test {
 protected:
  void Connect(std::function<void(WorkerAgentOptions&)> tweak = nullptr) {
    gateway_.Start(0);
    agent_.emplace(Address(gateway_.port), std::move(tweak));
    ASSERT_GE(gateway_.service->WaitFor(IsHello), 0);
    ASSERT_TRUE(gateway_.service->Send(HelloAck()));
  }

  FakeGateway& service() { return *gateway_.service; }
  AgentHarness& agent() { return *agent_; }

 private:
  GatewayServer gateway_;
  std::optional<AgentHarness> agent_;
};

TEST(WorkerAgentTest, HelloStartedProgressResultThenAckDropsTheResult) {
  GatewayServer gateway;
  gateway.Start(0);
  AgentHarness agent(Address(gateway.port));

  const int hello_at = gateway.service->WaitFor(IsHello);
  ASSERT_GE(hello_at, 0);
  const v1::WorkerHello hello = gateway.service->received()[hello_at].hello();
  EXPECT_EQ(hello.worker_id(), "test-worker");
  EXPECT_EQ(hello.device_kind(), "cpu");
  EXPECT_EQ(hello.version(), common::kVersion);
  EXPECT_EQ(hello.platform().fingerprint(), "test-fingerprint");
  EXPECT_EQ(hello.unacked_results(), 0);

  ASSERT_TRUE(gateway.service->Send(HelloAck()));
  ASSERT_TRUE(gateway.service->Send(Assignment(7, 1, "ok")));
  const int started_at = gateway.service->WaitFor(IsStarted(7));
  const int result_at = gateway.service->WaitFor(IsResult(7));
  ASSERT_GE(started_at, 0);
  ASSERT_GE(result_at, 0);
  EXPECT_LT(started_at, result_at);

  const std::vector<v1::WorkerMessage> received = gateway.service->received();
  int progress = 0;
  for (int i = started_at; i < result_at; ++i) progress += received[i].has_progress();
  EXPECT_GE(progress, 1);
  const v1::JobResult& result = received[result_at].result();
  EXPECT_EQ(result.attempt_id(), 1);
  EXPECT_EQ(result.measurement().outcome(), v1::OK) << result.measurement().error();
  EXPECT_DOUBLE_EQ(result.measurement().examples_per_sec(), 123);
  EXPECT_EQ(result.measurement().config().family(), "fc");
  EXPECT_EQ(result.measurement().device(), "cpu");

  // Heartbeats keep coming at the acknowledged interval.
  EXPECT_GE(gateway.service->WaitFor(IsHeartbeat, result_at), 0);

  EXPECT_EQ(agent.OnAgentThread([](WorkerAgent& a) { return a.unacked_results(); }), 1u);
  ASSERT_TRUE(gateway.service->Send(Ack(7, 1)));
  EXPECT_TRUE(agent.EventuallyOnAgent([](WorkerAgent& a) { return a.unacked_results() == 0; }));

  // Nothing left to flush: the stream is half-closed and the agent stops.
  agent.Shutdown();
  EXPECT_TRUE(agent.WaitStopped());
  EXPECT_TRUE(gateway.service->WaitForEndedStreams(1));
}

TEST(WorkerAgentTest, ReconnectsAfterCoordinatorRestartAndResendsUnackedResult) {
  auto first = std::make_unique<GatewayServer>();
  first->Start(0);
  const int port = first->port;
  AgentHarness agent(Address(port));

  ASSERT_GE(first->service->WaitFor(IsHello), 0);
  ASSERT_TRUE(first->service->Send(HelloAck()));
  ASSERT_TRUE(first->service->Send(Assignment(11, 5, "ok")));
  ASSERT_GE(first->service->WaitFor(IsResult(11)), 0);
  first->Stop();  // no ack: the coordinator went away before committing
  first.reset();

  GatewayServer second;
  second.Start(port);
  ASSERT_EQ(second.port, port);
  const int hello_at = second.service->WaitFor(IsHello);
  ASSERT_GE(hello_at, 0);
  EXPECT_EQ(second.service->received()[hello_at].hello().unacked_results(), 1);
  // Results are re-sent only after the coordinator has answered hello.
  ASSERT_TRUE(second.service->Send(HelloAck()));
  const int result_at = second.service->WaitFor(IsResult(11));
  ASSERT_GE(result_at, 0);
  EXPECT_EQ(second.service->received()[result_at].result().attempt_id(), 5);
  EXPECT_EQ(second.service->received()[result_at].result().measurement().outcome(), v1::OK);

  ASSERT_TRUE(second.service->Send(Ack(11, 5)));
  EXPECT_TRUE(agent.EventuallyOnAgent(
      [](WorkerAgent& a) { return a.unacked_results() == 0 && a.connected(); }));
  agent.Shutdown();
  EXPECT_TRUE(agent.WaitStopped());
}

TEST_F(ConnectedAgentTest, CancelKillsTheMatchingRunner) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_TRUE(service().Send(Assignment(21, 2, "hang")));
  ASSERT_GE(service().WaitFor(IsStarted(21)), 0);
  ASSERT_TRUE(service().Send(Cancel(21, 1)));  // another attempt: ignored
  ASSERT_TRUE(service().Send(Cancel(21, 2)));
  const int result_at = service().WaitFor(IsResult(21));
  ASSERT_GE(result_at, 0);
  const v1::JobResult result = service().received()[result_at].result();
  EXPECT_EQ(result.measurement().outcome(), v1::CANCELLED);
  EXPECT_EQ(result.measurement().error(), "cancelled by the coordinator");
  ASSERT_TRUE(service().Send(Ack(21, 2)));
  agent().Shutdown();
  EXPECT_TRUE(agent().WaitStopped());
}

TEST_F(ConnectedAgentTest, AssignmentWhileBusyRunsAfterTheCurrentJob) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_TRUE(service().Send(Assignment(31, 1, "slow_ok")));
  ASSERT_TRUE(service().Send(Assignment(32, 1, "ok")));
  const int first = service().WaitFor(IsResult(31));
  const int second_started = service().WaitFor(IsStarted(32));
  const int second = service().WaitFor(IsResult(32));
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  EXPECT_LT(first, second_started);  // one job at a time
  ASSERT_TRUE(service().Send(Ack(31, 1)));
  ASSERT_TRUE(service().Send(Ack(32, 1)));
  agent().Shutdown();
  EXPECT_TRUE(agent().WaitStopped());
}

TEST_F(ConnectedAgentTest, ShutdownDrainsThenKillsTheRunningJobAndFlushesItsResult) {
  ASSERT_NO_FATAL_FAILURE(
      Connect([](WorkerAgentOptions& options) { options.drain_timeout = milliseconds(300); }));
  ASSERT_TRUE(service().Send(Assignment(41, 1, "hang")));
  ASSERT_GE(service().WaitFor(IsStarted(41)), 0);

  agent().Shutdown();
  // At once: a heartbeat saying it is draining, so nothing more is assigned;
  // an assignment arriving anyway goes straight back.
  EXPECT_GE(service().WaitFor([](const v1::WorkerMessage& m) {
    return m.has_heartbeat() && m.heartbeat().draining() && m.heartbeat().running_job_id() == 41;
  }),
            0);
  ASSERT_TRUE(service().Send(Assignment(42, 2, "ok")));
  const int late_at = service().WaitFor(IsResult(42));
  ASSERT_GE(late_at, 0);
  EXPECT_TRUE(service().received()[late_at].result().handed_back());
  ASSERT_TRUE(service().Send(Ack(42, 2)));
  const int result_at = service().WaitFor(IsResult(41));
  ASSERT_GE(result_at, 0);
  const v1::JobResult result = service().received()[result_at].result();
  const v1::Measurement& m = result.measurement();
  EXPECT_EQ(m.outcome(), v1::CANCELLED);
  EXPECT_NE(m.error().find("--drain-seconds"), std::string::npos) << m.error();
  EXPECT_TRUE(result.handed_back()) << "the job goes back to the queue, not cancelled";
  // The agent waits for the ack before closing.
  ASSERT_TRUE(service().Send(Ack(41, 1)));
  EXPECT_TRUE(agent().WaitStopped());
  EXPECT_TRUE(service().WaitForEndedStreams(1));
}

// A worker sharing its host: its CPUs and rendezvous endpoint in the hello,
// its CPUs in every job; a gang rank's role reaches the runner whole, and a
// GANG_BROKEN result is forwarded like any result, the worker still healthy.
TEST(WorkerAgentTest, SaysItsCpusAndRendezvousAndPassesAGangRoleThrough) {
  GatewayServer gateway;
  gateway.Start(0);
  AgentHarness agent(Address(gateway.port), [](WorkerAgentOptions& options) {
    options.cpus = "0-1,8";
    options.rendezvous_address = "10.1.2.3";
    options.rendezvous_port = 29501;
  });
  const int hello_at = gateway.service->WaitFor(IsHello);
  ASSERT_GE(hello_at, 0);
  const v1::WorkerHello hello = gateway.service->received()[hello_at].hello();
  EXPECT_EQ(hello.cpus(), "0-1,8");
  EXPECT_EQ(hello.rendezvous_address(), "10.1.2.3");
  EXPECT_EQ(hello.rendezvous_port(), 29501);
  ASSERT_TRUE(gateway.service->Send(HelloAck()));

  v1::CoordinatorMessage gang_job = Assignment(51, 4, "gang_broken");
  v1::GangRole* gang = gang_job.mutable_assignment()->mutable_job()->mutable_gang();
  gang->set_host_rank(1);
  gang->set_hosts(2);
  gang->set_devices_per_host(1);
  gang->set_rendezvous_host("10.0.0.5");
  gang->set_rendezvous_port(29500);
  gang->set_secret("s3cret");
  gang->set_gang_tag("job 51 attempt 4");
  gang->set_collective_timeout_s(30);
  gang->add_worker_ids("a");
  gang->add_worker_ids("test-worker");
  ASSERT_TRUE(gateway.service->Send(gang_job));
  const int result_at = gateway.service->WaitFor(IsResult(51));
  ASSERT_GE(result_at, 0);
  const v1::JobResult result = gateway.service->received()[result_at].result();
  EXPECT_EQ(result.measurement().outcome(), v1::GANG_BROKEN);
  EXPECT_EQ(result.measurement().error(),
            "gang rank 1 of 2 x 1 at 10.0.0.5:29500 tag 'job 51 attempt 4' secret 's3cret' "
            "timeout 30 peers 2; cpus '0-1,8'");
  EXPECT_FALSE(result.handed_back());
  ASSERT_TRUE(gateway.service->Send(Ack(51, 4)));

  // Not a fault of this worker: it does not drain and takes the next job.
  EXPECT_GE(
      gateway.service->WaitFor(
          [](const v1::WorkerMessage& m) { return m.has_heartbeat() && !m.heartbeat().draining(); },
          result_at),
      0);
  ASSERT_TRUE(gateway.service->Send(Assignment(52, 1, "ok")));
  const int next_at = gateway.service->WaitFor(IsResult(52));
  ASSERT_GE(next_at, 0);
  EXPECT_EQ(gateway.service->received()[next_at].result().measurement().outcome(), v1::OK);
  ASSERT_TRUE(gateway.service->Send(Ack(52, 1)));
  agent.Shutdown();
  EXPECT_TRUE(agent.WaitStopped());
}

// A hello the coordinator refuses for what the worker says of itself (here
// its platform's roofs) would be refused again unchanged: the agent stops
// with the coordinator's reason instead of resending it for ever, which left
// `paradnn local` waiting silently on three refused workers.
TEST(WorkerAgentTest, StopsOnARefusedHelloWithTheCoordinatorsReason) {
  GatewayServer gateway;
  gateway.Start(0);
  const std::string reason =
      "hello.platform.matmul_roofs[bfloat16, matmul].flops_per_sec: 4.4e+09 contradicts the "
      "1e+08 calibrated for fingerprint 'test-fingerprint'";
  gateway.service->RefuseHellos(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, reason));
  AgentHarness agent(Address(gateway.port));
  ASSERT_TRUE(agent.WaitStopped());
  const std::string fatal = agent.ReadAfterStop([](WorkerAgent& a) { return a.fatal_error(); });
  EXPECT_NE(fatal.find("refuses this worker's hello"), std::string::npos) << fatal;
  EXPECT_NE(fatal.find(reason), std::string::npos) << fatal;
  EXPECT_EQ(gateway.service->received().size(), 1u) << "one hello, not resent";
}

TEST(WorkerAgentTest, ShutdownWithoutCoordinatorStopsPromptly) {
  // Nothing listens on port 1: every attempt is refused.
  AgentHarness agent("127.0.0.1:1");
  EXPECT_TRUE(agent.EventuallyOnAgent([](WorkerAgent& a) { return !a.connected(); }));
  const steady_clock::time_point start = steady_clock::now();
  agent.Shutdown();
  EXPECT_TRUE(agent.WaitStopped());
  EXPECT_LT(steady_clock::now() - start, milliseconds(3000));
}

}  // namespace
}  // namespace paradnn::worker
