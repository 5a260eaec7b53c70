#include "common/work_pool.h"

#include <pthread.h>

#include <algorithm>
#include <cassert>
#include <utility>

namespace paradnn::common {

WorkPool::WorkPool(int threads, std::string name) {
  assert(threads >= 1);
  name.resize(std::min<size_t>(name.size(), 15));  // the kernel's limit
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Loop(); });
    pthread_setname_np(threads_.back().native_handle(), name.c_str());
  }
}

WorkPool::~WorkPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  for (std::thread& thread : threads_) thread.join();
}

void WorkPool::Run(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(task));
  }
  cv_.Signal();
}

bool WorkPool::TryRun(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (running_ + static_cast<int>(queue_.size()) >= static_cast<int>(threads_.size())) {
      return false;
    }
    queue_.push_back(std::move(task));
  }
  cv_.Signal();
  return true;
}

int WorkPool::pending() const {
  absl::MutexLock lock(&mu_);
  return running_ + static_cast<int>(queue_.size());
}

void WorkPool::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
    // Stopping still drains the queue: a queued task owes someone an answer
    // (a reactor's Finish).
    if (queue_.empty()) return;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    mu_.Unlock();
    task();
    task = nullptr;  // its captures die outside the lock, before the count drops
    mu_.Lock();
    --running_;
  }
}

}  // namespace paradnn::common
