// One WorkerGateway.Connect call from the worker to the coordinator.
#ifndef PARADNN_WORKER_GATEWAY_STREAM_H_
#define PARADNN_WORKER_GATEWAY_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "paradnn/v1/coordinator.grpc.pb.h"

namespace paradnn::worker {

// Drives one bidirectional Connect stream with gRPC's sync API: a reader
// thread creates the call and blocks on Read; a writer thread sends queued
// messages in order (gRPC allows one reader and one writer at a time, and a
// slow or dead network then blocks neither the caller nor the reader).
//
// Callbacks run on the reader thread; they must be short and must not call
// back into this object's destructor (post the work elsewhere). on_open
// runs once the call is created (which does not prove the coordinator is
// there: that is its first message); on_message for every message;
// on_closed exactly once, last, with the call's final status.
//
// Thread-safety: Send, CloseSend and Cancel are thread-safe. The destructor
// cancels the call and joins both threads.
class GatewayStream {
 public:
  struct Callbacks {
    std::function<void()> on_open;
    std::function<void(v1::CoordinatorMessage message)> on_message;
    std::function<void(grpc::Status status)> on_closed;
  };

  GatewayStream(std::shared_ptr<grpc::Channel> channel, Callbacks callbacks);
  GatewayStream(const GatewayStream&) = delete;
  GatewayStream& operator=(const GatewayStream&) = delete;
  ~GatewayStream();

  // Queues `message`; dropped once the stream has ended or CloseSend ran.
  void Send(v1::WorkerMessage message) ABSL_LOCKS_EXCLUDED(mu_);
  // Half-closes (WritesDone) after every queued message has been written.
  void CloseSend() ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels the call; Read and Write return promptly.
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void ReadLoop() ABSL_LOCKS_EXCLUDED(mu_);
  void WriteLoop() ABSL_LOCKS_EXCLUDED(mu_);

  std::unique_ptr<v1::WorkerGateway::Stub> stub_;
  Callbacks callbacks_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerMessage, v1::CoordinatorMessage>> stream_;

  absl::Mutex mu_;
  absl::CondVar cv_;  // any of the below changed
  std::deque<v1::WorkerMessage> queue_ ABSL_GUARDED_BY(mu_);
  bool close_send_ ABSL_GUARDED_BY(mu_) = false;
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool writer_exited_ ABSL_GUARDED_BY(mu_) = false;

  std::thread writer_;  // started and joined by the reader thread
  std::thread reader_;
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_GATEWAY_STREAM_H_
