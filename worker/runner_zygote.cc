#include "worker/runner_zygote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/zygote_protocol.h"

namespace paradnn::worker {

using common::ScopedFd;
using common::SpawnChild;
using common::SpawnedChild;
namespace {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// A pipe whose ends are O_CLOEXEC and above the standard descriptors.
absl::Status MakePipe(ScopedFd* read_end, ScopedFd* write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe2");
  ScopedFd r(fds[0]);
  ScopedFd w(fds[1]);
  for (ScopedFd* fd : {&r, &w}) {
    if (fd->get() > 2) continue;
    const int moved = ::fcntl(fd->get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return Errno("fcntl(F_DUPFD_CLOEXEC)");
    *fd = ScopedFd(moved);
  }
  *read_end = std::move(r);
  *write_end = std::move(w);
  return absl::OkStatus();
}

void Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<RunnerZygote>> RunnerZygote::Start(
    const std::string& runner_path, std::chrono::milliseconds ready_timeout) {
  // Job processes are forked by the zygote through an intermediate that
  // exits at once; the subreaper bit makes them ours, not init's.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return Errno("prctl(PR_SET_CHILD_SUBREAPER)");
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) != 0) {
    return Errno("socketpair");
  }
  ScopedFd ours(sockets[0]);
  ScopedFd theirs(sockets[1]);
  absl::StatusOr<SpawnedChild> child =
      SpawnChild({runner_path, "--zygote"}, common::SpawnOptions{.stdin_fd = theirs.get()});
  if (!child.ok()) return child.status();
  theirs.Reset();
  child->stdout_fd.Reset();  // the zygote writes nothing there

  pollfd ready{ours.get(), POLLIN, 0};
  int polled;
  do {
    polled = ::poll(&ready, 1, static_cast<int>(ready_timeout.count()));
  } while (polled < 0 && errno == EINTR);
  char byte = 0;
  if (polled <= 0 || ::recv(ours.get(), &byte, 1, 0) != 1 || byte != kZygoteReady) {
    ::kill(child->pid, SIGKILL);
    Reap(child->pid);
    return absl::UnavailableError(
        absl::StrCat("'", runner_path, " --zygote' did not become ready",
                     polled == 0 ? absl::StrCat(" within ", ready_timeout.count(), " ms")
                                 : " (it has no zygote mode or exited)"));
  }
  return std::unique_ptr<RunnerZygote>(
      new RunnerZygote(child->pid, std::move(ours), std::move(child->stderr_fd)));
}

RunnerZygote::RunnerZygote(pid_t pid, ScopedFd control, ScopedFd stderr_fd)
    : pid_(pid), control_(std::move(control)) {
  stderr_logger_ = std::thread([pid, fd = std::move(stderr_fd)] {
    std::string pending;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buffer, static_cast<size_t>(n));
      for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
        spdlog::debug("runner zygote {}: {}", pid, pending.substr(0, end));
        pending.erase(0, end + 1);
      }
    }
  });
}

RunnerZygote::~RunnerZygote() {
  {
    absl::MutexLock lock(&mu_);
    control_.Reset();  // EOF: the zygote leaves its loop
  }
  // Job processes are not its children: they live on until their
  // supervisors end them.
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 100 && (reaped = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
    ::usleep(10'000);
  }
  if (reaped == 0) {
    ::kill(pid_, SIGKILL);
    Reap(pid_);
  }
  if (stderr_logger_.joinable()) stderr_logger_.join();
}

absl::StatusOr<SpawnedChild> RunnerZygote::Spawn(int64_t address_space_limit_bytes) {
  ScopedFd stdin_read, stdin_write, stdout_read, stdout_write, stderr_read, stderr_write;
  if (absl::Status s = MakePipe(&stdin_read, &stdin_write); !s.ok()) return s;
  if (absl::Status s = MakePipe(&stdout_read, &stdout_write); !s.ok()) return s;
  if (absl::Status s = MakePipe(&stderr_read, &stderr_write); !s.ok()) return s;

  absl::MutexLock lock(&mu_);
  if (dead_ || !control_.valid()) return absl::UnavailableError("the runner zygote is gone");
  ZygoteRequest request;
  request.address_space_limit_bytes = address_space_limit_bytes;
  iovec io{&request, sizeof(request)};
  const int fds[kZygoteFds] = {stdin_read.get(), stdout_write.get(), stderr_write.get()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(fds))];
  std::memset(control, 0, sizeof(control));
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&message);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(fds));
  std::memcpy(CMSG_DATA(c), fds, sizeof(fds));
  ssize_t n;
  do {
    n = ::sendmsg(control_.get(), &message, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  ZygoteReply reply;
  if (n == static_cast<ssize_t>(sizeof(request))) {
    do {
      n = ::recv(control_.get(), &reply, sizeof(reply), 0);
    } while (n < 0 && errno == EINTR);
  }
  if (n != static_cast<ssize_t>(sizeof(reply))) {
    dead_ = true;
    return absl::UnavailableError(
        absl::StrCat("the runner zygote (pid ", pid_, ") stopped answering"));
  }
  if (reply.pid <= 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the runner zygote could not fork a job: ", std::strerror(reply.error)));
  }
  // The job process sets its own group too; this closes the window in
  // which a kill of the group could come first (it is our child now).
  ::setpgid(reply.pid, reply.pid);
  SpawnedChild child;
  child.pid = reply.pid;
  child.stdin_fd = std::move(stdin_write);
  child.stdout_fd = std::move(stdout_read);
  child.stderr_fd = std::move(stderr_read);
  return child;
}

}  // namespace paradnn::worker
