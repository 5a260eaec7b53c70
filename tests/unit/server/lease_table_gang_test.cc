// LeaseTable's gangs: the attempts of one data-parallel job leased to
// several workers, remembered together until each leaves the table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/lease_table.h"

namespace paradnn::server {
namespace {

constexpr int64_t kGangTimeoutMs = 1000;
constexpr int64_t kGangStart = 1'000'000;

class LeaseTableGangTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Three workers running attempts 11, 12, 13 of job 5, ranks in that order.
    for (int rank = 0; rank < 3; ++rank) {
      const std::string worker = "w" + std::to_string(rank);
      const uint64_t stream = static_cast<uint64_t>(rank + 1);
      ASSERT_FALSE(table_.Hello(worker, stream, "cpu", false, {}, kGangStart).refused);
      ASSERT_TRUE(table_.MarkReady(worker, stream));
      ASSERT_TRUE(table_.IsInService(worker));
      ASSERT_TRUE(
          table_.RecordLease(worker, stream, 11 + rank, 5, kGangStart + 2 * kGangTimeoutMs));
    }
    table_.RecordGang({11, 12, 13});
  }
  void TearDown() override { EXPECT_EQ(table_.CheckInvariants(), ""); }

  std::vector<int64_t> SiblingsOf(int64_t attempt) {
    std::vector<int64_t> attempts;
    for (const LeaseTable::GangMember& m : table_.GangSiblings(attempt)) {
      attempts.push_back(m.attempt);
    }
    return attempts;
  }

  LeaseTable table_{kGangTimeoutMs};
};

TEST_F(LeaseTableGangTest, EveryRankKnowsItsRankAndItsSiblings) {
  EXPECT_EQ(table_.GangRank(11), 0);
  EXPECT_EQ(table_.GangRank(12), 1);
  EXPECT_EQ(table_.GangRank(13), 2);
  EXPECT_EQ(table_.GangRank(99), -1);
  EXPECT_EQ(SiblingsOf(12), (std::vector<int64_t>{11, 13}));
  const std::vector<LeaseTable::GangMember> siblings = table_.GangSiblings(11);
  ASSERT_EQ(siblings.size(), 2u);
  EXPECT_EQ(siblings[0].worker_id, "w1");
  EXPECT_EQ(siblings[0].rank, 1);
  EXPECT_EQ(siblings[1].job_id, 5);
  EXPECT_TRUE(table_.GangSiblings(99).empty());
}

TEST_F(LeaseTableGangTest, ARankBeingReleasedStaysInTheGangUntilTheDatabaseTookItBack) {
  ASSERT_TRUE(table_.BeginRelease(13));
  EXPECT_EQ(SiblingsOf(11), (std::vector<int64_t>{12, 13}));
  EXPECT_EQ(table_.GangSiblings(11)[1].worker_id, "") << "a releasing attempt has no holder";
  table_.EndRelease(13);
  EXPECT_EQ(SiblingsOf(11), (std::vector<int64_t>{12}));
  EXPECT_EQ(table_.GangRank(13), -1);
}

TEST_F(LeaseTableGangTest, AStoredResultForgetsTheOtherRanksButThoseReleasingOrStoring) {
  table_.HoldForStore("w0", 11);  // rank 0's result is being stored
  table_.HoldForStore("w2", 13);  // and rank 2's, at the same time
  std::vector<std::string> freed = table_.ForgetGangSiblings(11);
  EXPECT_EQ(freed, (std::vector<std::string>{"w1"}));
  EXPECT_FALSE(table_.Find(12).has_value());
  EXPECT_TRUE(table_.Find(13).has_value());
  EXPECT_TRUE(table_.MayLease("w1", 0));
  table_.Settle("w0", 11, /*acknowledged=*/true);
  table_.Settle("w2", 13, /*acknowledged=*/true);
  EXPECT_TRUE(table_.GangSiblings(13).empty());
}

TEST_F(LeaseTableGangTest, ARankWhoseStreamWasGoneIsNotRecordedInTheGang) {
  ASSERT_FALSE(table_.Hello("late", 9, "cpu", false, {}, kGangStart).refused);
  // Attempt 22's worker had no stream when its lease was recorded.
  EXPECT_FALSE(table_.RecordLease("gone", 4, 22, 6, kGangStart));
  ASSERT_TRUE(table_.MarkReady("late", 9));
  ASSERT_TRUE(table_.RecordLease("late", 9, 21, 6, kGangStart));
  table_.RecordGang({21, 22});
  EXPECT_EQ(table_.GangRank(21), 0);
  EXPECT_EQ(table_.GangRank(22), -1);
  EXPECT_TRUE(table_.GangSiblings(21).empty());
}

TEST_F(LeaseTableGangTest, AnExpiredRankGoesToReleasingAndKeepsItsPlaceForTheScheduler) {
  // Only w0 and w1 are heard; w2 falls silent.
  for (const char* worker : {"w0", "w1"}) table_.Heard(worker, kGangStart + kGangTimeoutMs + 1);
  LeaseTable::Expiry expiry = table_.Expire(kGangStart + kGangTimeoutMs + 1);
  EXPECT_EQ(expiry.released, (std::vector<int64_t>{13}));
  // The scheduler releases the siblings with it.
  for (const LeaseTable::GangMember& m : table_.GangSiblings(13)) {
    EXPECT_TRUE(table_.BeginRelease(m.attempt));
  }
  for (int64_t attempt : {11, 12, 13}) table_.EndRelease(attempt);
  EXPECT_TRUE(table_.MayLease("w0", 0));
  EXPECT_TRUE(table_.MayLease("w1", 0));
  EXPECT_FALSE(table_.IsInService("w2")) << "silent";
}

}  // namespace
}  // namespace paradnn::server
