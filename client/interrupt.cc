#include "client/interrupt.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace paradnn::client {
namespace {

sigset_t InterruptSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

InterruptWatcher::InterruptWatcher() {
  const sigset_t set = InterruptSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // The watcher sleeps in poll() on a signalfd and an eventfd the destructor
  // writes, so it wakes for a signal or for exit at once (a timed wait made
  // every CLI call pay its tick at exit).
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (signal_fd_ < 0 || stop_fd_ < 0) {
    std::perror("paradnn: signalfd/eventfd");
    std::abort();
  }
  thread_ = std::thread([this] { Run(); });
}

InterruptWatcher::~InterruptWatcher() {
  const uint64_t one = 1;
  while (write(stop_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
  thread_.join();
  close(signal_fd_);
  close(stop_fd_);
}

void InterruptWatcher::Push(std::function<void()> handler) {
  absl::MutexLock lock(&mu_);
  handlers_.push_back(std::move(handler));
  if (signal_.load() != 0 && handlers_.back()) handlers_.back()();
}

void InterruptWatcher::Pop() {
  absl::MutexLock lock(&mu_);
  if (!handlers_.empty()) handlers_.pop_back();
}

void InterruptWatcher::Run() {
  for (;;) {
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;  // EINTR
    if (fds[1].revents != 0) return;
    signalfd_siginfo info;
    if (read(signal_fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
    const int sig = static_cast<int>(info.ssi_signo);
    int expected = 0;
    if (!signal_.compare_exchange_strong(expected, sig)) {
      // Second signal: the user insists.
      std::_Exit(128 + sig);
    }
    absl::MutexLock lock(&mu_);
    if (handlers_.empty() || !handlers_.back()) std::_Exit(128 + sig);
    handlers_.back()();
  }
}

}  // namespace paradnn::client
