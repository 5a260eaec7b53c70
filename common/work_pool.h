// WorkPool runs blocking work — a sweep's planning, an analysis, a model
// read from SQLite — on threads of its own, so that gRPC reactions and the
// database writer, which must never block (docs/style.md), only hand it over.
//
// A fixed number of threads take tasks in submission order. TryRun refuses
// a task when no thread is free (callers that would rather answer "busy"
// than queue, as Analyze does); Run queues it. The destructor stops taking
// new tasks, runs every queued one, then joins: a task may capture objects
// that outlive the pool, never the reverse.
//
// Thread-safe. Tasks must not wait on their own pool.
#ifndef PARADNN_COMMON_WORK_POOL_H_
#define PARADNN_COMMON_WORK_POOL_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace paradnn::common {

class WorkPool {
 public:
  // `threads` >= 1. `name` is the threads' name in ps/top (15 characters
  // at most are kept).
  WorkPool(int threads, std::string name);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Queues `task`.
  void Run(std::function<void()> task) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues `task` only when a thread is free for it now; false otherwise.
  bool TryRun(std::function<void()> task) ABSL_LOCKS_EXCLUDED(mu_);

  // Tasks queued or running.
  int pending() const ABSL_LOCKS_EXCLUDED(mu_);
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // a task queued, or stopping
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // fixed once the constructor returns
};

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_WORK_POOL_H_
