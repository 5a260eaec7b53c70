#include "db/job_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "db/platform_store.h"
#include "db/sweep_store.h"
#include "db/worker_store.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using testing::Flush;
using testing::Jobs;
using testing::ScalarInt;
using testing::ScalarText;
using testing::Spec;
using testing::StoresTest;

class JobStoreTest : public StoresTest {
 protected:
  Lease MustLease(const std::string& device, const std::string& worker, int64_t deadline) {
    absl::StatusOr<std::optional<Lease>> lease =
        jobs_->LeaseNextSync(device, worker, kNow, deadline);
    EXPECT_TRUE(lease.ok()) << lease.status();
    EXPECT_TRUE(lease.ok() && lease->has_value()) << "no job for " << device;
    return lease.ok() && lease->has_value() ? **lease : Lease{};
  }
};

TEST_F(JobStoreTest, EstimatesAndTheSweepsOomChoiceComeWithTheLease) {
  std::vector<NewJob> jobs = Jobs(2);
  jobs[0].params = 123456;
  jobs[0].model_flops = 7.5e12;
  jobs[0].peak_memory_estimate_bytes = 3.25e9;
  jobs[1].ordinal = 1;  // no estimates: stored as NULL, read back as 0
  v1::SweepSpec spec = Spec("estimates");
  spec.set_run_predicted_oom(true);
  absl::StatusOr<int64_t> sweep = sweeps_->CreateSync(spec, std::move(jobs), kNow);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(*) FROM jobs WHERE params IS NULL AND model_flops IS "
                       "NULL AND peak_memory_estimate_bytes IS NULL"),
            1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT run_predicted_oom FROM sweeps"), 1);

  Lease first = MustLease("cpu", "w", kNow + 100);
  EXPECT_EQ(first.params, 123456);
  EXPECT_DOUBLE_EQ(first.model_flops, 7.5e12);
  EXPECT_DOUBLE_EQ(first.peak_memory_estimate_bytes, 3.25e9);
  EXPECT_TRUE(first.run_predicted_oom);
  Lease second = MustLease("cpu", "w2", kNow + 100);
  EXPECT_EQ(second.params, 0);
  EXPECT_EQ(second.model_flops, 0);
  EXPECT_EQ(second.peak_memory_estimate_bytes, 0);
  EXPECT_TRUE(second.run_predicted_oom);

  ASSERT_TRUE(sweeps_->CreateSync(Spec("default"), Jobs(1), kNow + 1).ok());
  EXPECT_FALSE(MustLease("cpu", "w3", kNow + 100).run_predicted_oom);
}

TEST_F(JobStoreTest, LeasesOldestSweepFirstThenByOrdinal) {
  // The first sweep's jobs are inserted out of run order.
  std::vector<NewJob> first = Jobs(3);
  first[0].ordinal = 2;
  first[1].ordinal = 0;
  first[2].ordinal = 1;
  absl::StatusOr<int64_t> older = sweeps_->CreateSync(Spec("older"), std::move(first), kNow);
  absl::StatusOr<int64_t> newer = sweeps_->CreateSync(Spec("newer"), Jobs(2), kNow + 1);
  ASSERT_TRUE(older.ok() && newer.ok());

  std::vector<std::pair<int64_t, int64_t>> order;  // (sweep, index param)
  for (int i = 0; i < 5; ++i) {
    Lease lease = MustLease("cpu", "w", kNow + 100);
    order.emplace_back(lease.sweep_id, lease.config.params().at("index"));
    EXPECT_EQ(lease.device, "cpu");
    EXPECT_GT(lease.attempt_id, 0);
  }
  // Ordinals 0, 1, 2 of the older sweep are the jobs with index 1, 2, 0.
  std::vector<std::pair<int64_t, int64_t>> want = {
      {*older, 1}, {*older, 2}, {*older, 0}, {*newer, 0}, {*newer, 1}};
  EXPECT_EQ(order, want);
  EXPECT_FALSE(jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 100)->has_value());
}

TEST_F(JobStoreTest, TheLeaseQueryNeedsNoSort) {
  std::string plan = testing::QueryPlan(
      *db_,
      "SELECT j.id FROM jobs j WHERE j.state = 1 AND j.device = 'cpu' AND EXISTS ("
      "SELECT 1 FROM sweeps s WHERE s.id = j.sweep_id AND s.state = 1) "
      "ORDER BY j.sweep_id, j.ordinal LIMIT 1");
  EXPECT_NE(plan.find("jobs_queue"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
}

TEST_F(JobStoreTest, LeasesOnlyJobsForTheWorkersDevice) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("gpu", "cuda"), Jobs(2, "cuda"), kNow).ok());
  EXPECT_EQ(*jobs_->PendingCount("cuda"), 2);
  EXPECT_EQ(*jobs_->PendingCount("cpu"), 0);
  EXPECT_FALSE(jobs_->LeaseNextSync("cpu", "cpu-worker", kNow, kNow + 1)->has_value());
  Lease lease = MustLease("cuda", "gpu-worker", kNow + 1);
  EXPECT_EQ(lease.device, "cuda");
  EXPECT_EQ(*jobs_->PendingCount("cuda"), 1);
}

// A job of N data-parallel replicas (params.devices) goes only to a worker
// whose platform lends it N GPUs (Platform.cuda_device_count); smaller
// hosts pass it by for the jobs they can run.
TEST_F(JobStoreTest, AJobOfSeveralDevicesWaitsForAWorkerWithThatManyGpus) {
  std::vector<NewJob> jobs = Jobs(3, "cuda");
  (*jobs[0].config.mutable_params())["devices"] = 2;
  (*jobs[1].config.mutable_params())["devices"] = 1;
  ASSERT_TRUE(sweeps_->CreateSync(Spec("ddp", "cuda"), jobs, kNow).ok());
  WorkerStore workers(db_.get());
  auto connect = [&](const std::string& worker, int gpus) {
    v1::Platform platform;
    platform.set_fingerprint("fp-" + worker);
    platform.set_device_kind("cuda");
    platform.set_cuda_device_count(gpus);
    absl::StatusOr<int64_t> id = PlatformStore(db_.get()).UpsertSync(platform);
    ASSERT_TRUE(id.ok()) << id.status();
    workers.Connected(worker, "cuda", "host", *id, "libtorch/test", "", kNow);
    Flush(*db_);
  };
  connect("one-gpu", 1);
  connect("two-gpus", 2);

  // The one-GPU worker takes jobs 1 (devices 1) and 2 (no devices: 1), never job 0.
  EXPECT_EQ(MustLease("cuda", "one-gpu", kNow + 1).config.params().at("index"), 1);
  EXPECT_EQ(MustLease("cuda", "one-gpu", kNow + 1).config.params().at("index"), 2);
  EXPECT_FALSE(jobs_->LeaseNextSync("cuda", "one-gpu", kNow, kNow + 1)->has_value());
  EXPECT_EQ(*jobs_->PendingCount("cuda"), 1);
  Lease wide = MustLease("cuda", "two-gpus", kNow + 1);
  EXPECT_EQ(wide.config.params().at("index"), 0);
  EXPECT_EQ(wide.config.params().at("devices"), 2);
}

TEST_F(JobStoreTest, ALeaseRecordsAnOpenAttempt) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("s"), Jobs(2), kNow);
  ASSERT_TRUE(id.ok());
  Lease lease = MustLease("cpu", "worker-a", kNow + 15'000);
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow);
  EXPECT_EQ(status->leased_jobs(), 1);
  EXPECT_EQ(status->pending_jobs(), 1);
  EXPECT_EQ(*jobs_->OpenAttempts(), std::vector<int64_t>{lease.attempt_id});
  EXPECT_EQ(*jobs_->OpenAttemptsOf("worker-a"), std::vector<int64_t>{lease.attempt_id});
  EXPECT_TRUE(jobs_->OpenAttemptsOf("worker-b")->empty());
  EXPECT_EQ(*ScalarInt(*db_, "SELECT attempts FROM jobs WHERE state = 2"), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT lease_deadline_unix_ms FROM attempts"), kNow + 15'000);
}

TEST_F(JobStoreTest, ExtendLeasesMovesOnlyThatWorkersDeadlines) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(2), kNow).ok());
  Lease a = MustLease("cpu", "worker-a", kNow + 1000);
  Lease b = MustLease("cpu", "worker-b", kNow + 1000);
  jobs_->ExtendLeases("worker-a", kNow + 5000);
  Flush(*db_);
  EXPECT_TRUE(jobs_->ExpiredAttempts(kNow + 500)->empty());
  EXPECT_EQ(*jobs_->ExpiredAttempts(kNow + 2000), std::vector<int64_t>{b.attempt_id});
  EXPECT_EQ(*jobs_->ExpiredAttempts(kNow + 6000),
            (std::vector<int64_t>{a.attempt_id, b.attempt_id}));
  // Released attempts are no longer open, so no longer expire.
  ASSERT_TRUE(jobs_->ReleaseSync(b.attempt_id, "lease expired", kNow + 2000, 3).ok());
  EXPECT_EQ(*jobs_->ExpiredAttempts(kNow + 6000), std::vector<int64_t>{a.attempt_id});
}

TEST_F(JobStoreTest, ReleaseRequeuesThenFailsAfterMaxAttempts) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("retry"), Jobs(1), kNow);
  ASSERT_TRUE(id.ok());
  Lease first = MustLease("cpu", "w1", kNow + 10);
  EXPECT_EQ(*jobs_->ReleaseSync(first.attempt_id, "worker lost", kNow + 20, 2), v1::JOB_PENDING);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->pending_jobs(), 1);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->state(), v1::SWEEP_RUNNING);
  EXPECT_EQ(*ScalarText(*db_, "SELECT outcome FROM attempts ORDER BY id LIMIT 1"), "worker lost");
  EXPECT_EQ(*ScalarInt(*db_, "SELECT finished_unix_ms FROM attempts ORDER BY id LIMIT 1"),
            kNow + 20);

  Lease second = MustLease("cpu", "w2", kNow + 30);
  EXPECT_EQ(second.job_id, first.job_id);
  EXPECT_NE(second.attempt_id, first.attempt_id);
  EXPECT_EQ(*jobs_->ReleaseSync(second.attempt_id, "lease expired", kNow + 40, 2), v1::JOB_FAILED);
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow);
  EXPECT_EQ(status->failed_jobs(), 1);
  EXPECT_EQ(status->state(), v1::SWEEP_DONE);
  EXPECT_EQ(status->finished_unix_ms(), kNow + 40);
  EXPECT_FALSE(jobs_->LeaseNextSync("cpu", "w3", kNow, kNow + 1)->has_value());

  // Releasing an already closed attempt changes nothing.
  EXPECT_EQ(*jobs_->ReleaseSync(second.attempt_id, "again", kNow + 50, 2), v1::JOB_FAILED);
  EXPECT_EQ(*ScalarText(*db_, "SELECT outcome FROM attempts ORDER BY id DESC LIMIT 1"),
            "lease expired");
}

TEST_F(JobStoreTest, ReleaseRejectsUnknownAttemptsAndBadLimits) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(1), kNow).ok());
  EXPECT_EQ(jobs_->ReleaseSync(12345, "x", kNow, 3).status().code(), absl::StatusCode::kNotFound);
  Lease lease = MustLease("cpu", "w", kNow + 1);
  EXPECT_EQ(jobs_->ReleaseSync(lease.attempt_id, "x", kNow, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  // The refused release left the attempt open.
  EXPECT_EQ(*jobs_->OpenAttempts(), std::vector<int64_t>{lease.attempt_id});
}

TEST_F(JobStoreTest, AsyncLeaseReportsNoJobAsNullopt) {
  std::promise<absl::StatusOr<std::optional<Lease>>> got;
  jobs_->LeaseNext("cpu", "w", kNow, kNow + 1, [&](absl::StatusOr<std::optional<Lease>> lease) {
    got.set_value(std::move(lease));
  });
  absl::StatusOr<std::optional<Lease>> lease = got.get_future().get();
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_FALSE(lease->has_value());
}

TEST_F(JobStoreTest, ConcurrentLeasesNeverHandOutAJobTwice) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("race"), Jobs(60), kNow).ok());
  absl::Mutex mu;  // the leasing threads append; read once they have joined
  std::vector<int64_t> leased;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      for (;;) {
        absl::StatusOr<std::optional<Lease>> lease =
            jobs_->LeaseNextSync("cpu", "w" + std::to_string(w), kNow, kNow + 1);
        if (!lease.ok() || !lease->has_value()) return;
        absl::MutexLock lock(&mu);
        leased.push_back((*lease)->job_id);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  std::sort(leased.begin(), leased.end());
  EXPECT_EQ(leased.size(), 60u);
  EXPECT_EQ(std::unique(leased.begin(), leased.end()), leased.end());
}

TEST_F(JobStoreTest, ABudgetedSweepLeasesNothingOnceItsBudgetHasPassed) {
  std::vector<NewJob> jobs = Jobs(3);
  for (NewJob& job : jobs) job.settings.set_budget_seconds(10);  // created held
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("budgeted"), std::move(jobs), kNow);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(db_->WriteSync([](sqlite3* db) {
                   Statement release(db, "UPDATE jobs SET state = ? WHERE state = ?");
                   release.Bind(1, static_cast<int>(v1::JOB_PENDING))
                       .Bind(2, static_cast<int>(v1::JOB_HELD));
                   return release.Run();
                 })
                  .ok());
  // The first lease starts the budget's clock.
  absl::StatusOr<std::optional<Lease>> first =
      jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 60'000);
  ASSERT_TRUE(first.ok() && HasJob(*first));
  absl::StatusOr<std::optional<Lease>> within =
      jobs_->LeaseNextSync("cpu", "w2", kNow + 9'999, kNow + 60'000);
  ASSERT_TRUE(within.ok() && HasJob(*within));
  // At the budget's end the last pending job waits for its planner instead.
  absl::StatusOr<std::optional<Lease>> after =
      jobs_->LeaseNextSync("cpu", "w3", kNow + 10'000, kNow + 60'000);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_FALSE(after->has_value());
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM jobs WHERE state = 1"), 1);  // JOB_PENDING
}

}  // namespace
}  // namespace paradnn::db
