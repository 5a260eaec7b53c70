// The shipped binaries' lock-order checks (common/mutex_checks.h).
#include "common/mutex_checks.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace paradnn::common {
namespace {

// Takes two locks in one order, then in the other: a cycle in the lock-order
// graph, though nothing deadlocks (one thread).
void TakeLocksInBothOrders() {
  absl::Mutex first;
  absl::Mutex second;
  {
    absl::MutexLock a(&first);
    absl::MutexLock b(&second);
  }
  {
    absl::MutexLock b(&second);
    absl::MutexLock a(&first);
  }
}

TEST(MutexChecksTest, ABinaryWithReleaseChecksSurvivesAnInvertedLockOrder) {
  EXPECT_EXIT(
      {
        UseReleaseMutexChecks();
        TakeLocksInBothOrders();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace paradnn::common
