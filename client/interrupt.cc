#include "client/interrupt.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

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
  thread_ = std::thread([this] { Run(); });
}

InterruptWatcher::~InterruptWatcher() {
  stopping_ = true;
  thread_.join();
}

void InterruptWatcher::Push(std::function<void()> handler) {
  std::lock_guard<std::mutex> lock(mu_);
  handlers_.push_back(std::move(handler));
  if (signal_.load() != 0 && handlers_.back()) handlers_.back()();
}

void InterruptWatcher::Pop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!handlers_.empty()) handlers_.pop_back();
}

void InterruptWatcher::Run() {
  const sigset_t set = InterruptSignals();
  // A short timeout lets the destructor stop the thread without a signal.
  const timespec tick = {0, 200L * 1000 * 1000};
  while (!stopping_.load()) {
    const int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig < 0) continue;  // EAGAIN (timeout) or EINTR
    int expected = 0;
    if (!signal_.compare_exchange_strong(expected, sig)) {
      // Second signal: the user insists.
      std::_Exit(128 + sig);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (handlers_.empty() || !handlers_.back()) std::_Exit(128 + sig);
    handlers_.back()();
  }
}

}  // namespace paradnn::client
