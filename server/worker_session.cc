#include "server/worker_session.h"

namespace paradnn::server {

bool WorkerSession::Send(const v1::CoordinatorMessage& message) {
  // Held across the call so the reactor cannot finish (and be deleted)
  // between the check and the send.
  absl::MutexLock lock(&mu_);
  if (!send_) return false;
  send_(message);
  return true;
}

void WorkerSession::End(const absl::Status& reason) {
  // As in Send: the reactor cannot be deleted while the lock is held.
  absl::MutexLock lock(&mu_);
  if (!send_) return;
  send_ = nullptr;
  if (end_) end_(reason);
  end_ = nullptr;
}

void WorkerSession::MarkClosed() {
  absl::MutexLock lock(&mu_);
  send_ = nullptr;
  end_ = nullptr;
}

bool WorkerSession::closed() const {
  absl::MutexLock lock(&mu_);
  return !send_;
}

}  // namespace paradnn::server
