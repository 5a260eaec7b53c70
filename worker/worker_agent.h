// WorkerAgent: the worker's side of the WorkerGateway stream
// (docs/contracts.md, "Worker stream").
//
// It connects to the coordinator, says hello (worker id, device kind,
// platform, version, unacknowledged results), re-sends every result the
// coordinator has not acknowledged, then heartbeats every
// hello_ack.heartbeat_interval_ms. Each assignment runs in a fresh runner
// (RunnerSupervisor) with its steps forwarded as progress (throttled) and its
// Measurement sent as a result, which is kept until the coordinator acks it.
// A rank of a data-parallel gang (RunnerJob.gang) runs like any job: the
// role goes to the runner unchanged, and its result (GANG_BROKEN when a
// peer failed) is forwarded like any other.
// A cancel kills the matching runner. When the stream breaks the agent
// reconnects with exponential backoff; a running job keeps running and its
// result is sent once connected again.
//
// Shutdown drains: no new jobs, the running job gets `drain_timeout` to
// finish (then it is killed and reported CANCELLED), unacknowledged results
// get `flush_timeout` to be acknowledged, then the stream is half-closed and
// finished, and `on_stopped` runs.
//
// Threading: all agent state belongs to the thread running the io_context.
// gRPC's reader thread only posts received messages to it. Construct, Start,
// Shutdown and destroy the agent on that thread (or while the io_context is
// not running). The io_context must outlive the agent.
#ifndef PARADNN_WORKER_WORKER_AGENT_H_
#define PARADNN_WORKER_WORKER_AGENT_H_

#include <grpcpp/grpcpp.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/auth.h"
#include "paradnn/v1/coordinator.pb.h"
#include "worker/gateway_stream.h"
#include "worker/reconnect_backoff.h"
#include "worker/runner_supervisor.h"
#include "worker/sentinel_memory.h"
#include "worker/unacked_results.h"

namespace paradnn::worker {

struct WorkerAgentOptions {
  // gRPC target: HOST:PORT, [V6]:PORT or unix:PATH.
  std::string coordinator_address;
  // TLS and the token sent on the stream (default: plaintext, no token).
  common::ClientSecurity security;
  std::string worker_id;
  // The device this worker runs jobs on ("cpu", "cuda:1"); hello carries
  // its kind and every RunnerJob gets exactly this device.
  std::string device = "cpu";
  v1::Platform platform;
  // The runner's timing harness, "<backend>/<timing version>" (hello.harness).
  std::string harness;
  // The CPUs runners are confined to (--cpus, "0-3,8"; "" = all): said in
  // the hello and put into every RunnerJob, whose runner pins itself.
  std::string cpus;
  // Where this worker's runner serves a gang's rendezvous as rank 0
  // (hello.rendezvous_address / rendezvous_port; "" = the address the
  // coordinator sees the stream come from).
  std::string rendezvous_address;
  int rendezvous_port = 0;
  // runner_path and the runner time limits.
  RunnerSupervisorOptions runner;

  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
  uint64_t backoff_seed = 0;  // 0: seeded from std::random_device
  // Heartbeat period when hello_ack does not give one.
  std::chrono::milliseconds default_heartbeat{2000};
  // At most one progress message per this period.
  std::chrono::milliseconds progress_interval{250};
  // Shutdown: how long a running job may still run, how long to wait for
  // acks of finished results, how long the coordinator has to end the
  // stream after the half-close.
  std::chrono::milliseconds drain_timeout{30'000};
  std::chrono::milliseconds flush_timeout{5'000};
  std::chrono::milliseconds close_timeout{2'000};
  // A worker that could not start its runner checks this often whether it
  // can again.
  std::chrono::milliseconds health_check_interval{10'000};
};

// Creates the channel to `address` with the worker's keepalive settings
// (ping every 20 s, 10 s to answer, also without calls), gRPC's own
// reconnect backoff bounded by [initial_backoff, max_backoff], and
// `security` (TLS, the token on every call).
std::shared_ptr<grpc::Channel> CreateCoordinatorChannel(const std::string& address,
                                                        const common::ClientSecurity& security,
                                                        std::chrono::milliseconds initial_backoff,
                                                        std::chrono::milliseconds max_backoff);

class WorkerAgent {
 public:
  WorkerAgent(boost::asio::io_context& io, WorkerAgentOptions options);
  WorkerAgent(const WorkerAgent&) = delete;
  WorkerAgent& operator=(const WorkerAgent&) = delete;
  // Cancels a running job and the stream; no callback runs afterwards.
  // An exception from what it calls (out of memory, a failed signal) is a
  // broken invariant: the process terminates, loudly, as it should.
  ~WorkerAgent();  // NOLINT(bugprone-exception-escape): as said above

  // Starts connecting. Keeps the io_context busy until stopped; `on_stopped`
  // runs on the io_context thread once Shutdown has completed.
  void Start(std::function<void()> on_stopped);

  // Begins the orderly shutdown described above. A second call while
  // draining kills the running job at once.
  void Shutdown();

  // Introspection for tests and logs (io_context thread only).
  bool connected() const { return handshake_done_; }
  size_t unacked_results() const { return unacked_.size(); }
  bool busy() const { return running_.has_value(); }
  // Why the agent stopped on its own ("" when it was shut down): another
  // live worker holds its id.
  const std::string& fatal_error() const { return fatal_error_; }

  // How long the coordinator may keep refusing this worker's id (another
  // live worker holds it) before the worker gives up: a reconnect after a
  // dropped network waits out the coordinator noticing the old stream (up
  // to a lease timeout; twice the last one the coordinator gave, if longer).
  static constexpr std::chrono::seconds kIdConflictGiveUp{30};

 private:
  enum class State { kIdle, kRunning, kDraining, kFlushing, kClosing, kStopped };

  // Wraps `fn` so that it does nothing once the agent is destroyed.
  template <typename Fn>
  auto Guarded(Fn fn) {
    return [alive = std::weak_ptr<char>(alive_), fn = std::move(fn)](auto&&... args) mutable {
      if (alive.expired()) return;
      fn(std::forward<decltype(args)>(args)...);
    };
  }

  void Connect();
  void OnOpen(uint64_t generation);
  void OnMessage(uint64_t generation, v1::CoordinatorMessage message);
  void OnClosed(uint64_t generation, const grpc::Status& status);
  void ScheduleReconnect();
  void OnHelloAck(const v1::HelloAck& ack);
  void OnAssignment(v1::JobAssignment assignment);
  void OnAck(const v1::ResultAck& ack);
  void OnCancel(const v1::CancelJob& cancel);
  void StartJob(const v1::JobAssignment& assignment);
  void OnStep(int64_t job_id, int64_t attempt_id, const v1::StepMetric& step);
  void OnJobComplete(int64_t job_id, int64_t attempt_id, v1::Measurement measurement);
  void ScheduleHeartbeat();
  // Returns an assignment unstarted (shutting down): a handed_back result
  // the coordinator answers by re-queueing the job.
  void HandBack(const v1::JobAssignment& assignment, const std::string& reason);
  void SendHeartbeat();
  // Sends on the current stream (hello may go before the handshake).
  void Send(v1::WorkerMessage message);
  // Sends only after hello_ack on the current stream.
  void SendIfConnected(v1::WorkerMessage message);
  void EnterFlush();
  void CloseStream();
  void Stopped();
  // The runner cannot be started: hand jobs back, say draining, and check
  // every health_check_interval whether it can be again (then reconnect,
  // which clears the coordinator's draining).
  void BecomeUnhealthy(const std::string& reason);
  void ScheduleHealthCheck();

  boost::asio::io_context& io_;
  const WorkerAgentOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::function<void()> on_stopped_;
  State state_ = State::kIdle;

  std::shared_ptr<GatewayStream> stream_;
  uint64_t generation_ = 0;  // of stream_; messages of older streams are dropped
  bool handshake_done_ = false;
  std::string fatal_error_;
  std::optional<std::chrono::steady_clock::time_point> id_conflict_since_;
  std::chrono::milliseconds lease_timeout_{0};  // from the last hello_ack
  ReconnectBackoff backoff_;
  std::chrono::milliseconds heartbeat_interval_;

  std::shared_ptr<RunnerSupervisor> supervisor_;
  std::optional<v1::JobAssignment> running_;
  std::deque<v1::JobAssignment> queued_;
  std::chrono::steady_clock::time_point last_progress_;
  // When the running job was handed to its runner.
  std::chrono::steady_clock::time_point job_started_;
  // The newest host-speed sentinel reading, for the next job to reuse.
  SentinelMemory sentinel_;
  // Said once: the sentinel runs much faster than the calibration.
  bool warned_busy_calibration_ = false;
  UnackedResults unacked_;

  boost::asio::steady_timer reconnect_timer_;
  boost::asio::steady_timer health_timer_;
  // Why the worker takes no jobs (its runner cannot be started); "" when
  // healthy.
  std::string unhealthy_reason_;
  boost::asio::steady_timer heartbeat_timer_;
  boost::asio::steady_timer drain_timer_;
  boost::asio::steady_timer flush_timer_;
  boost::asio::steady_timer close_timer_;
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_WORKER_AGENT_H_
