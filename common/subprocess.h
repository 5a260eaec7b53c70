// Starting a program as a child: the one launcher of paradnn (the worker's
// runners and platform probe, the CLI's local coordinator and worker and
// gnuplot, the tests' processes). The child leads its own process group,
// so killpg reaches it and everything it started; each standard stream is a
// pipe to the parent or a copy of a descriptor the caller gives (a socket,
// a log file, /dev/null); exec failures come back as errors naming the
// program.
#ifndef PARADNN_COMMON_SUBPROCESS_H_
#define PARADNN_COMMON_SUBPROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace paradnn::common {

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

// A running child and the parent's ends of its pipes (all O_CLOEXEC,
// blocking; empty for a stream given a descriptor). Unless told otherwise
// the child is the leader of a new process group whose id is `pid`, so
// killpg(pid, ...) reaches it and everything it started. The caller must
// reap `pid` with waitpid.
struct SpawnedChild {
  pid_t pid = -1;
  ScopedFd stdin_fd;   // write end of the child's stdin
  ScopedFd stdout_fd;  // read end of the child's stdout
  ScopedFd stderr_fd;  // read end of the child's stderr
};

struct SpawnOptions {
  // >= 0: the child's stdin / stdout / stderr is a copy of this descriptor
  // (ours stays open and ours); -1: a pipe to us.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // > 0: caps the child's virtual memory (RLIMIT_AS): allocations beyond it
  // fail inside the child, which LibTorch reports as an allocation error
  // (the OOM outcome) instead of the host swapping or the kernel's OOM
  // killer choosing a victim.
  int64_t address_space_limit_bytes = 0;
  // Set: the child's whole environment ("NAME=value" entries) instead of ours.
  const std::vector<std::string>* environment = nullptr;
  // Sent to the child when the thread that called SpawnChild exits
  // (PR_SET_PDEATHSIG), so that a parent that dies leaves no child behind;
  // 0: none (the child outlives a short-lived spawning thread).
  int parent_death_signal = SIGKILL;
  // False: the child stays in our process group, so that whoever kills our
  // group kills it too (the stack doctor's trials).
  bool own_process_group = true;
};

// Starts argv[0] (a path; PATH is not searched) with `argv`. Returns
// NotFound / PermissionDenied / Internal naming the program when it cannot be
// executed (the failed child is already reaped then). In the child: signal
// mask and dispositions are reset to defaults and descriptors other than
// 0/1/2 are closed. With a parent death signal, call it from a long-lived
// thread. Thread-safe (fork-safe: the child only makes async-signal-safe
// calls).
absl::StatusOr<SpawnedChild> SpawnChild(const std::vector<std::string>& argv,
                                        const SpawnOptions& options = {});

// `path` opened for a child's stream (O_CLOEXEC; flags as open(2), mode
// 0644 when created), e.g. a log file or "/dev/null"; FailedPrecondition
// naming the path otherwise.
absl::StatusOr<ScopedFd> OpenForChild(const std::string& path, int flags);

// Describes a waitpid status for humans: "exited with status 3",
// "killed by signal 6 (Aborted)".
std::string DescribeWaitStatus(int wait_status);

// Sets SIGPIPE to SIG_IGN for the whole process (once), so that writing to a
// child that has died returns EPIPE instead of killing the parent. Children
// started by SpawnChild get the default disposition back. Thread-safe.
void IgnoreSigpipe();

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_SUBPROCESS_H_
