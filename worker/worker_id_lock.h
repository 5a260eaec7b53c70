// Distinct default worker ids for the workers of one host. The coordinator
// keeps a worker's leases by id and refuses a second live stream with an id
// in use, so two paradnn-workers started alike on one host (data-parallel
// ranks sharing a host) must not both call themselves <host>-<device>-<id>.
//
// Each id a worker takes is an exclusive flock on <lock_dir>/<id>.lock held
// for the process's life: the first worker gets `base`, the next `base`-2,
// then `base`-3, ... The kernel drops the lock when the process dies, so a
// restarted worker gets its old id back (the lowest one free) and with it
// the leases the coordinator kept for that id.
#ifndef PARADNN_WORKER_WORKER_ID_LOCK_H_
#define PARADNN_WORKER_WORKER_ID_LOCK_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/subprocess.h"

namespace paradnn::worker {

class WorkerIdLock {
 public:
  // Ids tried per base before giving up: base, base-2, ..., base-256.
  static constexpr int kMaxIdsPerBase = 256;

  // Takes the first id of `base`, `base`-2, ... whose lock no live process
  // (this one included: flock locks belong to an open file, not a process)
  // holds. `lock_dir` is created if missing. FailedPrecondition when the
  // directory or a lock file cannot be made; ResourceExhausted when every
  // id up to kMaxIdsPerBase is held.
  static absl::StatusOr<WorkerIdLock> Take(const std::string& lock_dir, const std::string& base);

  WorkerIdLock(WorkerIdLock&&) noexcept = default;
  WorkerIdLock& operator=(WorkerIdLock&&) noexcept = default;
  WorkerIdLock(const WorkerIdLock&) = delete;
  WorkerIdLock& operator=(const WorkerIdLock&) = delete;
  // Releases the id.
  ~WorkerIdLock() = default;

  const std::string& id() const { return id_; }

 private:
  WorkerIdLock(std::string id, common::ScopedFd fd) : id_(std::move(id)), fd_(std::move(fd)) {}

  std::string id_;
  common::ScopedFd fd_;  // holds the flock; closing it releases the id
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_WORKER_ID_LOCK_H_
