#include "common/work_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace paradnn::common {
namespace {

// A gate the test opens: tasks block on it so the pool's threads stay busy.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  void WaitForWaiters(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this, n] { return waiting_ >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST(WorkPoolTest, RunsEveryTaskOffTheCallersThread) {
  std::mutex mu;
  std::set<std::thread::id> ran_on;
  std::atomic<int> ran{0};
  {
    WorkPool pool(2, "test-pool");
    for (int i = 0; i < 100; ++i) {
      pool.Run([&] {
        std::lock_guard<std::mutex> lock(mu);
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
