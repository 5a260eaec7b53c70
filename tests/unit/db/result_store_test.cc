#include "db/result_store.h"

#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <string>
#include <vector>

#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/sweep_store.h"
#include "tests/unit/db/test_db.h"

// In the fixtures' namespace (tests/unit/db/test_db.h): its builders need no
// using-list.
namespace paradnn::db::testing {
namespace {

class ResultStoreTest : public StoresTest {
 protected:
  void SetUp() override {
    StoresTest::SetUp();
    platform_id_ = UpsertPlatform(CpuPlatform("fp-1"));
  }

  Lease MustLease(const std::string& worker = "w") {
    absl::StatusOr<std::optional<Lease>> lease =
        jobs_->LeaseNextSync("cpu", worker, kNow, kNow + 15'000);
    EXPECT_TRUE(lease.ok() && lease->has_value());
    return lease.ok() && lease->has_value() ? **lease : Lease{};
  }

  absl::StatusOr<StoreOutcome> Store(const Lease& lease, const v1::Measurement& m,
                                     int64_t at = kNow + 100, const std::string& worker = "w") {
    return results_->StoreSync(lease.job_id, lease.attempt_id, worker, platform_id_, m, at);
  }

  int64_t platform_id_ = 0;
};

TEST_F(ResultStoreTest, StoresOnceAndAnswersDuplicatesAfterwards) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("s"), Jobs(2), kNow);
  ASSERT_TRUE(id.ok());
  Lease lease = MustLease();
  EXPECT_EQ(*Store(lease, OkMeasurement(5)), StoreOutcome::kStored);
  EXPECT_EQ(*Store(lease, OkMeasurement(5)), StoreOutcome::kDuplicate);
  EXPECT_EQ(*results_->CountForJob(lease.job_id), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM samples"), 5);

  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow);
  EXPECT_EQ(status->done_jobs(), 1);
  EXPECT_EQ(status->ok_results(), 1);
  EXPECT_EQ(status->pending_jobs(), 1);
  EXPECT_EQ(status->state(), v1::SWEEP_RUNNING);
  EXPECT_EQ(*ScalarText(*db_, "SELECT outcome FROM attempts"), "OK");
  EXPECT_TRUE(jobs_->OpenAttempts()->empty());

  // The last job's result finishes the sweep, whatever its outcome.
  Lease last = MustLease();
  EXPECT_EQ(*Store(last, OkMeasurement(0, v1::OOM), kNow + 700), StoreOutcome::kStored);
  status = sweeps_->Get(*id, kNow + 99'000);
  EXPECT_EQ(status->state(), v1::SWEEP_DONE);
  EXPECT_EQ(status->finished_unix_ms(), kNow + 700);
  EXPECT_DOUBLE_EQ(status->elapsed_seconds(), 0.7);
  EXPECT_EQ(status->done_jobs(), 2);
  EXPECT_EQ(status->ok_results(), 1);
}

TEST_F(ResultStoreTest, MetricsLandInColumnsAndSamplesInTheirOwnTable) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(1), kNow).ok());
  Lease lease = MustLease();
  v1::Measurement m = OkMeasurement(4);
  ASSERT_EQ(*Store(lease, m), StoreOutcome::kStored);
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(*) FROM results WHERE examples_per_sec = 1234.5 "
                       "AND step_median_s = 0.01 AND stop_reason = 'ci' AND steps = 4 "
                       "AND params = 4096 AND model_flops = 1e9 AND peak_rss_bytes = 1048576 "
                       "AND outcome = 1 AND platform_id IS NOT NULL"),
            1);
  EXPECT_EQ(
      *ScalarInt(*db_,
                 "SELECT COUNT(*) FROM samples WHERE step = 3 AND abs(seconds - 0.013) < 1e-12"),
      1);
  // The blob carries everything but the samples.
  absl::StatusOr<std::string> blob_size =
      ScalarText(*db_, "SELECT length(measurement) FROM results");
  v1::Measurement without = m;
  without.clear_step_seconds();
  EXPECT_EQ(*blob_size, std::to_string(without.ByteSizeLong()));
}

TEST_F(ResultStoreTest, SuspectConditionsLandJoinedInTheirColumn) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(2), kNow).ok());
  Lease flagged = MustLease();
  v1::Measurement m = OkMeasurement(3);
  m.add_suspect("host busy: load average 3.10 on 2 CPUs");
  m.add_suspect("noisy steps: CV 14 %");
  ASSERT_EQ(*Store(flagged, m), StoreOutcome::kStored);
  Lease clean = MustLease();
  ASSERT_EQ(*Store(clean, OkMeasurement(3)), StoreOutcome::kStored);
  const std::string flagged_sql =
      "SELECT suspect FROM results WHERE job_id = " + std::to_string(flagged.job_id);
  EXPECT_EQ(*ScalarText(*db_, flagged_sql.c_str()),
            "host busy: load average 3.10 on 2 CPUs; noisy steps: CV 14 %");
  // Checked and clean is "", not NULL (NULL: stored before schema 5).
  const std::string clean_sql = "SELECT COUNT(*) FROM results WHERE suspect = '' AND job_id = " +
                                std::to_string(clean.job_id);
  EXPECT_EQ(*ScalarInt(*db_, clean_sql.c_str()), 1);
}

TEST_F(ResultStoreTest, ALateResultOfAReleasedAttemptIsAcceptedOnce) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("s"), Jobs(1), kNow);
  ASSERT_TRUE(id.ok());
  Lease first = MustLease("slow");
  ASSERT_EQ(*jobs_->ReleaseSync(first.attempt_id, "lease expired", kNow + 10, 3), v1::JOB_PENDING);
  Lease second = MustLease("fast");
  ASSERT_EQ(second.job_id, first.job_id);

  // The first worker's result arrives although its lease expired.
  EXPECT_EQ(*Store(first, OkMeasurement(3), kNow + 20, "slow"), StoreOutcome::kStored);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->state(), v1::SWEEP_DONE);
  // The second attempt's result is a duplicate, and closes that attempt.
  EXPECT_EQ(*Store(second, OkMeasurement(3), kNow + 30, "fast"), StoreOutcome::kDuplicate);
  EXPECT_EQ(*results_->CountForJob(first.job_id), 1);
  EXPECT_TRUE(jobs_->OpenAttempts()->empty());
  EXPECT_EQ(*ScalarText(*db_, "SELECT worker_id FROM results"), "slow");
  EXPECT_EQ(*ScalarText(*db_,
                        "SELECT group_concat(outcome, ',') FROM "
                        "(SELECT outcome FROM attempts ORDER BY id)"),
            "lease expired,duplicate");
}

TEST_F(ResultStoreTest, AResultRescuesAJobThatHadFailed) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("s"), Jobs(1), kNow);
  ASSERT_TRUE(id.ok());
  Lease lease = MustLease();
  ASSERT_EQ(*jobs_->ReleaseSync(lease.attempt_id, "lease expired", kNow + 10, 1), v1::JOB_FAILED);
  EXPECT_EQ(*Store(lease, OkMeasurement(2)), StoreOutcome::kStored);
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow);
  EXPECT_EQ(status->done_jobs(), 1);
  EXPECT_EQ(status->failed_jobs(), 0);
  EXPECT_EQ(status->state(), v1::SWEEP_DONE);
}

TEST_F(ResultStoreTest, RejectsUnknownJobsForeignAttemptsAndUnknownPlatforms) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(2), kNow).ok());
  Lease a = MustLease();
  Lease b = MustLease();
  EXPECT_EQ(results_->StoreSync(999, a.attempt_id, "w", 0, OkMeasurement(1), kNow).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(
      results_->StoreSync(a.job_id, b.attempt_id, "w", 0, OkMeasurement(1), kNow).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(results_->StoreSync(a.job_id, 999, "w", 0, OkMeasurement(1), kNow).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      results_->StoreSync(a.job_id, a.attempt_id, "w", 777, OkMeasurement(1), kNow).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*results_->CountForJob(a.job_id), 0);
  // Without a platform (id 0) the result is stored with a NULL platform.
  EXPECT_EQ(*results_->StoreSync(a.job_id, a.attempt_id, "w", 0, OkMeasurement(1), kNow),
            StoreOutcome::kStored);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM results WHERE platform_id IS NULL"), 1);
}

TEST_F(ResultStoreTest, ACancelledOutcomeCancelsTheJobWithoutAResult) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("s"), Jobs(2), kNow);
  ASSERT_TRUE(id.ok());
  Lease lease = MustLease();
  absl::StatusOr<std::vector<SweepStore::LiveAttempt>> live = sweeps_->CancelSync(*id, kNow + 5);
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);

  EXPECT_EQ(*Store(lease, OkMeasurement(0, v1::CANCELLED)), StoreOutcome::kStored);
  EXPECT_EQ(*results_->CountForJob(lease.job_id), 0);
  EXPECT_EQ(*ScalarText(*db_, "SELECT outcome FROM attempts"), "cancelled");
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow);
  EXPECT_EQ(status->cancelled_jobs(), 2);
  EXPECT_EQ(status->leased_jobs(), 0);
  EXPECT_EQ(status->state(), v1::SWEEP_CANCELLED);
  EXPECT_TRUE(sweeps_->CancelSync(*id, kNow + 9)->empty());
  // A re-sent CANCELLED changes nothing.
  EXPECT_EQ(*Store(lease, OkMeasurement(0, v1::CANCELLED)), StoreOutcome::kDuplicate);
  EXPECT_EQ(*results_->CountForJob(lease.job_id), 0);
}

TEST_F(ResultStoreTest, ACancelledLastJobOfARunningSweepFinishesIt) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("s"), Jobs(1), kNow);
  ASSERT_TRUE(id.ok());
  Lease lease = MustLease();
  EXPECT_EQ(*Store(lease, OkMeasurement(0, v1::CANCELLED), kNow + 40), StoreOutcome::kStored);
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow);
  EXPECT_EQ(status->cancelled_jobs(), 1);
  EXPECT_EQ(status->state(), v1::SWEEP_DONE);
  EXPECT_EQ(status->finished_unix_ms(), kNow + 40);
}

TEST_F(ResultStoreTest, QueryReturnsOneRowPerJobWithSamplesOnRequest) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("q"), Jobs(3), kNow);
  ASSERT_TRUE(id.ok());
  // Another sweep's jobs must not show up.
  ASSERT_TRUE(sweeps_->CreateSync(Spec("other"), Jobs(2), kNow).ok());
  Lease a = MustLease("worker-a");
  Lease b = MustLease("worker-b");
  ASSERT_EQ(*Store(a, OkMeasurement(5), kNow + 1, "worker-a"), StoreOutcome::kStored);
  ASSERT_EQ(*Store(b, OkMeasurement(0, v1::TIMEOUT), kNow + 2, "worker-b"), StoreOutcome::kStored);

  absl::StatusOr<std::vector<v1::ResultRow>> rows = results_->Query(*id, false);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_LT((*rows)[0].job_id(), (*rows)[1].job_id());
  EXPECT_LT((*rows)[1].job_id(), (*rows)[2].job_id());
  const v1::ResultRow& first = (*rows)[0];
  EXPECT_EQ(first.job_id(), a.job_id);
  EXPECT_EQ(first.sweep_id(), *id);
  EXPECT_EQ(first.state(), v1::JOB_DONE);
  EXPECT_EQ(first.config().params().at("index"), 0);
  EXPECT_EQ(first.config().params().at("layer"), 1);
  EXPECT_TRUE(first.has_measurement());
  EXPECT_EQ(first.measurement().outcome(), v1::OK);
  EXPECT_DOUBLE_EQ(first.measurement().examples_per_sec(), 1234.5);
  EXPECT_EQ(first.measurement().step_seconds_size(), 0);
  EXPECT_EQ(first.worker_id(), "worker-a");
  EXPECT_EQ(first.platform_fingerprint(), "fp-1");
  EXPECT_EQ(first.attempt_id(), a.attempt_id);
  EXPECT_EQ(first.attempts(), 1);
  EXPECT_EQ((*rows)[1].measurement().outcome(), v1::TIMEOUT);
  const v1::ResultRow& pending = (*rows)[2];
  EXPECT_EQ(pending.state(), v1::JOB_PENDING);
  EXPECT_FALSE(pending.has_measurement());
  EXPECT_EQ(pending.attempts(), 0);
  EXPECT_EQ(pending.config().params().at("index"), 2);

  rows = results_->Query(*id, true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ((*rows)[0].measurement().step_seconds_size(), 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ((*rows)[0].measurement().step_seconds(i), 0.01 + 0.001 * i);
  }
  EXPECT_EQ((*rows)[1].measurement().step_seconds_size(), 0);

  EXPECT_EQ(results_->Query(4242, false).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ResultStoreTest, AsyncStoreAcknowledgesAfterCommit) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(1), kNow).ok());
  Lease lease = MustLease();
  std::promise<int64_t> count_at_ack;
  results_->Store(lease.job_id, lease.attempt_id, "w", platform_id_, OkMeasurement(2), kNow,
                  [&](absl::StatusOr<StoreOutcome> outcome) {
                    EXPECT_TRUE(outcome.ok() && *outcome == StoreOutcome::kStored);
                    absl::StatusOr<int64_t> n = results_->CountForJob(lease.job_id);
                    count_at_ack.set_value(n.ok() ? *n : -1);
                  });
  EXPECT_EQ(count_at_ack.get_future().get(), 1);
}

class StoreThenLeaseTest : public ResultStoreTest {
 protected:
  absl::StatusOr<ResultStore::StoredThenLeased> StoreThenLease(const Lease& lease,
                                                               int64_t platform_id) {
    std::promise<absl::StatusOr<ResultStore::StoredThenLeased>> done;
    results_->StoreThenLease(
        lease.job_id, lease.attempt_id, "w", platform_id, OkMeasurement(1), kNow + 100, "cpu",
        kNow + 15'000,
        [&](absl::StatusOr<ResultStore::StoredThenLeased> out) { done.set_value(std::move(out)); });
    return done.get_future().get();
  }
};

TEST_F(StoreThenLeaseTest, StoresTheResultAndLeasesTheNextJobInOneTransaction) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(2), kNow).ok());
  Lease first = MustLease();
  const int64_t transactions = db_->writer_stats().transactions;
  absl::StatusOr<ResultStore::StoredThenLeased> out = StoreThenLease(first, platform_id_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(db_->writer_stats().transactions, transactions + 1);
  EXPECT_EQ(out->outcome, StoreOutcome::kStored);
  ASSERT_TRUE(out->next.ok() && out->next->has_value());
  const Lease& second = **out->next;
  EXPECT_NE(second.job_id, first.job_id);
  EXPECT_EQ(*results_->CountForJob(first.job_id), 1);
  EXPECT_EQ(*jobs_->OpenAttemptsOf("w"), std::vector<int64_t>{second.attempt_id});

  // The last job's result: stored, and nothing left to lease.
  out = StoreThenLease(second, platform_id_);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->next.ok());
  EXPECT_FALSE(out->next->has_value());
  EXPECT_EQ(*results_->CountForJob(second.job_id), 1);
}

TEST_F(StoreThenLeaseTest, AFailedStoreLeasesNothing) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(2), kNow).ok());
  Lease lease = MustLease();
  absl::StatusOr<ResultStore::StoredThenLeased> out = StoreThenLease(lease, /*platform_id=*/777);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*results_->CountForJob(lease.job_id), 0);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM attempts"), 1);
  EXPECT_EQ(*jobs_->PendingCount("cpu"), 1);
}

TEST_F(StoreThenLeaseTest, AFailedLeaseIsRolledBackAloneAndTheResultStands) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(2), kNow).ok());
  Lease lease = MustLease();
  // The other job's stored config no longer parses: leasing it fails.
  ASSERT_TRUE(db_->WriteSync([&](sqlite3* db) {
                   Statement corrupt(db, "UPDATE jobs SET config = x'ffff' WHERE id != ?");
                   corrupt.Bind(1, lease.job_id);
                   return corrupt.Run();
                 })
                  .ok());
  absl::StatusOr<ResultStore::StoredThenLeased> out = StoreThenLease(lease, platform_id_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->outcome, StoreOutcome::kStored);
  EXPECT_EQ(out->next.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(*results_->CountForJob(lease.job_id), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM attempts"), 1);
  EXPECT_EQ(*jobs_->PendingCount("cpu"), 1);
}

}  // namespace
}  // namespace paradnn::db::testing
