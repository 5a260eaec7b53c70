// An in-process fake WorkerGateway for worker tests: a gRPC sync service
// on 127.0.0.1 that records what the worker sends and lets the test answer.
#ifndef PARADNN_TESTS_UNIT_WORKER_FAKE_GATEWAY_H_
#define PARADNN_TESTS_UNIT_WORKER_FAKE_GATEWAY_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "paradnn/v1/coordinator.grpc.pb.h"

namespace paradnn::worker {

// How long a test waits for the worker to do something.
inline constexpr std::chrono::milliseconds kWait{10'000};

// Records what workers send and lets the test answer. One stream at a time.
class FakeGateway final : public v1::WorkerGateway::Service {
 public:
  grpc::Status Connect(
      grpc::ServerContext* /*context*/,
      grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::WorkerMessage>* stream) override {
    {
      absl::MutexLock lock(&mu_);
      stream_ = stream;
    }
    cv_.SignalAll();
    v1::WorkerMessage message;
    grpc::Status end = grpc::Status::OK;
    while (stream->Read(&message)) {
      {
        absl::MutexLock lock(&mu_);
        received_.push_back(message);
        if (message.has_hello() && hello_refusal_.has_value()) end = *hello_refusal_;
      }
      cv_.SignalAll();
      if (!end.ok()) break;
    }
    {
      absl::MutexLock write_lock(&write_mu_);
      absl::MutexLock lock(&mu_);
      stream_ = nullptr;
      ++ended_streams_;
    }
    cv_.SignalAll();
    return end;
  }

  // Every later hello ends its stream with `status`, as the coordinator
  // refuses what a worker says of itself.
  void RefuseHellos(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    hello_refusal_ = status;
  }

  // Writes `message` on the current stream; false if there is none.
  bool Send(const v1::CoordinatorMessage& message) ABSL_LOCKS_EXCLUDED(write_mu_, mu_) {
    absl::MutexLock write_lock(&write_mu_);
    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::WorkerMessage>* stream;
    {
      absl::MutexLock lock(&mu_);
      stream = stream_;
    }
    return stream != nullptr && stream->Write(message);
  }

  // Waits until some received message (from index `from` on) satisfies
  // `match`; returns its index, or -1 at the deadline.
  int WaitFor(const std::function<bool(const v1::WorkerMessage&)>& match, size_t from = 0)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + absl::FromChrono(kWait);
    while (true) {
      if (const int found = FindReceived(match, from); found >= 0) return found;
      if (cv_.WaitWithDeadline(&mu_, deadline)) return FindReceived(match, from);
    }
  }

  bool WaitForEndedStreams(int count) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + absl::FromChrono(kWait);
    while (ended_streams_ < count && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    return ended_streams_ >= count;
  }

  std::vector<v1::WorkerMessage> received() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  int FindReceived(const std::function<bool(const v1::WorkerMessage&)>& match, size_t from)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (size_t i = from; i < received_.size(); ++i) {
      if (match(received_[i])) return static_cast<int>(i);
    }
    return -1;
  }

  absl::Mutex write_mu_;  // held across Write so the stream cannot go away under it
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  absl::CondVar cv_;  // a stream opened or ended, or a message received
  // Set under mu_ and cleared under both; Send uses it under write_mu_.
  grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::WorkerMessage>* stream_
      ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<v1::WorkerMessage> received_ ABSL_GUARDED_BY(mu_);
  int ended_streams_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<grpc::Status> hello_refusal_ ABSL_GUARDED_BY(mu_);
};

struct GatewayServer {
  std::unique_ptr<FakeGateway> service = std::make_unique<FakeGateway>();
  std::unique_ptr<grpc::Server> server;
  int port = 0;

  // Listens on 127.0.0.1:`requested_port` (0: any free port).
  void Start(int requested_port) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(requested_port),
                             grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    ASSERT_NE(server, nullptr);
    ASSERT_NE(port, 0);
  }
  void Stop() {
    server->Shutdown(std::chrono::system_clock::now());  // cancels open streams
    server->Wait();
  }
  ~GatewayServer() {
    if (server) Stop();
  }
};

inline bool IsHello(const v1::WorkerMessage& m) { return m.has_hello(); }
inline bool IsHeartbeat(const v1::WorkerMessage& m) { return m.has_heartbeat(); }
inline std::function<bool(const v1::WorkerMessage&)> IsStarted(int64_t job) {
  return
      [job](const v1::WorkerMessage& m) { return m.has_started() && m.started().job_id() == job; };
}
inline std::function<bool(const v1::WorkerMessage&)> IsResult(int64_t job) {
  return [job](const v1::WorkerMessage& m) { return m.has_result() && m.result().job_id() == job; };
}

inline v1::CoordinatorMessage HelloAck(int64_t heartbeat_ms = 100) {
  v1::CoordinatorMessage message;
  message.mutable_hello_ack()->set_heartbeat_interval_ms(heartbeat_ms);
  message.mutable_hello_ack()->set_lease_timeout_ms(10 * heartbeat_ms);
  return message;
}

inline v1::CoordinatorMessage Assignment(int64_t job, int64_t attempt,
                                         const std::string& behavior) {
  v1::CoordinatorMessage message;
  v1::JobAssignment* a = message.mutable_assignment();
  a->set_job_id(job);
  a->set_attempt_id(attempt);
  a->set_sweep_id(3);
  a->mutable_job()->mutable_config()->set_family("fc");
  (*a->mutable_job()->mutable_config()->mutable_options())["behavior"] = behavior;
  a->mutable_job()->mutable_settings()->set_timeout_seconds(20);
  a->mutable_job()->set_device("cpu");
  return message;
}

inline v1::CoordinatorMessage Ack(int64_t job, int64_t attempt) {
  v1::CoordinatorMessage message;
  message.mutable_ack()->set_job_id(job);
  message.mutable_ack()->set_attempt_id(attempt);
  return message;
}

inline v1::CoordinatorMessage Cancel(int64_t job, int64_t attempt) {
  v1::CoordinatorMessage message;
  message.mutable_cancel()->set_job_id(job);
  message.mutable_cancel()->set_attempt_id(attempt);
  return message;
}

}  // namespace paradnn::worker

#endif  // PARADNN_TESTS_UNIT_WORKER_FAKE_GATEWAY_H_
