// WorkerAgent, stream side (worker_agent.h): the channel, connecting,
// hello and its ack, reconnects, heartbeats and the orderly shutdown. The
// jobs (assignments, runners, results, hand-backs) are in
// worker_agent_jobs.cc.
#include "worker/worker_agent.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "worker/device_spec.h"

namespace paradnn::worker {
namespace {

uint64_t SeedOrRandom(uint64_t seed) {
  if (seed != 0) return seed;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::string StatusText(const grpc::Status& status) {
  if (status.ok()) return "OK";
  // gRPC and Abseil share status codes.
  return absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())),
                      ": ", status.error_message());
}

}  // namespace

std::shared_ptr<grpc::Channel> CreateCoordinatorChannel(const std::string& address,
                                                        const common::ClientSecurity& security,
                                                        std::chrono::milliseconds initial_backoff,
                                                        std::chrono::milliseconds max_backoff) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // An assignment of family torchscript carries the model file (the
  // coordinator's --max-model-bytes, at most 1 GiB, plus the job).
  args.SetMaxReceiveMessageSize((1 << 30) + (16 << 20));
  // gRPC's own subchannel backoff would otherwise grow to 120 s and keep a
  // restarted coordinator unreached long after ours has given up waiting.
  const int initial = static_cast<int>(initial_backoff.count());
  const int max = static_cast<int>(std::max(max_backoff, initial_backoff).count());
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, initial);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max);
  return common::CreateSecureChannel(address, security, args);
}

WorkerAgent::WorkerAgent(boost::asio::io_context& io, WorkerAgentOptions options)
    : io_(io),
      options_(std::move(options)),
      channel_(CreateCoordinatorChannel(options_.coordinator_address, options_.security,
                                        options_.initial_backoff, options_.max_backoff)),
      backoff_(options_.initial_backoff, options_.max_backoff, SeedOrRandom(options_.backoff_seed)),
      heartbeat_interval_(options_.default_heartbeat),
      reconnect_timer_(io),
      health_timer_(io),
      heartbeat_timer_(io),
      drain_timer_(io),
      flush_timer_(io),
      close_timer_(io) {}

// NOLINTNEXTLINE(bugprone-exception-escape): worker_agent.h says why
WorkerAgent::~WorkerAgent() {
  alive_.reset();  // queued handlers and callbacks now do nothing
  if (supervisor_) supervisor_->Cancel("worker agent destroyed");
  stream_.reset();  // cancels the call, joins its threads
}

void WorkerAgent::Start(std::function<void()> on_stopped) {
  if (state_ != State::kIdle) return;
  on_stopped_ = std::move(on_stopped);
  work_.emplace(boost::asio::make_work_guard(io_));
  state_ = State::kRunning;
  spdlog::info("worker {} ({}) starting; coordinator {}", options_.worker_id, options_.device,
               options_.coordinator_address);
  Connect();
}

// ---- Stream -------------------------------------------------------------

void WorkerAgent::Connect() {
  if (state_ == State::kClosing || state_ == State::kStopped) return;
  const uint64_t generation = ++generation_;
  handshake_done_ = false;
  boost::asio::io_context& io = io_;
  GatewayStream::Callbacks callbacks;
  // These run on the stream's reader thread: hand everything to io_.
  callbacks.on_open = [&io, generation,
                       guard = Guarded([this](uint64_t g) { OnOpen(g); })]() mutable {
    boost::asio::post(io, [guard, generation]() mutable { guard(generation); });
  };
  callbacks.on_message = [&io, generation,
                          guard = Guarded([this](uint64_t g, v1::CoordinatorMessage m) {
                            OnMessage(g, std::move(m));
                          })](v1::CoordinatorMessage message) mutable {
    boost::asio::post(io, [guard, generation, message = std::move(message)]() mutable {
      guard(generation, std::move(message));
    });
  };
  callbacks.on_closed = [&io, generation,
                         guard = Guarded([this](uint64_t g, const grpc::Status& s) {
                           OnClosed(g, s);
                         })](grpc::Status status) mutable {
    boost::asio::post(io, [guard, generation, status = std::move(status)]() mutable {
      guard(generation, status);
    });
  };
  spdlog::debug("connecting to the coordinator at {} (stream {})", options_.coordinator_address,
                generation);
  stream_ = std::make_shared<GatewayStream>(channel_, std::move(callbacks));
}

void WorkerAgent::OnOpen(uint64_t generation) {
  if (generation != generation_ || !stream_) return;
  v1::WorkerMessage message;
  v1::WorkerHello* hello = message.mutable_hello();
  hello->set_worker_id(options_.worker_id);
  hello->set_device_kind(DeviceKind(options_.device));
  *hello->mutable_platform() = options_.platform;
  hello->set_version(common::kVersion);
  hello->set_harness(options_.harness);
  hello->set_cpus(options_.cpus);
  hello->set_rendezvous_address(options_.rendezvous_address);
  hello->set_rendezvous_port(options_.rendezvous_port);
  hello->set_unacked_results(static_cast<int32_t>(unacked_.size()));
  Send(std::move(message));
}

void WorkerAgent::OnMessage(uint64_t generation, v1::CoordinatorMessage message) {
  if (generation != generation_ || !stream_) return;
  switch (message.msg_case()) {
    case v1::CoordinatorMessage::kHelloAck:
      OnHelloAck(message.hello_ack());
      break;
    case v1::CoordinatorMessage::kAssignment:
      OnAssignment(std::move(*message.mutable_assignment()));
      break;
    case v1::CoordinatorMessage::kAck:
      OnAck(message.ack());
      break;
    case v1::CoordinatorMessage::kCancel:
      OnCancel(message.cancel());
      break;
    case v1::CoordinatorMessage::MSG_NOT_SET:
      spdlog::warn("coordinator sent a message of unknown kind; ignoring it (newer coordinator?)");
      break;
  }
}

void WorkerAgent::OnClosed(uint64_t generation, const grpc::Status& status) {
  if (generation != generation_) return;
  const bool was_connected = handshake_done_;
  stream_.reset();
  handshake_done_ = false;
  heartbeat_timer_.cancel();
  if (state_ == State::kClosing) {
    spdlog::info("stream to the coordinator closed ({})", StatusText(status));
    Stopped();
    return;
  }
  if (!was_connected && status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
      absl::StartsWith(status.error_message(), "hello.")) {
    // The coordinator refuses what this worker says of itself (its id, its
    // platform): the same hello would be refused forever.
    fatal_error_ = absl::StrCat("the coordinator at ", options_.coordinator_address,
                                " refuses this worker's hello: ", StatusText(status));
    spdlog::critical("{}", fatal_error_);
    if (supervisor_) supervisor_->Cancel("the worker stops: its hello is refused");
    Stopped();
    return;
  }
  if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
    // Another live worker uses our id. Our own dead stream can look alive to
    // the coordinator for a couple of heartbeats; past that it is not ours.
    const auto now = std::chrono::steady_clock::now();
    if (!id_conflict_since_) id_conflict_since_ = now;
    const auto give_up = std::max<std::chrono::milliseconds>(kIdConflictGiveUp, 2 * lease_timeout_);
    if (now - *id_conflict_since_ >= give_up) {
      fatal_error_ =
          absl::StrCat("the coordinator at ", options_.coordinator_address, " refuses worker id '",
                       options_.worker_id, "': another worker is connected with it (",
                       StatusText(status), "); start this one with its own --worker-id");
      spdlog::critical("{}", fatal_error_);
      if (supervisor_) supervisor_->Cancel("the worker stops: its id is in use");
      Stopped();
      return;
    }
    spdlog::warn("the coordinator refuses worker id '{}' ({}); retrying for up to {} s",
                 options_.worker_id, StatusText(status), give_up.count() / 1000);
  } else if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
             status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    // Retrying helps only once the coordinator's token files change; say
    // loudly what to fix.
    spdlog::error(
        "the coordinator at {} refused this worker ({}); give a worker token with "
        "--token-file or ${}",
        options_.coordinator_address, StatusText(status), common::kTokenEnv);
  } else if (was_connected) {
    spdlog::warn("stream to the coordinator ended ({}); reconnecting", StatusText(status));
  } else {
    spdlog::warn("cannot reach the coordinator at {} ({})", options_.coordinator_address,
                 StatusText(status));
  }
  ScheduleReconnect();
}

void WorkerAgent::ScheduleReconnect() {
  const std::chrono::milliseconds delay = backoff_.Next();
  spdlog::info("reconnecting in {} ms{}", delay.count(),
               unacked_.empty()
                   ? ""
                   : " (" + std::to_string(unacked_.size()) + " results waiting for an ack)");
  reconnect_timer_.expires_after(delay);
  reconnect_timer_.async_wait(Guarded([this](const boost::system::error_code& ec) {
    if (ec) return;
    Connect();
  }));
}

void WorkerAgent::Send(v1::WorkerMessage message) {
  if (stream_) stream_->Send(std::move(message));
}

void WorkerAgent::SendIfConnected(v1::WorkerMessage message) {
  if (handshake_done_) Send(std::move(message));
}

// ---- Coordinator messages ----------------------------------------------

void WorkerAgent::OnHelloAck(const v1::HelloAck& ack) {
  handshake_done_ = true;
  id_conflict_since_.reset();
  lease_timeout_ = std::chrono::milliseconds(std::max<int64_t>(0, ack.lease_timeout_ms()));
  backoff_.Reset();
  heartbeat_interval_ = ack.heartbeat_interval_ms() > 0
                            ? std::chrono::milliseconds(ack.heartbeat_interval_ms())
                            : options_.default_heartbeat;
  spdlog::info("connected to the coordinator at {} (heartbeat every {} ms){}",
               options_.coordinator_address, heartbeat_interval_.count(),
               unacked_.empty()
                   ? ""
                   : "; re-sending " + std::to_string(unacked_.size()) + " unacknowledged results");
  for (const v1::JobResult& result : unacked_.results()) {
    v1::WorkerMessage message;
    *message.mutable_result() = result;
    Send(std::move(message));
  }
  SendHeartbeat();
  ScheduleHeartbeat();
}

void WorkerAgent::OnAck(const v1::ResultAck& ack) {
  if (unacked_.Acknowledge(ack.job_id(), ack.attempt_id())) {
    spdlog::debug("result of job {} attempt {} acknowledged", ack.job_id(), ack.attempt_id());
  } else {
    spdlog::debug("ack for job {} attempt {}, which holds no result here (duplicate)", ack.job_id(),
                  ack.attempt_id());
  }
  if (state_ == State::kFlushing && unacked_.empty()) {
    spdlog::info("every result is acknowledged");
    CloseStream();
  }
}

void WorkerAgent::ScheduleHeartbeat() {
  heartbeat_timer_.expires_after(heartbeat_interval_);
  heartbeat_timer_.async_wait(Guarded([this](const boost::system::error_code& ec) {
    if (ec || !handshake_done_) return;
    SendHeartbeat();
    ScheduleHeartbeat();
  }));
}

void WorkerAgent::SendHeartbeat() {
  v1::WorkerMessage message;
  v1::Heartbeat* heartbeat = message.mutable_heartbeat();
  if (running_.has_value()) {
    heartbeat->set_running_job_id(running_->job_id());
    heartbeat->set_running_attempt_id(running_->attempt_id());
  }
  heartbeat->set_draining((state_ != State::kIdle && state_ != State::kRunning) ||
                          !unhealthy_reason_.empty());
  SendIfConnected(std::move(message));
}

// ---- Shutdown -----------------------------------------------------------

void WorkerAgent::Shutdown() {
  switch (state_) {
    case State::kIdle:
      state_ = State::kStopped;
      return;
    case State::kRunning:
      break;
    case State::kDraining:
      if (supervisor_) {
        spdlog::warn("second shutdown request: killing job {} now", running_->job_id());
        supervisor_->Cancel("worker shutting down (second stop signal)");
      }
      return;
    case State::kFlushing:
    case State::kClosing:
    case State::kStopped:
      return;
  }
  state_ = State::kDraining;
  SendHeartbeat();  // tells the coordinator to assign nothing more
  for (const v1::JobAssignment& assignment : queued_) {
    HandBack(assignment, "the worker is shutting down; the job did not start");
  }
  queued_.clear();
  if (!running_.has_value()) {
    spdlog::info("shutting down");
    EnterFlush();
    return;
  }
  spdlog::info("shutting down: taking no new jobs; waiting up to {} ms for job {} to finish",
               options_.drain_timeout.count(), running_->job_id());
  drain_timer_.expires_after(options_.drain_timeout);
  drain_timer_.async_wait(Guarded([this](const boost::system::error_code& ec) {
    if (ec || !supervisor_) return;
    spdlog::warn("job {} did not finish within the drain time; killing it", running_->job_id());
    supervisor_->Cancel(absl::StrCat("worker shutting down: the job did not finish within ",
                                     options_.drain_timeout.count() / 1000.0,
                                     " s (--drain-seconds)"));
  }));
}

void WorkerAgent::EnterFlush() {
  state_ = State::kFlushing;
  if (unacked_.empty()) {
    CloseStream();
    return;
  }
  spdlog::info("waiting up to {} ms for the coordinator to acknowledge {} results",
               options_.flush_timeout.count(), unacked_.size());
  flush_timer_.expires_after(options_.flush_timeout);
  flush_timer_.async_wait(Guarded([this](const boost::system::error_code& ec) {
    if (ec || state_ != State::kFlushing) return;
    CloseStream();
  }));
}

void WorkerAgent::CloseStream() {
  state_ = State::kClosing;
  flush_timer_.cancel();
  reconnect_timer_.cancel();
  heartbeat_timer_.cancel();
  if (!stream_) {
    Stopped();
    return;
  }
  stream_->CloseSend();
  close_timer_.expires_after(options_.close_timeout);
  close_timer_.async_wait(Guarded([this](const boost::system::error_code& ec) {
    if (ec || state_ != State::kClosing) return;
    spdlog::warn(
        "the coordinator did not end the stream within {} ms of the half-close; cancelling it",
        options_.close_timeout.count());
    stream_.reset();
    Stopped();
  }));
}

void WorkerAgent::Stopped() {
  if (state_ == State::kStopped) return;
  state_ = State::kStopped;
  close_timer_.cancel();
  reconnect_timer_.cancel();
  health_timer_.cancel();
  heartbeat_timer_.cancel();
  drain_timer_.cancel();
  flush_timer_.cancel();
  stream_.reset();
  if (!unacked_.empty()) {
    spdlog::error(
        "stopping with {} unacknowledged results; the coordinator will run those jobs again",
        unacked_.size());
  }
  spdlog::info("worker {} stopped", options_.worker_id);
  work_.reset();
  if (on_stopped_) {
    std::function<void()> callback = std::move(on_stopped_);
    on_stopped_ = nullptr;
    callback();
  }
}

}  // namespace paradnn::worker
