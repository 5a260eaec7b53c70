#include "worker/gateway_stream.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

namespace paradnn::worker {
namespace {

// How long the reader waits for a writer stuck in Write after the server
// ended the call before cancelling it (a Write normally fails at once then).
constexpr std::chrono::seconds kWriterExitGrace{5};

}  // namespace

GatewayStream::GatewayStream(std::shared_ptr<grpc::Channel> channel, Callbacks callbacks)
    : stub_(v1::WorkerGateway::NewStub(std::move(channel))), callbacks_(std::move(callbacks)) {
  reader_ = std::thread([this] { ReadLoop(); });
}

GatewayStream::~GatewayStream() {
  Cancel();
  reader_.join();
}

void GatewayStream::Send(v1::WorkerMessage message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (close_send_ || reader_done_ || cancelled_) return;
    queue_.push_back(std::move(message));
  }
  cv_.notify_all();
}

void GatewayStream::CloseSend() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    close_send_ = true;
  }
  cv_.notify_all();
}

void GatewayStream::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
  // Safe before the call exists: gRPC cancels it as soon as it is created.
  context_.TryCancel();
}

void GatewayStream::ReadLoop() {
  // Creating the call may block (connection set-up), hence on this thread.
  stream_ = stub_->Connect(&context_);
  if (callbacks_.on_open) callbacks_.on_open();
  writer_ = std::thread([this] { WriteLoop(); });

  v1::CoordinatorMessage message;
  while (stream_->Read(&message)) {
    if (callbacks_.on_message) callbacks_.on_message(std::move(message));
    message.Clear();
  }

  {
    std::unique_lock<std::mutex> lock(mu_);
    reader_done_ = true;
    cv_.notify_all();
    if (!cv_.wait_for(lock, kWriterExitGrace, [this] { return writer_exited_; })) {
      lock.unlock();
      spdlog::warn(
          "coordinator stream: a write is still blocked after the stream ended; cancelling");
      context_.TryCancel();
    }
  }
  writer_.join();
  const grpc::Status status = stream_->Finish();
  if (callbacks_.on_closed) callbacks_.on_closed(status);
}

void GatewayStream::WriteLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return reader_done_ || cancelled_ || close_send_ || !queue_.empty(); });
    if (reader_done_ || cancelled_) break;
    if (!queue_.empty()) {
      v1::WorkerMessage message = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      const bool ok = stream_->Write(message);
      lock.lock();
      if (!ok) break;  // the stream is broken; Read ends too
      continue;
    }
    // close_send_ with nothing left to write.
    lock.unlock();
    stream_->WritesDone();
    lock.lock();
    break;
  }
  queue_.clear();
  writer_exited_ = true;
  cv_.notify_all();
}

}  // namespace paradnn::worker
