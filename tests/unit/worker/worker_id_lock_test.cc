#include "worker/worker_id_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "tests/support/temp_file.h"

namespace paradnn::worker {
namespace {

WorkerIdLock MustTake(const std::string& dir, const std::string& base) {
  absl::StatusOr<WorkerIdLock> lock = WorkerIdLock::Take(dir, base);
  EXPECT_TRUE(lock.ok()) << lock.status();
  if (!lock.ok()) std::abort();
  return *std::move(lock);
}

// flock locks belong to an open file: two takes in one process conflict as
// two workers' would.
TEST(WorkerIdLockTest, TwoLiveHoldersGetDistinctIds) {
  testing::TempFolder folder("worker-ids");
  const std::string dir = folder.File("worker-ids");  // created on demand
  WorkerIdLock first = MustTake(dir, "host-cpu-0123abcd");
  WorkerIdLock second = MustTake(dir, "host-cpu-0123abcd");
  WorkerIdLock third = MustTake(dir, "host-cpu-0123abcd");
  EXPECT_EQ(first.id(), "host-cpu-0123abcd");
  EXPECT_EQ(second.id(), "host-cpu-0123abcd-2");
  EXPECT_EQ(third.id(), "host-cpu-0123abcd-3");
  // Another base is independent of these.
  EXPECT_EQ(MustTake(dir, "host-cuda:1-0123abcd").id(), "host-cuda:1-0123abcd");
}

// A restarted worker (the lock released as its process died) gets its old id
// back, and with it the leases the coordinator kept for that id.
TEST(WorkerIdLockTest, AReleasedIdIsTakenAgain) {
  testing::TempFolder folder("worker-ids");
  std::optional<WorkerIdLock> first = MustTake(folder.path(), "w");
  WorkerIdLock second = MustTake(folder.path(), "w");
  ASSERT_EQ(second.id(), "w-2");
  first.reset();
  WorkerIdLock again = MustTake(folder.path(), "w");
  EXPECT_EQ(again.id(), "w");
  // Moving a lock keeps it held.
  WorkerIdLock moved = std::move(second);
  EXPECT_EQ(moved.id(), "w-2");
  EXPECT_EQ(MustTake(folder.path(), "w").id(), "w-3") << "w and w-2 are both held";
}

TEST(WorkerIdLockTest, AnIdWithASlashStaysInTheLockFolder) {
  testing::TempFolder folder("worker-ids");
  EXPECT_EQ(MustTake(folder.path(), "a/b").id(), "a/b");
  EXPECT_EQ(::access(folder.File("a_b.lock").c_str(), F_OK), 0);
}

TEST(WorkerIdLockTest, AFolderThatCannotBeMadeIsNamed) {
  testing::TempFile file("worker-ids", "a file, not a folder");
  const std::string dir = file.path() + "/worker-ids";
  const absl::StatusOr<WorkerIdLock> lock = WorkerIdLock::Take(dir, "w");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(lock.status().message()).find(dir), std::string::npos) << lock.status();
}

}  // namespace
}  // namespace paradnn::worker
