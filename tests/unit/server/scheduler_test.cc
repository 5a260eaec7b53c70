// The scheduler with a real database and fake worker streams: leases,
// results, heartbeats, lost and reconnecting workers, cancels, hellos.
#include "server/scheduler.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "db/job_store.h"
#include "db/model_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "tests/unit/db/test_db.h"
#include "tests/unit/server/scheduler_test_support.h"

namespace paradnn::server {
namespace {

TEST_F(SchedulerTest, HelloGetsAckThenOneJobAtATimeAndResultsAreAcked) {
  const int64_t sweep = CreateSweep(2);
  FakeStream stream(1);
  ASSERT_TRUE(scheduler_->OnHello(stream.session(), Hello("w1")).ok());
  ASSERT_EQ(stream.WaitFor(v1::CoordinatorMessage::kHelloAck, 1).size(), 1u);
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  // Only one job at a time, even though two are pending.
  ASSERT_NO_FATAL_FAILURE(WaitQuiet());
  EXPECT_EQ(stream.Sent(v1::CoordinatorMessage::kAssignment).size(), 1u);
  EXPECT_EQ(scheduler_->Snapshot()["w1"].state, v1::WORKER_BUSY);

  const auto& first = assignments[0].assignment();
  scheduler_->OnWorkerMessage(stream.session(), "w1", Result(first.job_id(), first.attempt_id()));
  auto acks = stream.WaitFor(v1::CoordinatorMessage::kAck, 1);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].ack().attempt_id(), first.attempt_id());
  assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 2);
  ASSERT_EQ(assignments.size(), 2u);
  EXPECT_NE(assignments[1].assignment().job_id(), first.job_id());
  const auto& second = assignments[1].assignment();
  scheduler_->OnWorkerMessage(stream.session(), "w1", Result(second.job_id(), second.attempt_id()));
  ASSERT_TRUE(Eventually([&] { return Status(sweep).state() == v1::SWEEP_DONE; }));
  EXPECT_EQ(Status(sweep).ok_results(), 2);
}

TEST_F(SchedulerTest, AResultAndTheWorkersNextLeaseShareOneCommit) {
  CreateSweep(2);
  FakeStream stream(1);
  v1::JobAssignment first;
  HelloAndFirstAssignment(stream, "w1", &first);
  const int64_t transactions = database_->writer_stats().transactions;
  scheduler_->OnWorkerMessage(stream.session(), "w1", Result(first.job_id(), first.attempt_id()));
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 2);
  ASSERT_EQ(assignments.size(), 2u);
  EXPECT_NE(assignments[1].assignment().job_id(), first.job_id());
  EXPECT_EQ(database_->writer_stats().transactions, transactions + 1);
  // The ack went out before the next assignment.
  EXPECT_EQ(stream.Sent(v1::CoordinatorMessage::kAck).size(), 1u);
}

TEST_F(SchedulerTest, DuplicateResultIsAckedButStoredOnce) {
  CreateSweep(1);
  FakeStream stream(1);
  ASSERT_TRUE(scheduler_->OnHello(stream.session(), Hello("w1")).ok());
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  const auto& a = assignments[0].assignment();
  scheduler_->OnWorkerMessage(stream.session(), "w1", Result(a.job_id(), a.attempt_id()));
  scheduler_->OnWorkerMessage(stream.session(), "w1", Result(a.job_id(), a.attempt_id()));
  EXPECT_EQ(stream.WaitFor(v1::CoordinatorMessage::kAck, 2).size(), 2u);
  EXPECT_EQ(*db::ResultStore(database_.get()).CountForJob(a.job_id()), 1);
}

TEST_F(SchedulerTest, OnlyWorkersOfTheRightDeviceGetJobs) {
  CreateSweep(1, "cuda");
  FakeStream stream(1);
  ASSERT_TRUE(scheduler_->OnHello(stream.session(), Hello("cpu-worker")).ok());
  ASSERT_EQ(stream.WaitFor(v1::CoordinatorMessage::kHelloAck, 1).size(), 1u);
  scheduler_->OfferPendingJobs();
  ASSERT_NO_FATAL_FAILURE(WaitQuiet());
  EXPECT_TRUE(stream.Sent(v1::CoordinatorMessage::kAssignment).empty());
}

TEST_F(SchedulerTest, LostWorkerKeepsLeaseUntilDeadlineThenJobMovesOn) {
  const int64_t sweep = CreateSweep(1);
  FakeStream first(1);
  ASSERT_TRUE(scheduler_->OnHello(first.session(), Hello("w1")).ok());
  ASSERT_EQ(first.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u);
  first.session()->MarkClosed();
  scheduler_->OnStreamClosed(first.session(), "w1");

  FakeStream second(2);
  ASSERT_TRUE(scheduler_->OnHello(second.session(), Hello("w2")).ok());
  ASSERT_EQ(second.WaitFor(v1::CoordinatorMessage::kHelloAck, 1).size(), 1u);
  // Before the deadline, w1 still holds the job.
  clock_.Advance(500);
  scheduler_->ExpireLeases();
  ASSERT_NO_FATAL_FAILURE(WaitQuiet());
  EXPECT_TRUE(second.Sent(v1::CoordinatorMessage::kAssignment).empty());
  EXPECT_EQ(Status(sweep).leased_jobs(), 1);
  // Past it, the job is re-queued and offered to w2 (no sleeping for the
  // lease: the clock is fake).
  clock_.Advance(1000);
  scheduler_->ExpireLeases();
  auto assignments = second.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  EXPECT_EQ(assignments[0].assignment().job_id(),
            first.Sent(v1::CoordinatorMessage::kAssignment)[0].assignment().job_id());
}

// Heartbeats keep a lease alive in memory; the database's copy of the
// deadline, kept for a restart, moves about once a timeout, not at every
// heartbeat, and never falls within a timeout of the last heartbeat. The
// lease still ends exactly one timeout after the worker fell silent.
TEST_F(SchedulerTest, HeartbeatsKeepTheLeaseAndTheStoredDeadlineMovesRarely) {
  const int64_t sweep = CreateSweep(2);
  FakeStream stream(1);
  v1::JobAssignment job;
  ASSERT_NO_FATAL_FAILURE(HelloAndFirstAssignment(stream, "w1", &job));
  auto stored_deadline = [&] {
    return *db::testing::ScalarInt(*database_,
                                   ("SELECT lease_deadline_unix_ms FROM attempts WHERE id = " +
                                    std::to_string(job.attempt_id()))
                                       .c_str());
  };
  std::set<int64_t> deadlines = {stored_deadline()};
  const int64_t writes_before = database_->writer_stats().writes;
  for (int beat = 0; beat < 50; ++beat) {  // 5 s of heartbeats every 100 ms
    clock_.Advance(100);
    scheduler_->OnWorkerMessage(stream.session(), "w1", Heartbeat(job.attempt_id()));
    scheduler_->ExpireLeases();
    ASSERT_TRUE(Eventually([&] { return stored_deadline() >= clock_.NowUnixMs() + 1000; }))
        << "stored deadline " << stored_deadline() << " within a timeout of " << clock_.NowUnixMs();
    deadlines.insert(stored_deadline());
  }
  EXPECT_EQ(Status(sweep).leased_jobs(), 1);
  // One move per timeout (1 s) of heartbeats, not 50; the last-seen time
  // is written every 5 s.
  EXPECT_LE(deadlines.size(), 7u);
  EXPECT_LE(database_->writer_stats().writes - writes_before, 10);

  // Silent from now: still held just before one timeout, released at it,
  // although the stored deadline is later.
  const int64_t last_heard = clock_.NowUnixMs();
  clock_.Advance(999);
  scheduler_->ExpireLeases();
  ASSERT_NO_FATAL_FAILURE(WaitQuiet());
  EXPECT_EQ(Status(sweep).leased_jobs(), 1);
  clock_.Advance(1);
  ASSERT_LT(clock_.NowUnixMs(), stored_deadline());
  scheduler_->ExpireLeases();
  ASSERT_TRUE(Eventually([&] { return Status(sweep).pending_jobs() == 2; }));
  EXPECT_EQ(clock_.NowUnixMs() - last_heard, 1000);
}

// A restarted coordinator gives the leases its predecessor stored (up to
// two timeouts ahead) exactly one timeout from its start.
TEST_F(SchedulerTest, ARestartCapsTheStoredDeadlinesAtOneTimeout) {
  CreateSweep(1);
  FakeStream stream(1);
  v1::JobAssignment job;
  ASSERT_NO_FATAL_FAILURE(HelloAndFirstAssignment(stream, "w1", &job));
  const std::string deadline_sql =
      "SELECT lease_deadline_unix_ms FROM attempts WHERE id = " + std::to_string(job.attempt_id());
  ASSERT_EQ(*db::testing::ScalarInt(*database_, deadline_sql.c_str()), clock_.NowUnixMs() + 2000);
  absl::StatusOr<int64_t> moved =
      db::JobStore(database_.get()).CapLeaseDeadlinesSync(clock_.NowUnixMs() + 1000);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, 1);
  EXPECT_EQ(*db::testing::ScalarInt(*database_, deadline_sql.c_str()), clock_.NowUnixMs() + 1000);
  // An earlier deadline stays as it is.
  EXPECT_EQ(*db::JobStore(database_.get()).CapLeaseDeadlinesSync(clock_.NowUnixMs() + 5000), 0);
}

// A worker whose stream stays open but who stops answering (a stopped host,
// a cut network) loses its lease; the job must go to a worker that answers,
// not back to the silent one, until the silent one speaks again.
TEST_F(SchedulerTest, ConnectedButSilentWorkerGetsNoJobUntilItAnswers) {
  const int64_t sweep = CreateSweep(2);
  FakeStream silent(1);
  v1::JobAssignment first;
  ASSERT_NO_FATAL_FAILURE(HelloAndFirstAssignment(silent, "w1", &first));
  clock_.Advance(1500);
  scheduler_->ExpireLeases();
  ASSERT_TRUE(Eventually([&] { return Status(sweep).pending_jobs() == 2; }));
  scheduler_->OfferPendingJobs();
  ASSERT_NO_FATAL_FAILURE(WaitQuiet());
  EXPECT_EQ(silent.Sent(v1::CoordinatorMessage::kAssignment).size(), 1u)
      << "a silent worker was offered another job";
  EXPECT_EQ(scheduler_->Snapshot().at("w1").state, v1::WORKER_SILENT);

  FakeStream answering(2);
  ASSERT_TRUE(scheduler_->OnHello(answering.session(), Hello("w2")).ok());
  EXPECT_EQ(answering.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u);

  // Any message makes w1 a candidate again.
  scheduler_->OnWorkerMessage(silent.session(), "w1", Heartbeat(0));
  scheduler_->OfferPendingJobs();
  EXPECT_EQ(silent.WaitFor(v1::CoordinatorMessage::kAssignment, 2).size(), 2u);
}

TEST_F(SchedulerTest, HandedBackJobGoesBackToTheQueueAndIsAcked) {
  const int64_t sweep = CreateSweep(1);
  FakeStream leaving(1);
  v1::JobAssignment first;
  ASSERT_NO_FATAL_FAILURE(HelloAndFirstAssignment(leaving, "w1", &first));
  const int64_t job = first.job_id();
  const int64_t attempt = first.attempt_id();
  scheduler_->StopAssigning();  // as if w1 were the only one and shutting down
  v1::WorkerMessage handed_back = Result(job, attempt);
  handed_back.mutable_result()->set_handed_back(true);
  handed_back.mutable_result()->mutable_measurement()->set_outcome(v1::CANCELLED);
  handed_back.mutable_result()->mutable_measurement()->set_error("worker shutting down");
  scheduler_->OnWorkerMessage(leaving.session(), "w1", handed_back);
  auto acks = leaving.WaitFor(v1::CoordinatorMessage::kAck, 1);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].ack().attempt_id(), attempt);
  ASSERT_TRUE(Eventually([&] { return Status(sweep).pending_jobs() == 1; }));
  EXPECT_EQ(Status(sweep).ok_results() + Status(sweep).cancelled_jobs(), 0);
}

TEST_F(SchedulerTest, DrainingWorkerFinishesItsJobButGetsNoOther) {
  const int64_t sweep = CreateSweep(2);
  FakeStream leaving(1);
  v1::JobAssignment first;
  ASSERT_NO_FATAL_FAILURE(HelloAndFirstAssignment(leaving, "w1", &first));
  const int64_t job = first.job_id();
  const int64_t attempt = first.attempt_id();
  v1::WorkerMessage draining = Heartbeat(attempt);
  draining.mutable_heartbeat()->set_draining(true);
  scheduler_->OnWorkerMessage(leaving.session(), "w1", draining);
  scheduler_->OnWorkerMessage(leaving.session(), "w1", Result(job, attempt));
  ASSERT_EQ(leaving.WaitFor(v1::CoordinatorMessage::kAck, 1).size(), 1u);
  scheduler_->OfferPendingJobs();
  ASSERT_NO_FATAL_FAILURE(WaitQuiet());
  EXPECT_EQ(leaving.Sent(v1::CoordinatorMessage::kAssignment).size(), 1u)
      << "a worker shutting down was offered another job";
  EXPECT_EQ(scheduler_->Snapshot().at("w1").state, v1::WORKER_DRAINING);
  EXPECT_EQ(Status(sweep).pending_jobs(), 1);
  FakeStream staying(2);
  ASSERT_TRUE(scheduler_->OnHello(staying.session(), Hello("w2")).ok());
  EXPECT_EQ(staying.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u);
}

TEST_F(SchedulerTest, JobFailsAfterMaxAttemptsOfLostWorkers) {
  const int64_t sweep = CreateSweep(1);
  for (int attempt = 0; attempt < 2; ++attempt) {
    FakeStream stream(10 + attempt);
    const std::string id = "w" + std::to_string(attempt);
    ASSERT_TRUE(scheduler_->OnHello(stream.session(), Hello(id)).ok());
    ASSERT_EQ(stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u) << attempt;
    stream.session()->MarkClosed();
    scheduler_->OnStreamClosed(stream.session(), id);
    clock_.Advance(2000);
    scheduler_->ExpireLeases();
    ASSERT_TRUE(Eventually([&] { return Status(sweep).leased_jobs() == 0; }));
  }
  ASSERT_TRUE(Eventually([&] { return Status(sweep).failed_jobs() == 1; }));
  EXPECT_EQ(Status(sweep).state(), v1::SWEEP_DONE);
}

TEST_F(SchedulerTest, ReconnectingWorkerKeepsItsRunningJobAndDeliversTheResult) {
  const int64_t sweep = CreateSweep(1);
  FakeStream first(1);
  ASSERT_TRUE(scheduler_->OnHello(first.session(), Hello("w1")).ok());
  auto assignments = first.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  const auto a = assignments[0].assignment();
  first.session()->MarkClosed();
  scheduler_->OnStreamClosed(first.session(), "w1");

  FakeStream second(2);
  ASSERT_TRUE(scheduler_->OnHello(second.session(), Hello("w1")).ok());
  ASSERT_EQ(second.WaitFor(v1::CoordinatorMessage::kHelloAck, 1).size(), 1u);
  scheduler_->OnWorkerMessage(second.session(), "w1", Heartbeat(a.attempt_id()));
  ASSERT_NO_FATAL_FAILURE(WaitQuiet());
  EXPECT_TRUE(second.Sent(v1::CoordinatorMessage::kAssignment).empty())
      << "still busy with its job";
  scheduler_->OnWorkerMessage(second.session(), "w1", Result(a.job_id(), a.attempt_id()));
  ASSERT_EQ(second.WaitFor(v1::CoordinatorMessage::kAck, 1).size(), 1u);
  ASSERT_TRUE(Eventually([&] { return Status(sweep).state() == v1::SWEEP_DONE; }));
  EXPECT_EQ(Status(sweep).ok_results(), 1);
}

// A worker back on a new stream whose first heartbeat runs nothing gives
// its earlier job back, and takes it again (the release is written outside
// the scheduler's lock: it takes the lock for a gang's other ranks).
TEST_F(SchedulerTest, AReconnectingWorkerThatRunsNothingGivesItsJobBack) {
  CreateSweep(1);
  FakeStream first(1);
  ASSERT_TRUE(scheduler_->OnHello(first.session(), Hello("w1")).ok());
  auto assignments = first.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  const v1::JobAssignment a = assignments[0].assignment();
  first.session()->MarkClosed();
  scheduler_->OnStreamClosed(first.session(), "w1");

  FakeStream second(2);
  ASSERT_TRUE(scheduler_->OnHello(second.session(), Hello("w1")).ok());
  ASSERT_EQ(second.WaitFor(v1::CoordinatorMessage::kHelloAck, 1).size(), 1u);
  scheduler_->OnWorkerMessage(second.session(), "w1", Heartbeat(0));
  auto again = second.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].assignment().job_id(), a.job_id());
  EXPECT_NE(again[0].assignment().attempt_id(), a.attempt_id());
}

TEST_F(SchedulerTest, CancelReachesTheWorkerRunningTheJob) {
  const int64_t sweep = CreateSweep(3);
  FakeStream stream(1);
  ASSERT_TRUE(scheduler_->OnHello(stream.session(), Hello("w1")).ok());
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  auto live = db::SweepStore(database_.get()).CancelSync(sweep, clock_.NowUnixMs());
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);
  scheduler_->CancelAttempts(*live);
  auto cancels = stream.WaitFor(v1::CoordinatorMessage::kCancel, 1);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].cancel().attempt_id(), assignments[0].assignment().attempt_id());
  EXPECT_EQ(Status(sweep).state(), v1::SWEEP_CANCELLED);
}

TEST_F(SchedulerTest, ASecondLiveWorkerWithTheSameIdIsRefused) {
  FakeStream first(1);
  ASSERT_TRUE(scheduler_->OnHello(first.session(), Hello("w1")).ok());
  ASSERT_EQ(first.WaitFor(v1::CoordinatorMessage::kHelloAck, 1).size(), 1u);
  // Heard from just now: a second stream with its id is another worker.
  FakeStream second(2);
  const absl::Status refused = scheduler_->OnHello(second.session(), Hello("w1"));
  EXPECT_EQ(refused.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(refused.message().find("give each worker its own --worker-id"), std::string::npos);
  EXPECT_TRUE(first.ended().ok());
  EXPECT_FALSE(first.session()->closed());
  // Quiet for a lease timeout (1 s here): the same worker's dead stream,
  // which is ended with the reason; the new one is taken.
  clock_.Advance(600);
  FakeStream early(5);
  EXPECT_EQ(scheduler_->OnHello(early.session(), Hello("w1")).code(),
            absl::StatusCode::kAlreadyExists);
  clock_.Advance(500);
  FakeStream third(3);
  ASSERT_TRUE(scheduler_->OnHello(third.session(), Hello("w1")).ok());
  ASSERT_EQ(third.WaitFor(v1::CoordinatorMessage::kHelloAck, 1).size(), 1u);
  EXPECT_EQ(first.ended().code(), absl::StatusCode::kAborted);
  EXPECT_NE(first.ended().message().find("this one is replaced"), std::string::npos);
  EXPECT_TRUE(first.session()->closed());
  // Ids with control characters are refused.
  FakeStream evil(4);
  EXPECT_EQ(scheduler_->OnHello(evil.session(), Hello("w\x1b[2J")).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SchedulerTest, MalformedHelloIsRefused) {
  FakeStream stream(1);
  v1::WorkerHello hello = Hello("");
  EXPECT_EQ(scheduler_->OnHello(stream.session(), hello).code(),
            absl::StatusCode::kInvalidArgument);
}

// A sweep whose first `too_big` jobs (in run order) need 2 GiB each and whose
// last job needs 1 MiB.

}  // namespace
}  // namespace paradnn::server
