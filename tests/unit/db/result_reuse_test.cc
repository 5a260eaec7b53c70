// Reusing results across sweeps (db/result_reuse.h): a later sweep's job
// takes an earlier sweep's result of the same configuration only on a
// platform of the same fingerprint, with the same harness and measurement
// settings, unless it asked for fresh measurements.
#include "db/result_reuse.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "db/budget_store.h"
#include "db/fleet_activity.h"
#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "db/worker_store.h"
#include "tests/unit/db/test_db.h"

// In the fixtures' namespace (tests/unit/db/test_db.h): its builders need no
// using-list.
namespace paradnn::db::testing {
namespace {

constexpr char kHarness[] = "libtorch/timing-1";

class ResultReuseTest : public StoresTest {
 protected:
  void SetUp() override {
    StoresTest::SetUp();
    platform_a_ = UpsertPlatform(CpuPlatform("fp-a", "host-a"));
    platform_b_ = UpsertPlatform(CpuPlatform("fp-b", "host-b"));
    Connect("measurer", platform_a_, kHarness);
  }

  void Connect(const std::string& worker, int64_t platform_id, const std::string& harness,
               const std::string& trust_domain = "") {
    workers_->Connected(worker, "cpu", "host", platform_id, harness, trust_domain, kNow);
    Flush(*db_);
  }

  // Runs every pending job as `worker` on `platform_id`, each measured with
  // `steps` samples (median `median_s`); returns the leases that ran (not
  // the reused ones).
  std::vector<Lease> RunAll(const std::string& worker, int64_t platform_id, int steps = 4,
                            double median_s = 0.01) {
    std::vector<Lease> ran;
    for (;;) {
      absl::StatusOr<std::optional<Lease>> lease =
          jobs_->LeaseNextSync("cpu", worker, kNow + 10, kNow + 60'000);
      EXPECT_TRUE(lease.ok()) << lease.status();
      if (!lease.ok() || !HasJob(*lease)) break;
      v1::Measurement m = OkMeasurement(steps);
      m.mutable_stats()->set_median_s(median_s);
      m.mutable_stats()->set_ci95_rel(0.02);
      *m.mutable_config() = (*lease)->config;
      EXPECT_TRUE(
          results_
              ->StoreSync((*lease)->job_id, (*lease)->attempt_id, worker, platform_id, m, kNow + 20)
              .ok());
      ran.push_back(**lease);
    }
    return ran;
  }

  // A sweep of `jobs`, with `settings` merged into every job's.
  int64_t Submit(const std::string& name, std::vector<NewJob> jobs,
                 const v1::RunSettings& settings = {}) {
    for (NewJob& job : jobs) job.settings.MergeFrom(settings);
    absl::StatusOr<int64_t> id = sweeps_->CreateSync(Spec(name), std::move(jobs), kNow);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }

  int64_t Count(const std::string& sql) {
    absl::StatusOr<int64_t> n = ScalarInt(*db_, sql.c_str());
    EXPECT_TRUE(n.ok()) << n.status() << " " << sql;
    return n.ok() ? *n : -1;
  }

  int64_t platform_a_ = 0;
  int64_t platform_b_ = 0;
};

TEST_F(ResultReuseTest, ALaterSweepTakesTheResultsItsWorkerCouldReuseAndRunsTheRest) {
  const int64_t first = Submit("first", Jobs(3));
  ASSERT_EQ(RunAll("measurer", platform_a_).size(), 3u);
  // The second sweep has the first's three configurations and two more.
  const int64_t second = Submit("second", Jobs(5));
  Connect("reuser", platform_a_, kHarness);
  const std::vector<Lease> ran = RunAll("reuser", platform_a_, /*steps=*/6);
  ASSERT_EQ(ran.size(), 2u);  // only the two new configurations ran
  for (const Lease& lease : ran) EXPECT_GE(lease.config.params().at("index"), 3);

  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(second, kNow + 100);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::SWEEP_DONE);
  EXPECT_EQ(status->ok_results(), 5);
  EXPECT_EQ(status->reused_results(), 3);

  absl::StatusOr<std::vector<v1::ResultRow>> rows = results_->Query(second, true);
  ASSERT_TRUE(rows.ok());
  absl::StatusOr<std::vector<v1::ResultRow>> originals = results_->Query(first, true);
  ASSERT_TRUE(originals.ok());
  for (const v1::ResultRow& row : *rows) {
    const int64_t index = row.config().params().at("index");
    if (index >= 3) {
      EXPECT_EQ(row.reused_from_job_id(), 0);
      EXPECT_EQ(row.worker_id(), "reuser");
      EXPECT_EQ(row.measurement().step_seconds_size(), 6);
      continue;
    }
    // A copy of the first sweep's result: its job, who measured it, where,
    // with what harness, its samples.
    const v1::ResultRow& original = (*originals)[static_cast<size_t>(index)];
    EXPECT_EQ(row.reused_from_job_id(), original.job_id());
    EXPECT_EQ(row.worker_id(), "measurer");
    EXPECT_EQ(row.platform_fingerprint(), "fp-a");
    EXPECT_EQ(row.harness(), kHarness);
    EXPECT_EQ(row.measurement().step_seconds_size(), 4);
    EXPECT_EQ(row.measurement().examples_per_sec(), original.measurement().examples_per_sec());
  }
  // A reused attempt did no work: fleet activity leaves it out.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts WHERE outcome = 'reused'"), 3);
  absl::StatusOr<FleetActivity> activity =
      ReadFleetActivity(*db_, second, /*window_seconds=*/3600, kNow + 100);
  ASSERT_TRUE(activity.ok()) << activity.status();
  EXPECT_EQ(activity->attempts.size(), 2u);
}

TEST_F(ResultReuseTest, OnlyTheSameFingerprintAndHarnessReuse) {
  Submit("first", Jobs(2));
  ASSERT_EQ(RunAll("measurer", platform_a_).size(), 2u);

  Submit("other platform", Jobs(2));
  Connect("elsewhere", platform_b_, kHarness);
  EXPECT_EQ(RunAll("elsewhere", platform_b_).size(), 2u);

  Submit("other harness", Jobs(2));
  Connect("jax", platform_a_, "jax/timing-1");
  EXPECT_EQ(RunAll("jax", platform_a_).size(), 2u);

  Submit("older worker", Jobs(2));
  Connect("old", platform_a_, "");  // no harness: never reuses
  EXPECT_EQ(RunAll("old", platform_a_).size(), 2u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE reused_from_job_id IS NOT NULL"), 0);
}

TEST_F(ResultReuseTest, FreshOrOtherMeasurementSettingsMeasureAgain) {
  Submit("first", Jobs(2));
  ASSERT_EQ(RunAll("measurer", platform_a_).size(), 2u);

  v1::RunSettings fresh;
  fresh.set_fresh(true);
  Submit("fresh", Jobs(2), fresh);
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 2u);

  v1::RunSettings other_ci;
  other_ci.set_ci(0.005);
  Submit("tighter ci", Jobs(2), other_ci);
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 2u);

  // What only schedules a job (its timeout, a budget) does not matter.
  v1::RunSettings scheduling;
  scheduling.set_timeout_seconds(900);
  Submit("longer timeout", Jobs(2), scheduling);
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 0u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE reused_from_job_id IS NOT NULL"), 2);
}

TEST_F(ResultReuseTest, SuspectAndFailedResultsAreNotReused) {
  Submit("first", Jobs(2));
  for (int k = 0; k < 2; ++k) {
    absl::StatusOr<std::optional<Lease>> lease =
        jobs_->LeaseNextSync("cpu", "measurer", kNow, kNow + 60'000);
    ASSERT_TRUE(lease.ok() && HasJob(*lease));
    v1::Measurement m = OkMeasurement(3, k == 0 ? v1::OK : v1::OOM);
    if (k == 0) m.add_suspect("another process used 80 % of a core");
    ASSERT_TRUE(results_
                    ->StoreSync((*lease)->job_id, (*lease)->attempt_id, "measurer", platform_a_, m,
                                kNow + 5)
                    .ok());
  }
  Submit("second", Jobs(2));
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 2u);
}

TEST_F(ResultReuseTest, ABudgetedSweepReleasesWhatItCanReuseBeforeItsDesign) {
  Submit("first", Jobs(3));
  ASSERT_EQ(RunAll("measurer", platform_a_).size(), 3u);
  v1::RunSettings budget;  // a budgeted sweep's jobs are created held
  budget.set_budget_seconds(60);
  const int64_t budgeted = Submit("budgeted", Jobs(6), budget);
  BudgetStore budgets(db_.get());
  absl::StatusOr<std::optional<int64_t>> released = budgets.ReleaseReusableSync(budgeted, kNow);
  ASSERT_TRUE(released.ok()) << released.status();
  ASSERT_TRUE(released->has_value());
  EXPECT_EQ(**released, 3);
  // The released three take their results at the next lease; nothing runs.
  EXPECT_TRUE(RunAll("measurer", platform_a_).empty());
  absl::StatusOr<v1::SweepStatus> status = sweeps_->Get(budgeted, kNow + 100);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->reused_results(), 3);
  EXPECT_EQ(status->held_jobs(), 3);

  // No connected worker with a harness: nothing to match against yet.
  workers_->Disconnected("measurer", kNow + 200);
  Flush(*db_);
  released = budgets.ReleaseReusableSync(budgeted, kNow + 300);
  ASSERT_TRUE(released.ok());
  EXPECT_FALSE(released->has_value());
}

// A worker of another trust domain (a token bound to `evil-*`) measured
// the configurations first, on the fleet's fingerprint: the fleet measures
// them itself, and the other domain takes nothing of the fleet's either.
TEST_F(ResultReuseTest, ResultsAreReusedOnlyWithinTheirTrustDomain) {
  Connect("evil-1", platform_a_, kHarness, "evil-*");
  Submit("poisoned", Jobs(3));
  ASSERT_EQ(RunAll("evil-1", platform_a_, 4, /*median_s=*/1e-9).size(), 3u);
  Submit("fleet's", Jobs(3));
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 3u) << "nothing of evil-1's reused";
  Submit("evil again", Jobs(3));
  EXPECT_EQ(RunAll("evil-1", platform_a_).size(), 0u) << "its own domain's results, reused";
  Submit("fleet again", Jobs(3));
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 0u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE trust_domain = 'evil-*'"), 6);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results r JOIN jobs j ON j.id = r.job_id "
                  "JOIN sweeps s ON s.id = j.sweep_id WHERE s.name = 'fleet again' "
                  "AND r.worker_id = 'measurer' AND r.reused_from_job_id IS NOT NULL"),
            3);
}

// Spot checks on every reuse (DatabaseOptions.reuse_spot_check_every 1).
class SpotCheckTest : public ResultReuseTest {
 protected:
  DatabaseOptions Options() const override {
    DatabaseOptions options;
    options.reuse_spot_check_every = every_;
    return options;
  }
  // Opens the file again with spot checks on one in `every` reuses.
  void Reopen(int every) {
    every_ = every;
    StoresTest::Reopen();
  }
  int every_ = 1;
};

// A worker of the fleet's own domain made its results up (1e-9 s a step).
// Each re-measurement of one disputes it (neither side is reused); once two
// honest workers have contradicted it, it is refused as a source and all
// its results are marked suspect, and the honest measurements are what
// later sweeps reuse.
TEST_F(SpotCheckTest, ASourceTwoOthersContradictIsRefused) {
  Connect("liar", platform_a_, kHarness);
  Submit("made up", Jobs(3));
  ASSERT_EQ(RunAll("liar", platform_a_, 4, /*median_s=*/1e-9).size(), 3u);
  Submit("checked once", Jobs(1));
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 1u) << "measured again, not reused";
  Connect("other", platform_a_, kHarness);
  Submit("checked twice", Jobs(2));
  // Job 0's two results are disputed (none to reuse); job 1 reuses the
  // liar's, measured again: the second honest worker to disagree.
  EXPECT_EQ(RunAll("other", platform_a_).size(), 2u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM spot_checks WHERE verdict LIKE 'disagrees%'"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE worker_id = 'liar' "
                  "AND suspect LIKE '%spot checks: its results and 2 other workers%'"),
            3);
  EXPECT_NE(ScalarText(*db_, "SELECT reuse_refused FROM workers WHERE id = 'liar'").value_or(""),
            "");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE reuse_refused != ''"), 1)
      << "the honest workers stay sources";

  ASSERT_NO_FATAL_FAILURE(Reopen(/*every=*/0));
  Submit("later", Jobs(3));
  EXPECT_EQ(RunAll("measurer", platform_a_).size(), 1u) << "job 0's results are disputed";
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results r JOIN jobs j ON j.id = r.job_id "
                  "JOIN sweeps s ON s.id = j.sweep_id WHERE s.name = 'later' "
                  "AND r.worker_id = 'other' AND r.reused_from_job_id IS NOT NULL"),
            2)
      << "the honest re-measurements are what is reused";
}

// The other way round: a liar measuring honest results again disputes them,
// but one liar is one counterpart: no honest worker is refused.
TEST_F(SpotCheckTest, ALiarAloneCannotGetAnHonestWorkerRefused) {
  Submit("honest", Jobs(3));
  ASSERT_EQ(RunAll("measurer", platform_a_).size(), 3u);
  Connect("liar", platform_a_, kHarness);
  Submit("lies", Jobs(3));
  EXPECT_EQ(RunAll("liar", platform_a_, 4, /*median_s=*/1e-9).size(), 3u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM spot_checks WHERE verdict LIKE 'disagrees%'"), 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE reuse_refused != ''"), 0);
}

TEST_F(SpotCheckTest, AReMeasurementThatAgreesKeepsTheSource) {
  Submit("first", Jobs(2));
  ASSERT_EQ(RunAll("measurer", platform_a_, 4, /*median_s=*/0.010).size(), 2u);
  Submit("checked", Jobs(2));
  Connect("other", platform_a_, kHarness);
  EXPECT_EQ(RunAll("other", platform_a_, 4, /*median_s=*/0.012).size(), 2u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM spot_checks WHERE verdict LIKE 'agrees%'"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE reuse_refused != ''"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE COALESCE(suspect, '') != ''"), 0);
}

TEST(SpotCheckDue, DrawsOneInEveryOfAnyRunOfIds) {
  int drawn = 0;
  constexpr int kIds = 200'000;
  for (int64_t id = 1; id <= kIds; ++id) drawn += internal::SpotCheckDue(id, 20) ? 1 : 0;
  // Binomial(200,000, 1/20): mean 10,000, sd 97.5; 5 sd either way.
  EXPECT_NEAR(drawn, kIds / 20, 500);
  EXPECT_TRUE(internal::SpotCheckDue(7, 1));
  EXPECT_FALSE(internal::SpotCheckDue(7, 0));
}

TEST(SpotCheckAgrees, WithinOneAndAHalfOrThreeIntervals) {
  using internal::SpotCheckAgrees;
  using F = internal::SpotCheckFigures;
  EXPECT_TRUE(SpotCheckAgrees(F{1.0, 0.01, 0}, F{1.4, 0.01, 0}));
  EXPECT_TRUE(SpotCheckAgrees(F{1.4, 0.01, 0}, F{1.0, 0.01, 0}));
  EXPECT_FALSE(SpotCheckAgrees(F{1.0, 0.01, 0}, F{1.6, 0.01, 0}));
  EXPECT_FALSE(SpotCheckAgrees(F{1.6, 0.01, 0}, F{1.0, 0.01, 0}));
  // Wide intervals (0.2 + 0.2): up to 1 + 3 x 0.4 = 2.2x.
  EXPECT_TRUE(SpotCheckAgrees(F{1.0, 0.2, 0}, F{2.1, 0.2, 0}));
  EXPECT_FALSE(SpotCheckAgrees(F{1.0, 0.2, 0}, F{2.3, 0.2, 0}));
  EXPECT_FALSE(SpotCheckAgrees(F{1e-9, 0.01, 1e9}, F{0.01, 0.01, 100}));
  // A step time one has and the other lacks: made up.
  EXPECT_FALSE(SpotCheckAgrees(F{1e-9, 0, 1e9}, F{0, 0, 123}));
  // No step time on either side (a harness family): the throughputs.
  EXPECT_TRUE(SpotCheckAgrees(F{0, 0, 123}, F{0, 0, 130}));
  EXPECT_FALSE(SpotCheckAgrees(F{0, 0, 1e9}, F{0, 0, 123}));
  EXPECT_TRUE(SpotCheckAgrees(F{}, F{})) << "nothing claimed, nothing to contradict";
}

TEST(SameMeasurementSettings, IgnoresOnlyWhatSchedulesAJob) {
  v1::RunSettings a;
  a.set_ci(0.02);
  a.set_min_steps(5);
  v1::RunSettings b = a;
  b.set_budget_seconds(60);
  b.set_timeout_seconds(30);
  b.set_fresh(true);
  b.set_seed(7);  // every sweep without one draws its own
  EXPECT_TRUE(internal::SameMeasurementSettings(a, b));
  b.set_min_steps(6);
  EXPECT_FALSE(internal::SameMeasurementSettings(a, b));
}

}  // namespace
}  // namespace paradnn::db::testing
