#include "worker/runner/gloo_device_nice.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "common/cpu_list.h"

namespace paradnn::runner {
namespace {

// Sets (or unsets, for nullptr) the knob for one test.
class KnobTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kGlooDeviceNiceEnv); }
  static void Set(const char* value) { setenv(kGlooDeviceNiceEnv, value, 1); }
};

TEST_F(KnobTest, OnlyNiceValuesZeroToNineteenCount) {
  unsetenv(kGlooDeviceNiceEnv);
  EXPECT_FALSE(GlooDeviceNice().has_value());
  Set("19");
  EXPECT_EQ(GlooDeviceNice(), 19);
  Set("0");
  EXPECT_EQ(GlooDeviceNice(), 0);
  for (const char* bad : {"", "-5", "20", "high", "5x"}) {
    Set(bad);
    EXPECT_FALSE(GlooDeviceNice().has_value()) << "'" << bad << "'";
  }
}

TEST_F(KnobTest, OnlyThreadsStartedAfterTheSnapshotAreReniced) {
  const std::vector<int> before = common::ThreadIds();
  ASSERT_TRUE(std::binary_search(before.begin(), before.end(), static_cast<int>(getpid())));
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::atomic<int> tid{0};
  std::thread later([&] {
    tid = static_cast<int>(syscall(SYS_gettid));
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
  });
  while (tid == 0) std::this_thread::yield();
  const id_t self = static_cast<id_t>(syscall(SYS_gettid));
  const int self_nice = getpriority(PRIO_PROCESS, self);
  const int started_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid.load()));

  unsetenv(kGlooDeviceNiceEnv);
  EXPECT_EQ(ReniceNewThreads(before), "");  // the knob unset: nothing done
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(tid.load())), started_nice);

  Set("19");
  const std::string note = ReniceNewThreads(before);
  EXPECT_EQ(note, "PARADNN_GLOO_DEVICE_NICE=19: Gloo device thread(s) " +
                      std::to_string(tid.load()) + " at nice 19");
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(tid.load())), 19);
  EXPECT_EQ(getpriority(PRIO_PROCESS, self), self_nice);  // a thread of `before`
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  later.join();
}

}  // namespace
}  // namespace paradnn::runner
