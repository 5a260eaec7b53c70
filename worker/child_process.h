// Starting paradnn-runner (or any program) as a child in its own process
// group, with pipes on its stdin, stdout and stderr, so that the worker can
// talk to it, read its logs, and kill it together with anything it started.
#ifndef PARADNN_WORKER_CHILD_PROCESS_H_
#define PARADNN_WORKER_CHILD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace paradnn::worker {

// Owns one file descriptor and closes it on destruction. Movable.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership and returns the descriptor.
  int Release();
  // Closes the descriptor (if any).
  void Reset();

 private:
  int fd_ = -1;
};

// A running child and the parent's ends of its three pipes (all O_CLOEXEC,
// blocking). The child is the leader of a new process group whose id is
// `pid`, so killpg(pid, ...) reaches it and everything it started. The caller
// must reap `pid` with waitpid.
struct SpawnedChild {
  pid_t pid = -1;
  ScopedFd stdin_fd;   // write end of the child's stdin
  ScopedFd stdout_fd;  // read end of the child's stdout
  ScopedFd stderr_fd;  // read end of the child's stderr
};

// Starts argv[0] (a path; PATH is not searched) with `argv`. Returns
// NotFound / PermissionDenied / Internal naming the program when it cannot be
// executed (the failed child is already reaped then). In the child: signal
// mask and dispositions are reset to defaults, descriptors other than
// 0/1/2 are closed, and it is sent SIGKILL when the thread that called
// SpawnChild exits (PR_SET_PDEATHSIG), so that a worker that dies never
// leaves a runner behind. Call it from a long-lived thread.
// Thread-safe (fork-safe: the child only makes async-signal-safe calls).
// `address_space_limit_bytes` > 0 caps the child's virtual memory
// (RLIMIT_AS): allocations beyond it fail inside the child, which LibTorch
// reports as an allocation error (the OOM outcome) instead of the host
// swapping or the kernel's OOM killer choosing a victim.
// `child_stdin` >= 0: the child's stdin is (a copy of) that descriptor, e.g.
// a socket, and the returned stdin_fd is empty. `environment` set: the
// child's whole environment ("NAME=value" entries) instead of ours.
absl::StatusOr<SpawnedChild> SpawnChild(const std::vector<std::string>& argv,
                                        int64_t address_space_limit_bytes = 0,
                                        int child_stdin = -1,
                                        const std::vector<std::string>* environment = nullptr);

// Describes a waitpid status for humans: "exited with status 3",
// "killed by signal 6 (Aborted)".
std::string DescribeWaitStatus(int wait_status);

// Sets SIGPIPE to SIG_IGN for the whole process (once), so that writing to a
// runner that has died returns EPIPE instead of killing the worker. Children
// started by SpawnChild get the default disposition back. Thread-safe.
void IgnoreSigpipe();

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_CHILD_PROCESS_H_
