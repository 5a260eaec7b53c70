// A runner zygote (zygote_protocol.h): one `paradnn-runner --zygote` per
// worker, started once, from which every job process is forked, so a job
// does not pay the runner's start-up (loading LibTorch and registering its
// operators: about 0.5 s here) on its own wall time. Each job still runs in
// a fresh process of its own, in its own process group, with its own
// address-space limit; a job process is a child of the worker (re-parented
// to it as a child subreaper), so the supervisor reaps and kills it exactly
// as one it started with SpawnChild.
#ifndef PARADNN_WORKER_RUNNER_ZYGOTE_H_
#define PARADNN_WORKER_RUNNER_ZYGOTE_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/subprocess.h"

namespace paradnn::worker {

class RunnerZygote {
 public:
  // Starts `runner_path --zygote` and waits up to `ready_timeout` for it to
  // say it is ready. Makes this process a child subreaper. Unavailable when
  // the runner has no zygote mode (it exits instead) or is not ready in
  // time. Call it from a long-lived thread (the zygote dies with it).
  static absl::StatusOr<std::unique_ptr<RunnerZygote>> Start(
      const std::string& runner_path, std::chrono::milliseconds ready_timeout);
  // Closes the channel (the zygote exits) and reaps the zygote.
  ~RunnerZygote();
  RunnerZygote(const RunnerZygote&) = delete;
  RunnerZygote& operator=(const RunnerZygote&) = delete;

  // A new job process, as SpawnChild({runner, "--job-stdin"}, limit) would
  // start one: pipes on its stdin/stdout/stderr, leader of its own process
  // group, to be reaped by the caller. Unavailable once the zygote is gone.
  // Thread-safe.
  absl::StatusOr<common::SpawnedChild> Spawn(int64_t address_space_limit_bytes)
      ABSL_LOCKS_EXCLUDED(mu_);

  pid_t pid() const { return pid_; }

 private:
  RunnerZygote(pid_t pid, common::ScopedFd control, common::ScopedFd stderr_fd);

  const pid_t pid_;
  absl::Mutex mu_;  // one request at a time on the channel
  common::ScopedFd control_ ABSL_GUARDED_BY(mu_);
  bool dead_ ABSL_GUARDED_BY(mu_) = false;
  std::thread stderr_logger_;  // the zygote's own stderr, line by line
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_RUNNER_ZYGOTE_H_
