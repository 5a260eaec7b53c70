#include "server/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "db/database.h"
#include "db/job_store.h"
#include "db/model_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::server {
namespace {

// Captures what the scheduler sends down one worker stream.
class FakeStream {
 public:
  explicit FakeStream(uint64_t serial)
      : session_(std::make_shared<WorkerSession>(
            serial,
            [this](const v1::CoordinatorMessage& m) {
              std::lock_guard<std::mutex> lock(mu_);
              sent_.push_back(m);
            },
            [this](const absl::Status& reason) {
              std::lock_guard<std::mutex> lock(mu_);
              ended_ = reason;
            })) {}

  std::shared_ptr<WorkerSession> session() const { return session_; }
  // How the coordinator ended the stream; OK while it has not.
  absl::Status ended() {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }

  // Waits (with a deadline) until `n` messages of kind `kind` were sent.
  std::vector<v1::CoordinatorMessage> WaitFor(v1::CoordinatorMessage::MsgCase kind, size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (true) {
      std::vector<v1::CoordinatorMessage> of_kind = Sent(kind);
      if (of_kind.size() >= n || std::chrono::steady_clock::now() > deadline) return of_kind;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::vector<v1::CoordinatorMessage> Sent(v1::CoordinatorMessage::MsgCase kind) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<v1::CoordinatorMessage> out;
    for (const auto& m : sent_) {
      if (m.msg_case() == kind) out.push_back(m);
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<v1::CoordinatorMessage> sent_;
  absl::Status ended_;
  std::shared_ptr<WorkerSession> session_;
};

v1::WorkerHello Hello(const std::string& id) {
  v1::WorkerHello hello;
  hello.set_worker_id(id);
  hello.set_device_kind("cpu");
  hello.mutable_platform()->set_fingerprint("fp-test");
  hello.mutable_platform()->set_hostname("host");
  return hello;
}

v1::WorkerMessage Result(int64_t job_id, int64_t attempt_id) {
  v1::WorkerMessage message;
  v1::JobResult* result = message.mutable_result();
  result->set_job_id(job_id);
  result->set_attempt_id(attempt_id);
  result->mutable_measurement()->set_outcome(v1::OK);
  result->mutable_measurement()->set_examples_per_sec(100);
  result->mutable_measurement()->add_step_seconds(0.01);
  return message;
}

v1::WorkerMessage Heartbeat(int64_t running_attempt) {
  v1::WorkerMessage message;
  message.mutable_heartbeat()->set_running_attempt_id(running_attempt);
  return message;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("scheduler_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                .string();
    std::filesystem::remove(path_);
    database_ = *db::Database::Open(path_);
    SchedulerOptions options;
    options.heartbeat_interval_ms = 100;
    options.lease_timeout_ms = 1000;
    options.max_attempts = 2;
    scheduler_ = std::make_unique<Scheduler>(database_.get(), &clock_, options);
  }
  // Waits until the scheduler has nothing left in flight, so that a test
  // may assert that something did NOT happen: every step of its work is a
  // database write whose completion may queue the next (the leases, the
  // releases; only an uploaded model's read runs elsewhere, and these
  // tests upload none). A flush is an empty write; the writer batches what
  // is queued, so a write queued before the flush ran, or queued with it,
  // shows in the writes count. Quiet: a flush that ran alone.
  void WaitQuiet() {
    for (int flush = 0; flush < 1000; ++flush) {
      const int64_t before = database_->writer_stats().writes;
      ASSERT_TRUE(database_->WriteSync([](sqlite3*) { return absl::OkStatus(); }).ok());
      if (database_->writer_stats().writes == before + 1) return;
    }
    FAIL() << "the scheduler kept writing through 1000 flushes";
  }
  void TearDown() override {
    database_.reset();
    scheduler_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }

  int64_t CreateSweep(int jobs, const std::string& device = "cpu") {
    v1::SweepSpec spec;
    spec.set_name("s");
    spec.set_family("fc");
    spec.set_device(device);
    std::vector<db::NewJob> new_jobs(jobs);
    for (int i = 0; i < jobs; ++i) {
      new_jobs[i].config.set_family("fc");
      (*new_jobs[i].config.mutable_params())["node"] = 8 * (i + 1);
      new_jobs[i].device = device;
      new_jobs[i].ordinal = i;
    }
    return *db::SweepStore(database_.get()).CreateSync(spec, new_jobs, clock_.NowUnixMs());
  }

  v1::SweepStatus Status(int64_t sweep_id) {
    return *db::SweepStore(database_.get()).Get(sweep_id, clock_.NowUnixMs());
  }

  // Says hello as `worker_id` on `stream` and waits for its first job.
  void HelloAndFirstAssignment(FakeStream& stream, const std::string& worker_id,
                               v1::JobAssignment* assignment) {
    ASSERT_TRUE(scheduler_->OnHello(stream.session(), Hello(worker_id)).ok());
    auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
    ASSERT_EQ(assignments.size(), 1u);
    *assignment = assignments[0].assignment();
  }

  // Waits for a condition on the database with a deadline.
  bool Eventually(const std::function<bool()>& condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!condition()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  std::string path_;
  common::FakeClock clock_;
  std::unique_ptr<db::Database> database_;
  std::unique_ptr<Scheduler> scheduler_;
};

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
int64_t CreateSweepWithEstimates(db::Database* database, int64_t now_unix_ms, int too_big,
                                 bool run_predicted_oom) {
  v1::SweepSpec spec;
  spec.set_name("estimates");
  spec.set_family("fc");
  spec.set_device("cpu");
  spec.set_run_predicted_oom(run_predicted_oom);
  std::vector<db::NewJob> jobs(too_big + 1);
  for (int i = 0; i <= too_big; ++i) {
    jobs[i].config.set_family("fc");
    (*jobs[i].config.mutable_params())["node"] = i < too_big ? 65536 : 8;
    jobs[i].device = "cpu";
    jobs[i].ordinal = i;
    jobs[i].params = i < too_big ? 4000000000 : 1000;
    jobs[i].model_flops = i < too_big ? 1e15 : 1e6;
    jobs[i].peak_memory_estimate_bytes = i < too_big ? double{int64_t{2} << 30} : double{1 << 20};
  }
  return *db::SweepStore(database).CreateSync(spec, jobs, now_unix_ms);
}

v1::WorkerHello HelloWithMemory(const std::string& id, int64_t memory_bytes) {
  v1::WorkerHello hello = Hello(id);
  hello.mutable_platform()->set_memory_bytes(memory_bytes);
  return hello;
}

TEST_F(SchedulerTest, JobsThatCannotFitArePredictedOomWithoutAnAssignment) {
  const int64_t sweep = CreateSweepWithEstimates(database_.get(), clock_.NowUnixMs(), 3, false);
  FakeStream stream(1);
  ASSERT_TRUE(
      scheduler_->OnHello(stream.session(), HelloWithMemory("small", int64_t{1} << 30)).ok());
  // The three jobs that need 2 GiB are skipped; the one that fits is sent.
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  const v1::JobAssignment& sent = assignments[0].assignment();
  EXPECT_EQ(sent.job().config().params().at("node"), 8);
  EXPECT_TRUE(stream.Sent(v1::CoordinatorMessage::kAck).empty());  // nothing came from the worker

  absl::StatusOr<std::vector<v1::ResultRow>> rows =
      db::ResultStore(database_.get()).Query(sweep, false);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  int predicted = 0;
  for (const v1::ResultRow& row : *rows) {
    if (row.job_id() == sent.job_id()) {
      EXPECT_EQ(row.state(), v1::JOB_LEASED);
      continue;
    }
    ++predicted;
    EXPECT_EQ(row.state(), v1::JOB_DONE);
    EXPECT_EQ(row.worker_id(), "small");
    EXPECT_EQ(row.platform_fingerprint(), "fp-test");
    const v1::Measurement& m = row.measurement();
    EXPECT_EQ(m.outcome(), v1::PREDICTED_OOM);
    // The process estimate: 256 MiB of runtime plus 1.1 x the job's 2 GiB.
    EXPECT_EQ(m.error(),
              "memory estimate 2.5 GiB exceeds the worker's 1.0 GiB (2630667469 > 1073741824 "
              "bytes)");
    EXPECT_EQ(m.config().params().at("node"), 65536);
    EXPECT_EQ(m.counts().params(), 4000000000);
    EXPECT_DOUBLE_EQ(m.counts().model_flops(), 1e15);
    EXPECT_DOUBLE_EQ(m.counts().peak_memory_estimate_bytes(), double{int64_t{2} << 30});
    EXPECT_EQ(m.device(), "cpu");
  }
  EXPECT_EQ(predicted, 3);

  // The job that fits runs as usual and finishes the sweep.
  scheduler_->OnWorkerMessage(stream.session(), "small", Result(sent.job_id(), sent.attempt_id()));
  ASSERT_TRUE(Eventually([&] { return Status(sweep).state() == v1::SWEEP_DONE; }));
  EXPECT_EQ(Status(sweep).done_jobs(), 4);
  EXPECT_EQ(Status(sweep).ok_results(), 1);
  EXPECT_EQ(stream.Sent(v1::CoordinatorMessage::kAssignment).size(), 1u);
}

TEST_F(SchedulerTest, RunPredictedOomSendsTheJobAnyway) {
  // The sweep asked to run them anyway.
  CreateSweepWithEstimates(database_.get(), clock_.NowUnixMs(), 1, true);
  FakeStream stream(1);
  ASSERT_TRUE(
      scheduler_->OnHello(stream.session(), HelloWithMemory("small", int64_t{1} << 30)).ok());
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  EXPECT_EQ(assignments[0].assignment().job().config().params().at("node"), 65536);
}

TEST_F(SchedulerTest, WorkerWithoutAMemorySizeGetsEveryJob) {
  CreateSweepWithEstimates(database_.get(), clock_.NowUnixMs(), 1, false);
  FakeStream stream(1);
  ASSERT_TRUE(scheduler_->OnHello(stream.session(), HelloWithMemory("unknown", 0)).ok());
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  EXPECT_EQ(assignments[0].assignment().job().config().params().at("node"), 65536);
}

TEST_F(SchedulerTest, AnAssignmentCarriesItsUploadedModelAndAMissingOneIsLeftOut) {
  const std::string bytes = "PK\x03\x04 not really a zip, but bytes to ship";
  absl::StatusOr<std::string> sha256 =
      db::ModelStore(database_.get()).PutSync(bytes, "model.pt", clock_.NowUnixMs());
  ASSERT_TRUE(sha256.ok()) << sha256.status();
  v1::SweepSpec spec;
  spec.set_name("ts");
  spec.set_family("torchscript");
  std::vector<db::NewJob> jobs(2);
  for (int i = 0; i < 2; ++i) {
    jobs[i].config.set_family("torchscript");
    // The second job names a model the store does not hold.
    jobs[i].config.mutable_torchscript()->set_sha256(i == 0 ? *sha256 : std::string(64, 'f'));
    jobs[i].device = "cpu";
    jobs[i].ordinal = i;
  }
  ASSERT_TRUE(db::SweepStore(database_.get()).CreateSync(spec, jobs, clock_.NowUnixMs()).ok());

  FakeStream stream(1);
  v1::JobAssignment first;
  HelloAndFirstAssignment(stream, "w1", &first);
  EXPECT_EQ(first.job().torchscript_content(), bytes);
  scheduler_->OnWorkerMessage(stream.session(), "w1", Result(first.job_id(), first.attempt_id()));
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 2);
  ASSERT_EQ(assignments.size(), 2u);
  const v1::JobAssignment& second = assignments[1].assignment();
  EXPECT_EQ(second.job().config().torchscript().sha256(), std::string(64, 'f'));
  // Sent without bytes: the runner reports the job as ERROR naming the model.
  EXPECT_TRUE(second.job().torchscript_content().empty());
}

TEST_F(SchedulerTest, AnAssignmentCarriesTheCountsOfItsConfig) {
  // A runner that does not count (the JAX runner) reports the coordinator's
  // counts of its job. The second job's config does not parse: it goes
  // without, and its runner reports the config's error.
  v1::SweepSpec spec;
  spec.set_name("counted");
  spec.set_family("fc");
  std::vector<db::NewJob> jobs(2);
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"layer", 2},
                                   {"node", 64},
                                   {"input", 32},
                                   {"output", 10},
                                   {"batch", 16}}) {
    (*jobs[0].config.mutable_params())[key] = value;
  }
  (*jobs[1].config.mutable_params())["node"] = 8;
  for (int i = 0; i < 2; ++i) {
    jobs[i].config.set_family("fc");
    jobs[i].device = "cpu";
    jobs[i].ordinal = i;
  }
  ASSERT_TRUE(db::SweepStore(database_.get()).CreateSync(spec, jobs, clock_.NowUnixMs()).ok());

  FakeStream stream(1);
  v1::JobAssignment first;
  HelloAndFirstAssignment(stream, "w1", &first);
  ASSERT_TRUE(first.job().has_counts());
  const v1::ModelCounts& counts = first.job().counts();
  // docs/models.md: (I+1)N + (L-1)(N+1)N + (N+1)O parameters.
  EXPECT_EQ(counts.params(), 33 * 64 + 65 * 64 + 65 * 10);
  EXPECT_EQ(counts.model_flops(), 6.0 * counts.macs_per_example() * 16);
  EXPECT_GT(counts.executed_flops(), 0);
  EXPECT_GT(counts.peak_memory_estimate_bytes(), 0);
  scheduler_->OnWorkerMessage(stream.session(), "w1", Result(first.job_id(), first.attempt_id()));
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 2);
  ASSERT_EQ(assignments.size(), 2u);
  EXPECT_FALSE(assignments[1].assignment().job().has_counts());
}

TEST(PredictedOomErrorTest, NamesBothNumbers) {
  EXPECT_EQ(PredictedOomError(31.2 * (int64_t{1} << 30), int64_t{25232932864}),
            "memory estimate 31.2 GiB exceeds the worker's 23.5 GiB (33500744909 > 25232932864 "
            "bytes)");
  EXPECT_EQ(PredictedOomError(3 << 20, 1000),
            "memory estimate 3.0 MiB exceeds the worker's 1000 "
            "bytes (3145728 > 1000 bytes)");
}

}  // namespace
}  // namespace paradnn::server
