// LeaseTable's transitions (server/lease_table.h), driven synchronously
// with explicit times: every row of its transition table, the peers that
// lie or get confused, and a random walk that checks its indexes agree.
#include "server/lease_table.h"

#include <gtest/gtest.h>

#include <random>

namespace paradnn::server {
namespace {

constexpr int64_t kTimeoutMs = 1000;
constexpr int64_t kStart = 1'000'000;

class LeaseTableTest : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(table_.CheckInvariants(), ""); }

  // Says hello as `worker` on `stream` at `now` and marks it ready.
  void Connect(const std::string& worker, uint64_t stream, int64_t now = kStart,
               const std::vector<int64_t>& open = {}) {
    ASSERT_FALSE(table_.Hello(worker, stream, "cpu", false, open, now).refused);
    ASSERT_TRUE(table_.MarkReady(worker, stream));
  }
  // Connects `worker` and leases it attempt `attempt` of job `attempt * 10`.
  void ConnectRunning(const std::string& worker, uint64_t stream, int64_t attempt) {
    Connect(worker, stream);
    ASSERT_TRUE(table_.BeginLease(worker));
    table_.EndLease(worker);
    ASSERT_TRUE(table_.RecordLease(worker, stream, attempt, attempt * 10,
                                   StoredLeaseDeadline(kStart, kTimeoutMs)));
  }
  AttemptState StateOf(int64_t attempt) {
    std::optional<LeaseTable::AttemptView> view = table_.Find(attempt);
    EXPECT_TRUE(view.has_value()) << "attempt " << attempt << " unknown";
    return view ? view->state : AttemptState::kRunning;
  }

  LeaseTable table_{kTimeoutMs};
};

TEST(AttemptStateNameTest, NamesEveryState) {
  EXPECT_STREQ(AttemptStateName(AttemptState::kRunning), "running");
  EXPECT_STREQ(AttemptStateName(AttemptState::kInherited), "inherited");
  EXPECT_STREQ(AttemptStateName(AttemptState::kStoring), "storing");
  EXPECT_STREQ(AttemptStateName(AttemptState::kReleasing), "releasing");
}

TEST_F(LeaseTableTest, AWorkerMayLeaseOnceReadyAndOneLeaseAtATime) {
  ASSERT_FALSE(table_.Hello("w", 1, "cpu", false, {}, kStart).refused);
  EXPECT_FALSE(table_.MayLease("w", 0)) << "hello not yet stored";
  EXPECT_FALSE(table_.MarkReady("w", 2)) << "another stream";
  EXPECT_TRUE(table_.MarkReady("w", 1));
  EXPECT_TRUE(table_.BeginLease("w"));
  EXPECT_FALSE(table_.BeginLease("w")) << "a lease is in flight";
  table_.EndLease("w");
  EXPECT_TRUE(table_.MayLease("w", 0));
  EXPECT_FALSE(table_.MayLease("nobody", 0));
  EXPECT_EQ(table_.Snapshot().at("w").state, v1::WORKER_IDLE);
}

TEST_F(LeaseTableTest, ALeaseRunsOnTheCurrentStreamOnly) {
  Connect("w", 1);
  EXPECT_FALSE(table_.RecordLease("w", 7, 100, 1000, kStart)) << "a stream that is gone";
  EXPECT_FALSE(table_.Find(100).has_value());
  ASSERT_TRUE(table_.RecordLease("w", 1, 100, 1000, kStart));
  std::optional<LeaseTable::AttemptView> view = table_.Find(100);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->worker_id, "w");
  EXPECT_EQ(view->job_id, 1000);
  EXPECT_EQ(view->state, AttemptState::kRunning);
  EXPECT_EQ(view->deadline_unix_ms, kStart + kTimeoutMs);
  EXPECT_FALSE(table_.MayLease("w", 0)) << "it holds an attempt";
  EXPECT_TRUE(table_.MayLease("w", 100)) << "as soon as that one's result is stored";
  EXPECT_EQ(table_.Snapshot().at("w").state, v1::WORKER_BUSY);
  EXPECT_EQ(table_.Snapshot().at("w").current_job_id, 1000);
}

TEST_F(LeaseTableTest, NoLeaseIsRecordedAfterAssigningStopped) {
  Connect("w", 1);
  table_.StopAssigning();
  EXPECT_FALSE(table_.MayLease("w", 0));
  EXPECT_FALSE(table_.RecordLease("w", 1, 100, 1000, kStart));
  EXPECT_TRUE(table_.HeldBy("w").empty());
}

TEST_F(LeaseTableTest, AStoredResultIsForgottenAndItsNextLeaseRidesAlong) {
  ConnectRunning("w", 1, 5);
  EXPECT_TRUE(table_.ResultArrived("w", 5)) << "its only attempt: the next lease rides along";
  EXPECT_EQ(StateOf(5), AttemptState::kStoring);
  EXPECT_FALSE(table_.MayLease("w", 0)) << "a result in flight and the lease slot taken";
  table_.Settle("w", 5, /*acknowledged=*/true);
  EXPECT_FALSE(table_.Find(5).has_value());
  EXPECT_TRUE(table_.HeldBy("w").empty());
  table_.EndLease("w");
  EXPECT_TRUE(table_.MayLease("w", 0));
}

TEST_F(LeaseTableTest, AnUnacknowledgedStoreReturnsTheAttemptToRunningAndItCanExpire) {
  ConnectRunning("w", 1, 5);
  EXPECT_TRUE(table_.ResultArrived("w", 5));
  EXPECT_TRUE(table_.Expire(kStart + 10 * kTimeoutMs).released.empty())
      << "an attempt being stored never expires";
  table_.Settle("w", 5, /*acknowledged=*/false);
  EXPECT_EQ(StateOf(5), AttemptState::kRunning);
  EXPECT_EQ(table_.Expire(kStart + 10 * kTimeoutMs).released, std::vector<int64_t>{5});
  EXPECT_EQ(StateOf(5), AttemptState::kReleasing);
}

TEST_F(LeaseTableTest, NoLeaseRidesAlongWhileAnotherAttemptIsHeld) {
  Connect("w", 1, kStart, {3});
  ASSERT_TRUE(table_.RecordLease("w", 1, 5, 50, kStart));
  EXPECT_FALSE(table_.ResultArrived("w", 5));
  EXPECT_EQ(StateOf(3), AttemptState::kInherited);
}

TEST_F(LeaseTableTest, ASilentWorkersAttemptsExpireOnceAndItGetsNoJobUntilItAnswers) {
  ConnectRunning("quiet", 1, 5);
  ConnectRunning("talking", 2, 6);
  EXPECT_TRUE(table_.Expire(kStart + kTimeoutMs - 1).released.empty());
  table_.Heard("talking", kStart + kTimeoutMs - 1);
  LeaseTable::Expiry expiry = table_.Expire(kStart + kTimeoutMs);
  EXPECT_EQ(expiry.released, std::vector<int64_t>{5});
  EXPECT_EQ(expiry.newly_silent, std::vector<std::string>{"quiet"});
  EXPECT_EQ(StateOf(6), AttemptState::kRunning);
  EXPECT_EQ(table_.Snapshot().at("quiet").state, v1::WORKER_SILENT);
  LeaseTable::Expiry again = table_.Expire(kStart + 2 * kTimeoutMs - 2);
  EXPECT_TRUE(again.released.empty()) << "released once";
  EXPECT_TRUE(again.newly_silent.empty()) << "said once";
  EXPECT_FALSE(table_.MayLease("quiet", 0));
  EXPECT_TRUE(table_.Heard("quiet", kStart + 3 * kTimeoutMs)) << "answers again";
  EXPECT_FALSE(table_.Heard("quiet", kStart + 3 * kTimeoutMs));
  EXPECT_TRUE(table_.MayLease("quiet", 0));
}

TEST_F(LeaseTableTest, ADisconnectedWorkerKeepsItsLeasesUntilTheirDeadline) {
  ConnectRunning("w", 1, 5);
  EXPECT_EQ(table_.StreamClosed("w"), 1u);
  EXPECT_FALSE(table_.IsCurrentStream("w", 1));
  EXPECT_EQ(table_.Snapshot().at("w").state, v1::WORKER_DISCONNECTED);
  EXPECT_EQ(StateOf(5), AttemptState::kRunning);
  EXPECT_TRUE(table_.Expire(kStart + kTimeoutMs - 1).released.empty());
  LeaseTable::Expiry expiry = table_.Expire(kStart + kTimeoutMs);
  EXPECT_EQ(expiry.released, std::vector<int64_t>{5});
  EXPECT_TRUE(expiry.newly_silent.empty()) << "not connected, so not 'silent'";
}

TEST_F(LeaseTableTest, TheFirstHeartbeatKeepsTheRunningInheritedAttemptAndReleasesTheLost) {
  Connect("w", 1, kStart, {5, 6, 7});
  for (int64_t attempt : {5, 6, 7}) EXPECT_EQ(StateOf(attempt), AttemptState::kInherited);
  EXPECT_EQ(table_.Snapshot().at("w").current_job_id, 0) << "inherited jobs are not known";
  table_.HoldForStore("w", 7);  // its result arrived before the heartbeat
  LeaseTable::HeartbeatActions first = table_.Heartbeat("w", 5, false, kStart + 10);
  EXPECT_EQ(first.released, std::vector<int64_t>{6});
  EXPECT_EQ(StateOf(5), AttemptState::kRunning);
  EXPECT_EQ(StateOf(6), AttemptState::kReleasing);
  EXPECT_EQ(StateOf(7), AttemptState::kStoring);
  table_.Settle("w", 7, /*acknowledged=*/false);
  EXPECT_EQ(StateOf(7), AttemptState::kRunning) << "past the first heartbeat: not inherited";
  EXPECT_TRUE(table_.Heartbeat("w", 0, false, kStart + 20).released.empty()) << "only the first";
}

TEST_F(LeaseTableTest, HeartbeatsWriteLivenessInSteps) {
  ConnectRunning("w", 1, 5);  // stored deadline kStart + 2 timeouts
  LeaseTable::HeartbeatActions first = table_.Heartbeat("w", 5, false, kStart);
  EXPECT_TRUE(first.write_last_seen);
  EXPECT_EQ(first.extend_stored_deadlines, 0) << "the stored deadline is a timeout away";
  LeaseTable::HeartbeatActions soon = table_.Heartbeat("w", 5, false, kStart + 100);
  EXPECT_FALSE(soon.write_last_seen);
  LeaseTable::HeartbeatActions later = table_.Heartbeat("w", 5, false, kStart + kTimeoutMs + 1);
  EXPECT_EQ(later.extend_stored_deadlines,
            StoredLeaseDeadline(kStart + kTimeoutMs + 1, kTimeoutMs));
  EXPECT_EQ(table_.Heartbeat("w", 5, false, kStart + kTimeoutMs + 2).extend_stored_deadlines, 0);
  EXPECT_TRUE(table_.Heartbeat("w", 5, false, kStart + 5000).write_last_seen);
}

TEST_F(LeaseTableTest, ADrainingWorkerFinishesItsJobButGetsNoOther) {
  ConnectRunning("w", 1, 5);
  EXPECT_TRUE(table_.Heartbeat("w", 5, true, kStart).began_draining);
  EXPECT_FALSE(table_.Heartbeat("w", 5, true, kStart + 1).began_draining);
  EXPECT_EQ(table_.Snapshot().at("w").state, v1::WORKER_BUSY);
  EXPECT_FALSE(table_.ResultArrived("w", 5));
  table_.Settle("w", 5, true);
  EXPECT_FALSE(table_.MayLease("w", 0));
  EXPECT_EQ(table_.Snapshot().at("w").state, v1::WORKER_DRAINING);
}

TEST_F(LeaseTableTest, ASecondLiveStreamIsRefusedUntilTheFirstWasQuietForATimeout) {
  ConnectRunning("w", 1, 5);
  table_.Heartbeat("w", 5, true, kStart);
  LeaseTable::HelloVerdict refused = table_.Hello("w", 2, "cpu", true, {5}, kStart + 10);
  EXPECT_TRUE(refused.refused);
  EXPECT_EQ(refused.other_quiet_ms, 10);
  EXPECT_TRUE(table_.IsCurrentStream("w", 1)) << "the first stream keeps the id";
  EXPECT_EQ(StateOf(5), AttemptState::kRunning);
  LeaseTable::HelloVerdict taken = table_.Hello("w", 2, "cpu", true, {5}, kStart + kTimeoutMs);
  EXPECT_FALSE(taken.refused);
  EXPECT_TRUE(taken.replaces_stream);
  EXPECT_TRUE(table_.IsCurrentStream("w", 2));
  EXPECT_EQ(StateOf(5), AttemptState::kInherited);
  EXPECT_TRUE(table_.MarkReady("w", 2));
  EXPECT_EQ(table_.Snapshot().at("w").state, v1::WORKER_BUSY) << "draining cleared by the hello";
}

TEST_F(LeaseTableTest, AResultForAnotherWorkersAttemptLeavesItWithItsHolder) {
  ConnectRunning("holder", 1, 5);
  Connect("forger", 2);
  table_.ResultArrived("forger", 5);
  EXPECT_EQ(StateOf(5), AttemptState::kRunning) << "the holder's, not being stored";
  EXPECT_FALSE(table_.MayLease("forger", 0)) << "its own result is in flight";
  table_.Settle("forger", 5, /*acknowledged=*/true);
  std::optional<LeaseTable::AttemptView> view = table_.Find(5);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->worker_id, "holder");
  table_.EndLease("forger");
  EXPECT_TRUE(table_.MayLease("forger", 0));
}

TEST_F(LeaseTableTest, AHeartbeatNamingAnotherWorkersAttemptChangesNothing) {
  ConnectRunning("holder", 1, 5);
  Connect("other", 2);
  LeaseTable::HeartbeatActions actions = table_.Heartbeat("other", 5, false, kStart);
  EXPECT_TRUE(actions.released.empty());
  EXPECT_EQ(table_.Find(5)->worker_id, "holder");
  EXPECT_TRUE(table_.HeldBy("other").empty());
}

TEST_F(LeaseTableTest, AReleaseHappensOnceAndALateResultDoesNotBringItBack) {
  ConnectRunning("w", 1, 5);
  EXPECT_TRUE(table_.BeginRelease(5));
  EXPECT_FALSE(table_.BeginRelease(5)) << "already releasing";
  EXPECT_TRUE(table_.HeldBy("w").empty());
  table_.ResultArrived("w", 5);
  table_.Settle("w", 5, /*acknowledged=*/true);
  EXPECT_EQ(StateOf(5), AttemptState::kReleasing);
  Connect("w", 2, kStart + 1, {5});  // the database still lists it for w
  EXPECT_EQ(StateOf(5), AttemptState::kReleasing) << "not inherited while it is being released";
  table_.EndRelease(5);
  EXPECT_FALSE(table_.Find(5).has_value());
}

TEST_F(LeaseTableTest, OnlyAttemptsNoWorkerHoldsAreReleasedByTheirStoredDeadline) {
  ConnectRunning("w", 1, 5);
  EXPECT_FALSE(table_.ReleaseIfUnheld(5)) << "held here: its worker's silence decides";
  EXPECT_TRUE(table_.ReleaseIfUnheld(99)) << "an earlier process's lease";
  EXPECT_FALSE(table_.ReleaseIfUnheld(99)) << "once";
  EXPECT_EQ(table_.Find(99)->worker_id, "");
}

TEST_F(LeaseTableTest, AReconnectWhileAResultIsStoredKeepsItStoringThenInherited) {
  ConnectRunning("w", 1, 5);
  table_.ResultArrived("w", 5);
  table_.StreamClosed("w");
  Connect("w", 2, kStart + 1, {5});
  EXPECT_EQ(StateOf(5), AttemptState::kStoring);
  table_.Settle("w", 5, /*acknowledged=*/false);
  EXPECT_EQ(StateOf(5), AttemptState::kInherited);
  EXPECT_EQ(table_.Heartbeat("w", 0, false, kStart + 2).released, std::vector<int64_t>{5});
}

// Random operations from every entry point: whatever the order, the
// table's attempt map and each worker's sets agree.
TEST_F(LeaseTableTest, ARandomWalkKeepsTheIndexesInAgreement) {
  std::mt19937 random(38);  // seeds 1-200 pass as well
  const std::vector<std::string> workers = {"a", "b", "c"};
  int64_t now = kStart;
  int64_t next_attempt = 1;
  uint64_t next_stream = 1;
  for (int step = 0; step < 5000; ++step) {
    const std::string& w = workers[random() % workers.size()];
    const int64_t attempt = 1 + static_cast<int64_t>(random() % (next_attempt + 1));
    now += random() % 400;
    switch (random() % 12) {
      case 0: {
        std::vector<int64_t> open = table_.HeldBy(w);
        if (random() % 2) open.push_back(attempt);
        table_.Hello(w, next_stream++, "cpu", random() % 2, open, now);
        break;
      }
      case 1:
        table_.MarkReady(w, next_stream - 1);
        break;
      case 2:
        table_.Heard(w, now);
        break;
      case 3:
        table_.Heartbeat(w, attempt, random() % 8 == 0, now);
        break;
      case 4:
        table_.StreamClosed(w);
        break;
      case 5:
        if (table_.BeginLease(w)) {
          table_.EndLease(w);
          table_.RecordLease(w, next_stream - 1, next_attempt++, 10, now);
        }
        break;
      case 6:
        table_.ResultArrived(w, attempt);
        break;
      case 7:
        table_.Settle(w, attempt, random() % 3 != 0);
        table_.EndLease(w);
        break;
      case 8:
        table_.BeginRelease(attempt);
        break;
      case 9:
        table_.EndRelease(attempt);
        break;
      case 10:
        table_.Expire(now);
        break;
      case 11:
        table_.ReleaseIfUnheld(attempt);
        break;
    }
    ASSERT_EQ(table_.CheckInvariants(), "") << "after step " << step;
  }
}

}  // namespace
}  // namespace paradnn::server
