#include "client/interrupt.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace paradnn::client {
namespace {

// Waits (without a deadline of its own; ctest's timeout bounds it) until the
// watcher has run a handler.
class Flag {
 public:
  void Set(int value) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    value_ = value;
    cv_.SignalAll();
  }
  int Wait() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    while (value_ == 0) cv_.Wait(&mu_);
    return value_;
  }

 private:
  absl::Mutex mu_;
  absl::CondVar cv_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};

// SIGINT reaches the innermost handler through the watcher's signalfd, and
// the signal is remembered.
TEST(InterruptWatcherTest, SignalRunsTheInnermostHandler) {
  InterruptWatcher watcher;
  Flag outer, inner;
  ScopedInterruptHandler a(&watcher, [&outer] { outer.Set(1); });
  {
    ScopedInterruptHandler b(&watcher, [&inner] { inner.Set(2); });
    ASSERT_EQ(kill(getpid(), SIGINT), 0);
    EXPECT_EQ(inner.Wait(), 2);
  }
  EXPECT_EQ(watcher.signal_number(), SIGINT);
  EXPECT_TRUE(watcher.interrupted());
  // A handler installed after the signal runs at once, on this thread.
  Flag late;
  ScopedInterruptHandler c(&watcher, [&late] { late.Set(3); });
  EXPECT_EQ(late.Wait(), 3);
}

// With no signal the watcher stops when destroyed (its thread joins), and a
// second watcher works after it.
TEST(InterruptWatcherTest, StopsWithoutASignalAndCanBeMadeAgain) {
  { InterruptWatcher first; }
  InterruptWatcher second;
  Flag flag;
  ScopedInterruptHandler h(&second, [&flag] { flag.Set(SIGTERM); });
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  EXPECT_EQ(flag.Wait(), SIGTERM);
  EXPECT_EQ(second.signal_number(), SIGTERM);
}

}  // namespace
}  // namespace paradnn::client
