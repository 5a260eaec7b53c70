#include "worker/gateway_stream.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "absl/time/time.h"

namespace paradnn::worker {
namespace {

// How long the reader waits for a writer stuck in Write after the server
// ended the call before cancelling it (a Write normally fails at once then).
constexpr absl::Duration kWriterExitGrace = absl::Seconds(5);

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
    absl::MutexLock lock(&mu_);
    if (close_send_ || reader_done_ || cancelled_) return;
    queue_.push_back(std::move(message));
  }
  cv_.SignalAll();
}

void GatewayStream::CloseSend() {
  {
    absl::MutexLock lock(&mu_);
    close_send_ = true;
  }
  cv_.SignalAll();
}

void GatewayStream::Cancel() {
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }
  cv_.SignalAll();
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
    absl::ReleasableMutexLock lock(&mu_);
    reader_done_ = true;
    cv_.SignalAll();
    const absl::Time deadline = absl::Now() + kWriterExitGrace;
    while (!writer_exited_ && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    if (!writer_exited_) {
      lock.Release();
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
  absl::MutexLock lock(&mu_);
  for (;;) {
    while (!reader_done_ && !cancelled_ && !close_send_ && queue_.empty()) cv_.Wait(&mu_);
    if (reader_done_ || cancelled_) break;
    if (!queue_.empty()) {
      v1::WorkerMessage message = std::move(queue_.front());
      queue_.pop_front();
      mu_.Unlock();
      const bool ok = stream_->Write(message);
      mu_.Lock();
      if (!ok) break;  // the stream is broken; Read ends too
      continue;
    }
    // close_send_ with nothing left to write.
    mu_.Unlock();
    stream_->WritesDone();
    mu_.Lock();
    break;
  }
  queue_.clear();
  writer_exited_ = true;
  cv_.SignalAll();
}

}  // namespace paradnn::worker
