#include "worker/runner/zygote_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/zygote_protocol.h"

namespace paradnn::worker {
namespace {

bool Reply(int control_fd, int32_t pid, int32_t error) {
  const ZygoteReply reply{pid, error};
  ssize_t n;
  do {
    n = ::send(control_fd, &reply, sizeof(reply), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(reply));
}

// In the job process: the request's descriptors become 0/1/2, nothing else
// stays open, then the job runs.
[[noreturn]] void RunJobProcess(const int fds[kZygoteFds], const ZygoteRequest& request,
                                pid_t worker, const std::function<int()>& run_job) {
  if (::setpgid(0, 0) != 0) ::_exit(126);
  if (request.address_space_limit_bytes > 0) {
    const rlimit limit{static_cast<rlim_t>(request.address_space_limit_bytes),
                       static_cast<rlim_t>(request.address_space_limit_bytes)};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(126);
  }
  for (int target = 0; target < kZygoteFds; ++target) {
    if (::dup2(fds[target], target) < 0) ::_exit(126);
  }
  ::close_range(kZygoteFds, ~0u, 0);
  // Die with the worker, as a runner it starts itself does. The signal
  // follows the parent, so it is set once the intermediate has exited and
  // the worker (a child subreaper) has adopted this process.
  for (int i = 0; i < 50'000 && ::getppid() != worker; ++i) ::usleep(100);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != worker) ::_exit(126);
  std::exit(run_job());
}

// The descriptors `message` carried, the first kZygoteFds into `fds` (any
// more are closed); returns how many were received.
int TakeDescriptors(msghdr* message, int fds[kZygoteFds]) {
  int received = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(message); c != nullptr; c = CMSG_NXTHDR(message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const int count = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    const int* data = reinterpret_cast<const int*>(CMSG_DATA(c));
    for (int i = 0; i < count; ++i) {
      if (received < kZygoteFds) {
        fds[received++] = data[i];
      } else {
        ::close(data[i]);
      }
    }
  }
  return received;
}

}  // namespace

int ServeZygote(int control_fd, const std::function<int()>& run_job) {
  const pid_t worker = ::getppid();
  if (::send(control_fd, &kZygoteReady, 1, MSG_NOSIGNAL) != 1) return 1;
  for (;;) {
    ZygoteRequest request;
    iovec io{&request, sizeof(request)};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kZygoteFds)];
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(control_fd, &message, MSG_CMSG_CLOEXEC);
    if (n == 0) return 0;  // the worker closed the channel
    if (n < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    int fds[kZygoteFds] = {-1, -1, -1};
    const int received = TakeDescriptors(&message, fds);
    auto close_fds = [&] {
      for (int fd : fds) {
        if (fd >= 0) ::close(fd);
      }
    };
    if (received != kZygoteFds || n != static_cast<ssize_t>(sizeof(request)) ||
        (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
      close_fds();
      if (!Reply(control_fd, 0, EINVAL)) return 1;
      continue;
    }
    int pid_pipe[2];
    if (::pipe2(pid_pipe, O_CLOEXEC) != 0) {
      const int error = errno;
      close_fds();
      if (!Reply(control_fd, 0, error)) return 1;
      continue;
    }
    const pid_t intermediate = ::fork();
    if (intermediate == 0) {
      ::close(pid_pipe[0]);
      ::close(control_fd);
      const pid_t job = ::fork();
      if (job == 0) {
        ::close(pid_pipe[1]);
        RunJobProcess(fds, request, worker, run_job);
      }
      const int32_t result = job > 0 ? job : -errno;
      ssize_t ignored = ::write(pid_pipe[1], &result, sizeof(result));
      (void)ignored;
      ::_exit(0);
    }
    const int fork_error = errno;
    close_fds();
    ::close(pid_pipe[1]);
    int32_t job = intermediate > 0 ? 0 : -fork_error;
    if (intermediate > 0) {
      // Once the intermediate is gone the job process has its new parent.
      int status = 0;
      while (::waitpid(intermediate, &status, 0) < 0 && errno == EINTR) {
      }
      ssize_t got;
      do {
        got = ::read(pid_pipe[0], &job, sizeof(job));
      } while (got < 0 && errno == EINTR);
      if (got != static_cast<ssize_t>(sizeof(job))) job = -ECHILD;
    }
    ::close(pid_pipe[0]);
    if (!Reply(control_fd, job > 0 ? job : 0, job > 0 ? 0 : -job)) return 1;
  }
}

}  // namespace paradnn::worker
