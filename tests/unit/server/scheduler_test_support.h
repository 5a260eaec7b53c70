// The scheduler tests' shared pieces: a fake worker stream that records
// what the scheduler sends, message builders, and a fixture with a real
// database file and a fake clock.
#ifndef PARADNN_TESTS_UNIT_SERVER_SCHEDULER_TEST_SUPPORT_H_
#define PARADNN_TESTS_UNIT_SERVER_SCHEDULER_TEST_SUPPORT_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "db/database.h"
#include "db/sweep_store.h"
#include "server/scheduler.h"
#include "tests/support/wait_for.h"

// In paradnn::server itself, so that the tests name them without `using`.
namespace paradnn::server {

// Captures what the scheduler sends down one worker stream.
class FakeStream {
 public:
  explicit FakeStream(uint64_t serial)
      : session_(std::make_shared<WorkerSession>(
            serial,
            [this](const v1::CoordinatorMessage& m) {
              absl::MutexLock lock(&mu_);
              sent_.push_back(m);
            },
            [this](const absl::Status& reason) {
              absl::MutexLock lock(&mu_);
              ended_ = reason;
            })) {}

  std::shared_ptr<WorkerSession> session() const { return session_; }
  // How the coordinator ended the stream; OK while it has not.
  absl::Status ended() {
    absl::MutexLock lock(&mu_);
    return ended_;
  }

  // Waits (with a deadline) until `n` messages of kind `kind` were sent.
  std::vector<v1::CoordinatorMessage> WaitFor(v1::CoordinatorMessage::MsgCase kind, size_t n) {
    testing::WaitFor([&] { return Sent(kind).size() >= n; }, std::chrono::seconds(10),
                     std::chrono::milliseconds(5));
    return Sent(kind);
  }
  std::vector<v1::CoordinatorMessage> Sent(v1::CoordinatorMessage::MsgCase kind) {
    absl::MutexLock lock(&mu_);
    std::vector<v1::CoordinatorMessage> out;
    for (const auto& m : sent_) {
      if (m.msg_case() == kind) out.push_back(m);
    }
    return out;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::CoordinatorMessage> sent_ ABSL_GUARDED_BY(mu_);
  absl::Status ended_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<WorkerSession> session_;
};

inline v1::WorkerHello Hello(const std::string& id) {
  v1::WorkerHello hello;
  hello.set_worker_id(id);
  hello.set_device_kind("cpu");
  hello.mutable_platform()->set_fingerprint("fp-test");
  // A host of its own: workers of one host whose CPUs overlap measure one
  // at a time (scheduler_cpu_sharing tests), which these tests are not about.
  hello.mutable_platform()->set_hostname("host-" + id);
  return hello;
}

inline v1::WorkerMessage Result(int64_t job_id, int64_t attempt_id) {
  v1::WorkerMessage message;
  v1::JobResult* result = message.mutable_result();
  result->set_job_id(job_id);
  result->set_attempt_id(attempt_id);
  result->mutable_measurement()->set_outcome(v1::OK);
  result->mutable_measurement()->set_examples_per_sec(100);
  result->mutable_measurement()->add_step_seconds(0.01);
  return message;
}

inline v1::WorkerMessage Heartbeat(int64_t running_attempt) {
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
    return testing::WaitFor(condition, std::chrono::seconds(10), std::chrono::milliseconds(5));
  }

  std::string path_;
  common::FakeClock clock_;
  std::unique_ptr<db::Database> database_;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace paradnn::server

#endif  // PARADNN_TESTS_UNIT_SERVER_SCHEDULER_TEST_SUPPORT_H_
