// One worker stream spoken by hand against a real coordinator: what the
// fault tests play a hostile peer with (no paradnn-worker; our protos).
#ifndef PARADNN_TESTS_SUPPORT_PEER_WORKER_H_
#define PARADNN_TESTS_SUPPORT_PEER_WORKER_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "paradnn/v1/coordinator.grpc.pb.h"

namespace paradnn::testing {

// One worker stream spoken by hand.
class PeerWorker {
 public:
  PeerWorker(const std::string& address, const std::string& worker_id,
             const std::string& token = "")
      : channel_(grpc::CreateChannel(address, grpc::InsecureChannelCredentials())),
        stub_(v1::WorkerGateway::NewStub(channel_)),
        worker_id_(worker_id) {
    if (!token.empty()) context_.AddMetadata("authorization", "Bearer " + token);
    stream_ = stub_->Connect(&context_);
  }

  bool Write(const v1::WorkerMessage& message) { return stream_->Write(message); }
  // Ends the stream from any thread: a read blocked in Next returns nullopt.
  void Cancel() { context_.TryCancel(); }

  ~PeerWorker() {
    context_.TryCancel();
    if (!finished_) (void)Ended();
  }

  // Hello (a CPU platform of its own unless given), hello_ack, then an idle
  // heartbeat so that the coordinator offers work.
  void Join(std::optional<v1::Platform> platform = std::nullopt) {
    SayHello(platform);
    std::optional<v1::CoordinatorMessage> ack = Next();
    ASSERT_TRUE(ack.has_value() && ack->has_hello_ack()) << worker_id_;
    Heartbeat();
  }
  void SayHello(std::optional<v1::Platform> platform = std::nullopt) {
    v1::WorkerMessage hello;
    hello.mutable_hello()->set_worker_id(worker_id_);
    hello.mutable_hello()->set_device_kind("cpu");
    if (platform) {
      *hello.mutable_hello()->mutable_platform() = *platform;
    } else {
      hello.mutable_hello()->mutable_platform()->set_fingerprint("peer-" + worker_id_);
      hello.mutable_hello()->mutable_platform()->set_device_kind("cpu");
      hello.mutable_hello()->mutable_platform()->set_memory_bytes(int64_t{8} << 30);
    }
    ASSERT_TRUE(stream_->Write(hello));
  }
  // Reads to the end of the stream; its status.
  grpc::Status Ended() {
    v1::CoordinatorMessage ignored;
    while (stream_->Read(&ignored)) {
    }
    finished_ = true;
    return stream_->Finish();
  }

  void Heartbeat(int64_t job_id = 0, int64_t attempt_id = 0) {
    v1::WorkerMessage beat;
    beat.mutable_heartbeat()->set_running_job_id(job_id);
    beat.mutable_heartbeat()->set_running_attempt_id(attempt_id);
    ASSERT_TRUE(stream_->Write(beat));
  }

  // The next message of the kind asked for (others are skipped).
  std::optional<v1::CoordinatorMessage> Next() {
    v1::CoordinatorMessage message;
    if (!stream_->Read(&message)) return std::nullopt;
    return message;
  }
  std::optional<v1::JobAssignment> NextAssignment() {
    for (std::optional<v1::CoordinatorMessage> m = Next(); m; m = Next()) {
      if (m->has_assignment()) return m->assignment();
    }
    return std::nullopt;
  }
  std::optional<v1::ResultAck> NextAck() {
    for (std::optional<v1::CoordinatorMessage> m = Next(); m; m = Next()) {
      if (m->has_ack()) return m->ack();
    }
    return std::nullopt;
  }

  void Send(int64_t job_id, int64_t attempt_id, const v1::Measurement& m,
            bool handed_back = false) {
    v1::WorkerMessage message;
    message.mutable_result()->set_job_id(job_id);
    message.mutable_result()->set_attempt_id(attempt_id);
    *message.mutable_result()->mutable_measurement() = m;
    message.mutable_result()->set_handed_back(handed_back);
    ASSERT_TRUE(stream_->Write(message));
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerGateway::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerMessage, v1::CoordinatorMessage>> stream_;
  std::string worker_id_;
  bool finished_ = false;
};

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_SUPPORT_PEER_WORKER_H_
