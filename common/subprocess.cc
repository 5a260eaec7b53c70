#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace paradnn::common {
namespace {

// Returns `fd` moved to a number >= 3 (O_CLOEXEC), so that the child's
// dup2 onto 0/1/2 never clobbers another pipe end when the parent itself
// was started with a standard stream closed.
absl::StatusOr<ScopedFd> AboveStdio(int fd) {
  ScopedFd owned(fd);
  if (fd > 2) return owned;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    return absl::InternalError(absl::StrCat("fcntl(F_DUPFD_CLOEXEC): ", std::strerror(errno)));
  return ScopedFd(moved);
}

struct Pipe {
  ScopedFd read_end;
  ScopedFd write_end;
};

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  ScopedFd write_guard(fds[1]);
  absl::StatusOr<ScopedFd> read_end = AboveStdio(fds[0]);
  if (!read_end.ok()) return read_end.status();
  absl::StatusOr<ScopedFd> write_end = AboveStdio(write_guard.Release());
  if (!write_end.ok()) return write_end.status();
  return Pipe{std::move(*read_end), std::move(*write_end)};
}

// The pipe of one standard stream, or, for `given` >= 0, a copy of it as the
// child's end (above stdio, O_CLOEXEC) and no end of ours.
absl::StatusOr<Pipe> StreamFor(int given, bool child_reads) {
  if (given < 0) return MakePipe();
  const int copy = ::fcntl(given, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) {
    return absl::InternalError(absl::StrCat("fcntl(F_DUPFD_CLOEXEC): ", std::strerror(errno)));
  }
  Pipe pipe;
  (child_reads ? pipe.read_end : pipe.write_end) = ScopedFd(copy);
  return pipe;
}

// Runs in the forked child: only async-signal-safe calls until execv.
[[noreturn]] void ExecChild(char* const* argv, char* const* envp, pid_t parent, int stdin_fd,
                            int stdout_fd, int stderr_fd, int error_fd,
                            int64_t address_space_limit_bytes, int parent_death_signal,
                            bool own_process_group) {
  auto fail = [error_fd]() {
    const int err = errno;
    ssize_t ignored = ::write(error_fd, &err, sizeof(err));
    (void)ignored;
    ::_exit(127);
  };
  if (own_process_group && ::setpgid(0, 0) != 0) fail();
  // Die with the parent; if it already died before prctl, leave now.
  if (parent_death_signal != 0) {
    if (::prctl(PR_SET_PDEATHSIG, parent_death_signal) != 0) fail();
    if (::getppid() != parent) ::_exit(127);
  }
  if (address_space_limit_bytes > 0) {
    const rlimit limit{static_cast<rlim_t>(address_space_limit_bytes),
                       static_cast<rlim_t>(address_space_limit_bytes)};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) fail();
  }
  if (::dup2(stdin_fd, STDIN_FILENO) < 0 || ::dup2(stdout_fd, STDOUT_FILENO) < 0 ||
      ::dup2(stderr_fd, STDERR_FILENO) < 0) {
    fail();
  }
  // Every descriptor except 0/1/2 and the exec-error pipe (O_CLOEXEC) goes.
  if (error_fd > 3) ::close_range(3, static_cast<unsigned>(error_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(error_fd) + 1, ~0u, 0);
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof(default_action));
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &default_action, nullptr);  // EINVAL for libc-reserved signals is fine
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  if (envp != nullptr) {
    ::execve(argv[0], argv, envp);
  } else {
    ::execv(argv[0], argv);
  }
  fail();
  ::_exit(127);
}

}  // namespace

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

int ScopedFd::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void ScopedFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

absl::StatusOr<ScopedFd> OpenForChild(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  return ScopedFd(fd);
}

absl::StatusOr<SpawnedChild> SpawnChild(const std::vector<std::string>& argv,
                                        const SpawnOptions& options) {
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("SpawnChild: empty argv");
  const std::vector<std::string>* environment = options.environment;
  // Everything the child needs is prepared before fork: after fork only
  // async-signal-safe calls are allowed (the parent may have other threads).
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  c_argv.reserve(args.size() + 1);
  for (std::string& arg : args) c_argv.push_back(arg.data());
  c_argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> c_envp;
  if (environment != nullptr) {
    env_strings = *environment;
    for (std::string& entry : env_strings) c_envp.push_back(entry.data());
    c_envp.push_back(nullptr);
  }

  absl::StatusOr<Pipe> in = StreamFor(options.stdin_fd, /*child_reads=*/true);
  if (!in.ok()) return in.status();
  absl::StatusOr<Pipe> out = StreamFor(options.stdout_fd, /*child_reads=*/false);
  if (!out.ok()) return out.status();
  absl::StatusOr<Pipe> err = StreamFor(options.stderr_fd, /*child_reads=*/false);
  if (!err.ok()) return err.status();
  absl::StatusOr<Pipe> exec_error = MakePipe();
  if (!exec_error.ok()) return exec_error.status();

  // Block signals across fork so that no handler of the worker (e.g. an
  // asio signal_set, which writes to a pipe shared with the parent) runs in
  // the child before it resets dispositions.
  sigset_t all;
  sigset_t original;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &original);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ExecChild(c_argv.data(), environment != nullptr ? c_envp.data() : nullptr, parent,
              in->read_end.get(), out->write_end.get(), err->write_end.get(),
              exec_error->write_end.get(), options.address_space_limit_bytes,
              options.parent_death_signal, options.own_process_group);
  }
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &original, nullptr);
  if (pid < 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("fork for '", argv[0], "': ", std::strerror(fork_errno)));
  }
  // Also from the parent, so that a kill right after this call already
  // reaches the group (EACCES once the child has exec'd is harmless).
  if (options.own_process_group) ::setpgid(pid, pid);

  in->read_end.Reset();
  out->write_end.Reset();
  err->write_end.Reset();
  exec_error->write_end.Reset();

  // The exec-error pipe closes on a successful exec (O_CLOEXEC) or carries
  // errno from a failed one.
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_error->read_end.get(), &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string message =
        absl::StrCat("cannot execute '", argv[0], "': ", std::strerror(child_errno));
    if (child_errno == ENOENT || child_errno == ENOTDIR) return absl::NotFoundError(message);
    if (child_errno == EACCES || child_errno == EPERM) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }

  SpawnedChild child;
  child.pid = pid;
  child.stdin_fd = std::move(in->write_end);
  child.stdout_fd = std::move(out->read_end);
  child.stderr_fd = std::move(err->read_end);
  return child;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    // sigabbrev_np/sigdescr_np are the thread-safe forms of strsignal.
    const char* abbrev = ::sigabbrev_np(sig);
    const char* description = ::sigdescr_np(sig);
    std::string name;
    if (abbrev != nullptr && description != nullptr)
      name = absl::StrCat(" (SIG", abbrev, ", ", description, ")");
    return absl::StrCat("killed by signal ", sig, name,
                        WCOREDUMP(wait_status) ? ", core dumped" : "");
  }
  return absl::StrCat("stopped with wait status ", wait_status);
}

void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

}  // namespace paradnn::common
