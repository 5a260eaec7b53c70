#include "db/sweep_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/config_intern.h"
#include "db/job_store.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using testing::Jobs;
using testing::ScalarInt;
using testing::ScalarText;
using testing::Spec;
using testing::StoresTest;

using SweepStoreTest = StoresTest;

TEST_F(SweepStoreTest, CreateThenGetCountsEveryJobPending) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("quick"), Jobs(12), kNow);
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow + 2500);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->sweep_id(), *id);
  EXPECT_EQ(status->name(), "quick");
  EXPECT_EQ(status->family(), "fc");
  EXPECT_EQ(status->device(), "cpu");
  EXPECT_EQ(status->state(), v1::SWEEP_RUNNING);
  EXPECT_EQ(status->total_jobs(), 12);
  EXPECT_EQ(status->pending_jobs(), 12);
  EXPECT_EQ(status->leased_jobs() + status->done_jobs() + status->failed_jobs() +
                status->cancelled_jobs() + status->ok_results(),
            0);
  EXPECT_EQ(status->created_unix_ms(), kNow);
  EXPECT_EQ(status->finished_unix_ms(), 0);
  EXPECT_DOUBLE_EQ(status->elapsed_seconds(), 2.5);
  EXPECT_EQ(status->spec().params().at("layer").value(), 4);
  EXPECT_EQ(status->spec().precision(0), "float32");
}

TEST_F(SweepStoreTest, AnInterruptedSweepIsNotLeasedUntilResumed) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("paused"), Jobs(2), kNow);
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<bool> moved =
      sweeps_->MoveStateSync(*id, v1::SWEEP_RUNNING, v1::SWEEP_INTERRUPTED);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_TRUE(*moved);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->state(), v1::SWEEP_INTERRUPTED);
  absl::StatusOr<std::optional<Lease>> none = jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 100);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value()) << "a job of an interrupted sweep was leased";
  // Moving from a state it is not in changes nothing.
  EXPECT_FALSE(*sweeps_->MoveStateSync(*id, v1::SWEEP_RUNNING, v1::SWEEP_INTERRUPTED));
  EXPECT_TRUE(*sweeps_->MoveStateSync(*id, v1::SWEEP_INTERRUPTED, v1::SWEEP_RUNNING));
  absl::StatusOr<std::optional<Lease>> lease = jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 100);
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_TRUE(lease->has_value());
  EXPECT_EQ(sweeps_->MoveStateSync(999, v1::SWEEP_RUNNING, v1::SWEEP_INTERRUPTED).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SweepStoreTest, JobsKeepTheirConfigSettingsAndColumns) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("cols"), Jobs(3), kNow).ok());
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(*) FROM jobs WHERE precision = 'float32' AND "
                       "optimizer = 'rmsprop' AND device = 'cpu' AND attempts = 0"),
            3);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT ordinal FROM jobs ORDER BY id DESC LIMIT 1"), 2);
  absl::StatusOr<std::optional<Lease>> lease = jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 1);
  ASSERT_TRUE(lease.ok() && lease->has_value());
  EXPECT_EQ((*lease)->config.params().at("node"), 64);
  EXPECT_EQ((*lease)->config.options().at("activation"), "relu");
  EXPECT_EQ((*lease)->settings.max_steps(), 10);
}

// Thousands of jobs go in in chunks, and a write queued meanwhile commits
// before the last chunk: a large submit does not hold every lease and
// result behind it. Until complete, the sweep is neither listed nor found.
TEST_F(SweepStoreTest, ThousandsOfJobsGoInInChunksBetweenOtherWrites) {
  const Database::WriterStats before = db_->writer_stats();
  std::promise<absl::StatusOr<int64_t>> created;
  sweeps_->Create(Spec("big"), Jobs(5000), kNow,
                  [&](absl::StatusOr<int64_t> id) { created.set_value(id); });
  std::promise<void> checked;
  int64_t jobs_seen = -1;
  size_t listed = 99;
  int64_t rows = -1;
  db_->Write(
      [&](sqlite3* db) -> absl::Status {
        Statement count(db, "SELECT COUNT(*) FROM jobs");
        absl::StatusOr<bool> row = count.Step();
        if (!row.ok()) return row.status();
        jobs_seen = count.ColumnInt(0);
        return absl::OkStatus();
      },
      [&](absl::Status) {
        listed = sweeps_->List(kNow)->size();
        rows = *ScalarInt(*db_, "SELECT COUNT(*) FROM sweeps");
        checked.set_value();
      });
  std::future<absl::StatusOr<int64_t>> result = created.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  checked.get_future().wait();
  absl::StatusOr<int64_t> id = result.get();
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_LT(jobs_seen, 5000);
  EXPECT_EQ(listed, 0u);  // the row is there, in creation
  EXPECT_EQ(rows, 1);
  EXPECT_GE(db_->writer_stats().transactions - before.transactions, 5000 / 200);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->total_jobs(), 5000);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->state(), v1::SWEEP_RUNNING);
  // index, layer, node, batch and the activation option.
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM job_params"), 5000 * 5);
  EXPECT_EQ(*jobs_->PendingCount("cpu"), 5000);
}

TEST_F(SweepStoreTest, JobParamsArePivotableInSql) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("params"), Jobs(8), kNow);
  ASSERT_TRUE(id.ok()) << id.status();
  // layer = 1 + i % 4 over i = 0..7: two jobs per layer value.
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(*) FROM job_params WHERE key = 'layer' AND "
                       "int_value = 3"),
            2);
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(*) FROM job_params WHERE key = 'activation' AND "
                       "text_value = 'tanh' AND int_value IS NULL"),
            4);
  // A pivot: layer 2 is i = 1 and 5; of those only i = 1 has node 64 << 1.
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(*) FROM job_params l JOIN job_params n "
                       "ON n.job_id = l.job_id AND n.key = 'node' "
                       "WHERE l.key = 'layer' AND l.int_value = 2 AND n.int_value = 128"),
            1);
  std::string plan = testing::QueryPlan(
      *db_, "SELECT job_id FROM job_params WHERE key = 'layer' AND int_value = 3");
  EXPECT_NE(plan.find("job_params_key"), std::string::npos) << plan;
}

TEST_F(SweepStoreTest, EqualConfigurationsShareOneConfigRowAcrossSweeps) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("first"), Jobs(8), kNow).ok());
  std::vector<NewJob> again = Jobs(8);
  for (NewJob& job : again) job.config.set_precision("bfloat16");  // not part of a config
  ASSERT_TRUE(sweeps_->CreateSync(Spec("second"), std::move(again), kNow).ok());
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM configs"), 8);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM config_params"), 8 * 5);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM jobs WHERE config_id IS NULL"), 0);
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(DISTINCT a.config_id) FROM jobs a JOIN jobs b "
                       "ON b.ordinal = a.ordinal AND b.sweep_id > a.sweep_id "
                       "WHERE b.config_id = a.config_id"),
            8);
  // Job 5: layer 2, node 256, tanh; keys sorted, options among params.
  EXPECT_EQ(*ScalarText(*db_,
                        "SELECT c.canonical FROM jobs j JOIN configs c ON c.id = j.config_id "
                        "WHERE j.ordinal = 5 LIMIT 1"),
            "fc activation=tanh batch=32 index=5 layer=2 node=256");
  EXPECT_EQ(*ScalarText(*db_,
                        "SELECT text_value FROM config_params cp JOIN jobs j "
                        "ON j.config_id = cp.config_id WHERE j.ordinal = 5 AND "
                        "cp.key = 'activation' LIMIT 1"),
            "tanh");
}

TEST(ConfigCanonicalTest, IsTheFamilyThenEveryParamAndOptionSortedByKey) {
  v1::ModelConfig config;
  config.set_family("rnn");
  (*config.mutable_params())["layer"] = 2;
  (*config.mutable_params())["batch"] = -1;
  (*config.mutable_options())["cell"] = "lstm";
  config.set_precision("float32");
  EXPECT_EQ(ConfigCanonical(config), "rnn batch=-1 cell=lstm layer=2");
  config.clear_params();
  config.clear_options();
  EXPECT_EQ(ConfigCanonical(config), "rnn");
}

TEST_F(SweepStoreTest, ACollidingParamAndOptionIsRejectedWithoutSideEffects) {
  std::vector<NewJob> jobs = Jobs(3);
  (*jobs[2].config.mutable_options())["layer"] = "deep";
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("bad"), std::move(jobs), kNow);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("\"layer\""), std::string::npos) << id.status();
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM sweeps"), 0);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM jobs"), 0);
}

// A sweep a dead process left half created (state 0) is never leased,
// never shown, and deleted with its jobs by the next Create.
TEST_F(SweepStoreTest, AHalfCreatedSweepIsHiddenAndThenDeleted) {
  ASSERT_TRUE(db_->WriteSync([](sqlite3* db) -> absl::Status {
                   return Exec(db,
                               "INSERT INTO sweeps (name, family, device, state, spec, "
                               "created_unix_ms) VALUES ('left', 'fc', 'cpu', 0, x'', 0)");
                 })
                  .ok());
  const int64_t left = *ScalarInt(*db_, "SELECT id FROM sweeps WHERE name = 'left'");
  EXPECT_TRUE(sweeps_->List(kNow)->empty());
  EXPECT_EQ(sweeps_->Get(left, kNow).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sweeps_->CancelSync(left, kNow).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("next"), Jobs(2), kNow);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM sweeps WHERE name = 'left'"), 0);
  EXPECT_EQ(sweeps_->List(kNow)->size(), 1u);
}

TEST_F(SweepStoreTest, JobsWithoutADeviceUseTheSweeps) {
  std::vector<NewJob> jobs = Jobs(2, "");
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("dev", "cuda"), std::move(jobs), kNow);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*jobs_->PendingCount("cuda"), 2);
  EXPECT_EQ(*jobs_->PendingCount("cpu"), 0);
}

TEST_F(SweepStoreTest, ASweepWithoutJobsIsDoneAtOnce) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("empty"), {}, kNow);
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow + 10'000);
  EXPECT_EQ(status->state(), v1::SWEEP_DONE);
  EXPECT_EQ(status->finished_unix_ms(), kNow);
  EXPECT_DOUBLE_EQ(status->elapsed_seconds(), 0.0);
}

TEST_F(SweepStoreTest, GetAndCancelOfAnUnknownSweepAreNotFound) {
  EXPECT_EQ(sweeps_->Get(99, kNow).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sweeps_->CancelSync(99, kNow).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SweepStoreTest, ListReturnsEverySweepInCreationOrder) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("a"), Jobs(2), kNow).ok());
  ASSERT_TRUE(sweeps_->CreateSync(Spec("b", "cuda"), Jobs(3, "cuda"), kNow + 1).ok());
  absl::StatusOr<std::vector<v1::SweepStatus>> list = sweeps_->List(kNow + 1000);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name(), "a");
  EXPECT_EQ((*list)[0].total_jobs(), 2);
  EXPECT_EQ((*list)[1].name(), "b");
  EXPECT_EQ((*list)[1].device(), "cuda");
  EXPECT_EQ((*list)[1].pending_jobs(), 3);
  EXPECT_LT((*list)[0].sweep_id(), (*list)[1].sweep_id());
}

TEST_F(SweepStoreTest, CancelCancelsPendingJobsAndReturnsLiveAttempts) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("c"), Jobs(3), kNow);
  ASSERT_TRUE(id.ok());
  absl::StatusOr<std::optional<Lease>> lease =
      jobs_->LeaseNextSync("cpu", "worker-1", kNow, kNow + 15'000);
  ASSERT_TRUE(lease.ok() && lease->has_value());

  absl::StatusOr<std::vector<SweepStore::LiveAttempt>> live = sweeps_->CancelSync(*id, kNow + 50);
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].job_id, (*lease)->job_id);
  EXPECT_EQ((*live)[0].attempt_id, (*lease)->attempt_id);
  EXPECT_EQ((*live)[0].worker_id, "worker-1");

  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(*id, kNow + 999);
  EXPECT_EQ(status->state(), v1::SWEEP_CANCELLED);
  EXPECT_EQ(status->cancelled_jobs(), 2);
  EXPECT_EQ(status->leased_jobs(), 1);
  EXPECT_EQ(status->pending_jobs(), 0);
  EXPECT_EQ(status->finished_unix_ms(), kNow + 50);
  EXPECT_FALSE(jobs_->LeaseNextSync("cpu", "worker-2", kNow, kNow + 1)->has_value());
  EXPECT_EQ(*jobs_->PendingCount("cpu"), 0);

  // Cancelling again is harmless and still names the running attempt.
  live = sweeps_->CancelSync(*id, kNow + 60);
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(live->size(), 1u);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->finished_unix_ms(), kNow + 50);

  // The lost worker's job ends cancelled, not pending.
  EXPECT_EQ(*jobs_->ReleaseSync((*lease)->attempt_id, "worker lost", kNow + 70, 3),
            v1::JOB_CANCELLED);
  status = sweeps_->Get(*id, kNow);
  EXPECT_EQ(status->cancelled_jobs(), 3);
  EXPECT_EQ(status->state(), v1::SWEEP_CANCELLED);
}

TEST_F(SweepStoreTest, CancellingAFinishedSweepKeepsItDone) {
  absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec("d"), Jobs(1), kNow);
  ASSERT_TRUE(id.ok());
  absl::StatusOr<std::optional<Lease>> lease = jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 1);
  ASSERT_TRUE(lease.ok() && lease->has_value());
  ASSERT_EQ(*jobs_->ReleaseSync((*lease)->attempt_id, "expired", kNow + 5, 1), v1::JOB_FAILED);
  ASSERT_EQ(sweeps_->Get(*id, kNow)->state(), v1::SWEEP_DONE);
  absl::StatusOr<std::vector<SweepStore::LiveAttempt>> live = sweeps_->CancelSync(*id, kNow + 9);
  ASSERT_TRUE(live.ok());
  EXPECT_TRUE(live->empty());
  EXPECT_EQ(sweeps_->Get(*id, kNow)->state(), v1::SWEEP_DONE);
  EXPECT_EQ(sweeps_->Get(*id, kNow)->failed_jobs(), 1);
}

TEST_F(SweepStoreTest, AsyncCreateCallsBackAfterCommit) {
  std::promise<absl::StatusOr<int64_t>> created;
  sweeps_->Create(Spec("async"), Jobs(4), kNow, [&](absl::StatusOr<int64_t> id) {
    // Runs after commit: a reader already sees the sweep.
    if (id.ok()) {
      EXPECT_EQ(sweeps_->Get(*id, kNow)->total_jobs(), 4);
    }
    created.set_value(id);
  });
  std::future<absl::StatusOr<int64_t>> result = created.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(result.get().ok());
}

}  // namespace
}  // namespace paradnn::db
