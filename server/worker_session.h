// WorkerSession is the coordinator's handle on one connected worker stream:
// its serial and an outbox onto it. Who the worker is, its platform and the
// jobs it holds are the Scheduler's (server/scheduler.h), keyed by worker id.
//
// The gRPC reactor owns the stream; the session outlives it (shared_ptr held
// by the Scheduler) and drops messages once the stream is gone.
// Thread-safe.
#ifndef PARADNN_SERVER_WORKER_SESSION_H_
#define PARADNN_SERVER_WORKER_SESSION_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::server {

class WorkerSession {
 public:
  // `send` queues a message on the stream; it runs under the session's lock
  // and must neither block nor call back into the session.
  using SendFn = std::function<void(const v1::CoordinatorMessage&)>;
  // Ends the stream with a status; same rules as SendFn.
  using EndFn = std::function<void(const absl::Status&)>;

  // `trust_domain`: common::TrustDomainOf the stream's worker token.
  WorkerSession(uint64_t stream_serial, SendFn send, EndFn end = nullptr,
                std::string trust_domain = "")
      : stream_serial_(stream_serial),
        trust_domain_(std::move(trust_domain)),
        send_(std::move(send)),
        end_(std::move(end)) {}

  // Sends unless the stream has closed. Returns false if it had.
  bool Send(const v1::CoordinatorMessage& message) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the stream with `reason` (the worker reads it as the call's status)
  // unless it has closed; later Sends are dropped.
  void End(const absl::Status& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // Called by the reactor when the stream ends; later Sends are dropped.
  void MarkClosed() ABSL_LOCKS_EXCLUDED(mu_);
  bool closed() const ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t stream_serial() const { return stream_serial_; }
  const std::string& trust_domain() const { return trust_domain_; }

 private:
  const uint64_t stream_serial_;
  const std::string trust_domain_;
  mutable absl::Mutex mu_;
  SendFn send_ ABSL_GUARDED_BY(mu_);  // cleared when closed
  EndFn end_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_WORKER_SESSION_H_
