#include "common/work_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace paradnn::common {
namespace {

// A gate the test opens: tasks block on it so the pool's threads stay busy.
class Gate {
 public:
  void Wait() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    ++waiting_;
    cv_.SignalAll();
    while (!open_) cv_.Wait(&mu_);
  }
  void WaitForWaiters(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    while (waiting_ < n) cv_.Wait(&mu_);
  }
  void Open() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    open_ = true;
    cv_.SignalAll();
  }

 private:
  absl::Mutex mu_;
  absl::CondVar cv_;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(WorkPoolTest, RunsEveryTaskOffTheCallersThread) {
  absl::Mutex mu;  // the pool's threads insert; read once they have joined
  std::set<std::thread::id> ran_on;
  std::atomic<int> ran{0};
  {
    WorkPool pool(2, "test-pool");
    for (int i = 0; i < 100; ++i) {
      pool.Run([&] {
        absl::MutexLock lock(&mu);
        ran_on.insert(std::this_thread::get_id());
        ++ran;
      });
    }
  }  // the destructor drains the queue
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(ran_on.count(std::this_thread::get_id()), 0u);
  EXPECT_LE(ran_on.size(), 2u);
}

TEST(WorkPoolTest, TryRunRefusesWhenEveryThreadIsBusyAndTakesWorkAgainAfter) {
  WorkPool pool(2, "test-pool");
  Gate gate;
  EXPECT_TRUE(pool.TryRun([&] { gate.Wait(); }));
  EXPECT_TRUE(pool.TryRun([&] { gate.Wait(); }));
  gate.WaitForWaiters(2);
  EXPECT_EQ(pool.pending(), 2);
  EXPECT_FALSE(pool.TryRun([] { FAIL() << "a refused task ran"; }));
  // Run still queues behind the busy threads.
  std::atomic<bool> queued_ran{false};
  pool.Run([&] { queued_ran = true; });
  EXPECT_EQ(pool.pending(), 3);
  gate.Open();
  while (pool.pending() > 0) std::this_thread::yield();
  EXPECT_TRUE(queued_ran.load());
  std::atomic<bool> later_ran{false};
  EXPECT_TRUE(pool.TryRun([&] { later_ran = true; }));
  while (pool.pending() > 0) std::this_thread::yield();
  EXPECT_TRUE(later_ran.load());
}

TEST(WorkPoolTest, DestructorRunsTasksQueuedBehindABusyThread) {
  std::atomic<int> ran{0};
  Gate gate;
  std::thread opener;
  {
    WorkPool pool(1, "test-pool");
    pool.Run([&] {
      gate.Wait();
      ++ran;
    });
    for (int i = 0; i < 5; ++i) pool.Run([&] { ++ran; });
    gate.WaitForWaiters(1);
    opener = std::thread([&] { gate.Open(); });
  }
  opener.join();
  EXPECT_EQ(ran.load(), 6);
}

TEST(WorkPoolTest, ATaskMayQueueMoreWorkOnItsOwnPool) {
  std::atomic<int> ran{0};
  {
    WorkPool pool(1, "test-pool");
    pool.Run([&] {
      ++ran;
      pool.Run([&] { ++ran; });
    });
  }
  EXPECT_EQ(ran.load(), 2);
}

}  // namespace
}  // namespace paradnn::common
