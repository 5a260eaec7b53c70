// SIGINT/SIGTERM handling for the CLI. A signal must not kill `paradnn
// local` before it has stopped its child processes, nor leave a progress
// line half drawn; so the signals are blocked in every thread and a
// dedicated thread receives them (a signalfd) and runs the innermost
// installed handler, which typically cancels the RPC in flight. With no
// handler installed the process exits at once with 128 + signal. A second
// signal while the first is being handled exits at once as well (children
// started by LocalCluster then get SIGTERM through PR_SET_PDEATHSIG).
#ifndef PARADNN_CLIENT_INTERRUPT_H_
#define PARADNN_CLIENT_INTERRUPT_H_

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace paradnn::client {

class InterruptWatcher {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread, so in every thread it
  // starts afterwards, and starts the watcher thread. Construct it in main()
  // before anything starts a thread (gRPC does on first use).
  InterruptWatcher();
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // The signal received, 0 if none yet. Thread-safe.
  int signal_number() const { return signal_.load(); }
  bool interrupted() const { return signal_number() != 0; }

  // Installs `handler` (run on the watcher thread, under a lock that Pop
  // also takes, so a handler never runs after its Pop returns). Handlers
  // nest; the innermost runs. If a signal already arrived, `handler` runs
  // now, on the calling thread.
  void Push(std::function<void()> handler) ABSL_LOCKS_EXCLUDED(mu_);
  void Pop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  std::atomic<int> signal_{0};
  int signal_fd_ = -1;  // SIGINT and SIGTERM, read by the watcher thread
  int stop_fd_ = -1;    // an eventfd the destructor writes to stop it
  absl::Mutex mu_;
  std::vector<std::function<void()>> handlers_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// Installs a handler for the scope's lifetime. `watcher` may be null.
class ScopedInterruptHandler {
 public:
  ScopedInterruptHandler(InterruptWatcher* watcher, std::function<void()> handler)
      : watcher_(watcher) {
    if (watcher_ != nullptr) watcher_->Push(std::move(handler));
  }
  ~ScopedInterruptHandler() {
    if (watcher_ != nullptr) watcher_->Pop();
  }
  ScopedInterruptHandler(const ScopedInterruptHandler&) = delete;
  ScopedInterruptHandler& operator=(const ScopedInterruptHandler&) = delete;

 private:
  InterruptWatcher* watcher_;
};

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_INTERRUPT_H_
