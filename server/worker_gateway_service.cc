#include "server/worker_gateway_service.h"

#include <spdlog/spdlog.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/address.h"
#include "common/auth.h"
#include "common/work_pool.h"
#include "server/grpc_status.h"

namespace paradnn::server {
namespace {

// Lives from Connect until OnDone. Reads one message at a time; writes are
// queued and sent one at a time (the callback API allows one outstanding
// write).
class WorkerStream final
    : public grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage> {
 public:
  WorkerStream(Scheduler* scheduler, ConnectionLedger* ledger, common::WorkPool* hellos,
               uint64_t serial, std::string peer, std::vector<std::string> allowed_ids)
      : scheduler_(scheduler),
        ledger_(ledger),
        hellos_(hellos),
        peer_(std::move(peer)),
        allowed_ids_(std::move(allowed_ids)) {
    session_ = std::make_shared<WorkerSession>(
        serial, [this](const v1::CoordinatorMessage& message) { Enqueue(message); },
        [this](const absl::Status& reason) { Finishing(ToGrpc(reason)); },
        common::TrustDomainOf(allowed_ids_));
    StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The worker closed its side or the stream broke.
      Close(grpc::Status::OK);
      return;
    }
    if (worker_id_.empty()) {
      if (!incoming_.has_hello()) {
        Close(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                           "the first message of WorkerGateway.Connect must be a hello"));
        return;
      }
      if (!common::WorkerIdAllowed(allowed_ids_, incoming_.hello().worker_id())) {
        // A token issued for other hosts: the id is not echoed beyond the log.
        spdlog::warn("stream from {}: its token may not be used by worker id '{}'", peer_,
                     incoming_.hello().worker_id());
        Close(grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                           "this worker token may not be used by worker id '" +
                               incoming_.hello().worker_id().substr(0, 256) +
                               "' (the coordinator's --worker-token-file names the ids it may)"));
        return;
      }
      // The hello reads the worker's open attempts from the database: on a
      // hello thread, not this callback. No read is outstanding meanwhile,
      // and the stream is not finished before the hello is through.
      {
        absl::MutexLock lock(&mu_);
        hello_pending_ = true;
      }
      hellos_->Run([this] { AcceptHello(); });
      return;
    }
    scheduler_->OnWorkerMessage(session_, worker_id_, incoming_);
    StartRead(&incoming_);
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      outbox_.pop_front();
      if (!ok) {
        write_broken_ = true;
        outbox_.clear();
      }
      if (!outbox_.empty()) {
        StartWrite(&outbox_.front());
      } else {
        writing_ = false;
        if (closing_ && !finished_ && !hello_pending_) finish = MarkFinished();
      }
    }
    if (finish) Finish(*finish);
  }

  void OnDone() override {
    session_->MarkClosed();
    scheduler_->OnStreamClosed(session_, worker_id_);
    if (ledger_ != nullptr && !worker_id_.empty()) ledger_->Disconnected(worker_id_);
    delete this;
  }

  void OnCancel() override { spdlog::debug("stream of worker {} cancelled", worker_id_); }

 private:
  // The hello, on a hello thread: the scheduler takes it (or refuses it);
  // then the stream reads on, or finishes if it was closed meanwhile.
  void AcceptHello() {
    // A worker that does not say where its gang rendezvous is reached is
    // reached where its stream comes from.
    v1::WorkerHello hello = incoming_.hello();
    if (hello.rendezvous_address().empty()) {
      hello.set_rendezvous_address(common::PeerHost(peer_));
    }
    const absl::Status status = scheduler_->OnHello(session_, hello);
    if (status.ok()) {
      worker_id_ = incoming_.hello().worker_id();
      if (ledger_ != nullptr) ledger_->Connected(worker_id_, incoming_.hello().device_kind());
      spdlog::debug("stream from {} is worker {}", peer_, worker_id_);
    } else {
      session_->MarkClosed();
    }
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      hello_pending_ = false;
      if (!status.ok() && !closing_) {
        closing_ = true;
        final_status_ = ToGrpc(status);
      }
      if (closing_) {
        if (!writing_ && !finished_) finish = MarkFinished();
      } else {
        // Under the lock: a Finishing() now waits until the read is
        // outstanding, so the stream cannot end before it.
        StartRead(&incoming_);
      }
    }
    if (finish) Finish(*finish);
  }

  void Enqueue(const v1::CoordinatorMessage& message) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (closing_ || write_broken_) return;
    outbox_.push_back(message);
    if (!writing_) {
      writing_ = true;
      StartWrite(&outbox_.front());
    }
  }

  // Ends the stream once queued writes are out.
  void Close(grpc::Status status) {
    session_->MarkClosed();
    Finishing(std::move(status));
  }

  // Close without the session (which is ending it, under its own lock).
  void Finishing(grpc::Status status) ABSL_LOCKS_EXCLUDED(mu_) {
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      if (closing_) return;
      closing_ = true;
      final_status_ = std::move(status);
      if (!writing_ && !finished_ && !hello_pending_) finish = MarkFinished();
    }
    if (finish) Finish(*finish);
  }

  // The status to Finish with, once: the caller calls Finish after
  // unlocking.
  grpc::Status MarkFinished() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    return final_status_;
  }

  Scheduler* const scheduler_;
  ConnectionLedger* const ledger_;
  common::WorkPool* const hellos_;
  const std::string peer_;
  // Worker ids the stream's token may say hello as (empty: any).
  const std::vector<std::string> allowed_ids_;
  std::shared_ptr<WorkerSession> session_;
  std::string worker_id_;  // set by the hello; used on the reactor's threads only
  v1::WorkerMessage incoming_;

  absl::Mutex mu_;
  std::deque<v1::CoordinatorMessage> outbox_ ABSL_GUARDED_BY(mu_);  // front is being written
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_broken_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // A hello is with the scheduler (AcceptHello): the stream does not
  // finish until it is back.
  bool hello_pending_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage>* WorkerGatewayService::Connect(
    grpc::CallbackServerContext* context) {
  if (authorizer_ != nullptr) {
    if (grpc::Status auth = authorizer_->Authorize(*context, CallerRole::kWorker); !auth.ok()) {
      spdlog::warn("refused a worker stream from {}: {}", context->peer(), auth.error_message());
      return new RefusedCall<grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage>>(
          auth);
    }
  }
  std::vector<std::string> allowed_ids;
  if (authorizer_ != nullptr) allowed_ids = authorizer_->WorkerIdsOf(*context);
  return new WorkerStream(scheduler_, ledger_, hellos_.get(), next_stream_serial_++,
                          context->peer(), std::move(allowed_ids));
}

}  // namespace paradnn::server
