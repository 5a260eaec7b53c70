#include "server/budget_planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "db/budget_store.h"
#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::server {
namespace {

using db::testing::DbTest;
using db::testing::ScalarInt;

constexpr double kBudgetSeconds = 60;
constexpr int64_t kJobMs = 5000;  // what each measurement takes on the fake clock

// A known world: an FC step at the platform's roof plus 0.1 ms.
double TrueSeconds(const v1::ModelConfig& c) {
  auto p = [&](const char* key) { return static_cast<double>(c.params().at(key)); };
  const double macs =
      p("input") * p("node") + (p("layer") - 1) * p("node") * p("node") + p("node") * p("output");
  return 6 * macs * p("batch") / 1e11 + 1e-4;
}

class BudgetPlannerTest : public DbTest {
 protected:
  void SetUp() override {
    DbTest::SetUp();
    v1::Platform platform;
    platform.set_fingerprint("fp-budget");
    platform.set_device_kind("cpu");
    v1::MatmulRoof* roof = platform.add_matmul_roofs();
    roof->set_dtype("float32");
    roof->set_flops_per_sec(1e11);
    v1::BandwidthPoint* point = platform.add_bandwidth();
    point->set_kernel("copy");
    point->set_bytes(1 << 26);
    point->set_bytes_per_sec(1e10);
    absl::StatusOr<int64_t> id = db::PlatformStore(db_.get()).UpsertSync(platform);
    ASSERT_TRUE(id.ok()) << id.status();
    platform_id_ = *id;
  }

  // 4 layers x 6 nodes x 2 batches = 48 held jobs.
  int64_t CreateSweep(double budget_seconds) {
    v1::SweepSpec spec = db::testing::Spec("budgeted");
    spec.mutable_run()->set_budget_seconds(budget_seconds);
    std::vector<db::NewJob> jobs;
    for (int layer : {1, 2, 4, 8}) {
      for (int node : {16, 32, 64, 128, 256, 512}) {
        for (int batch : {8, 32}) {
          db::NewJob& job = jobs.emplace_back();
          job.config.set_family("fc");
          auto& params = *job.config.mutable_params();
          params["layer"] = layer, params["node"] = node, params["batch"] = batch;
          params["input"] = 64, params["output"] = 8;
          job.config.set_precision("float32");
          job.config.set_optimizer("rmsprop");
          job.settings = spec.run();
          job.device = "cpu";
          job.ordinal = static_cast<int32_t>(jobs.size());
        }
      }
    }
    absl::StatusOr<int64_t> sweep =
        db::SweepStore(db_.get()).CreateSync(spec, jobs, clock_.NowUnixMs());
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    return sweep.ok() ? *sweep : 0;
  }

  int64_t Count(const std::string& sql) {
    absl::StatusOr<int64_t> n = ScalarInt(*db_, sql.c_str());
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? *n : -1;
  }
  int64_t InState(v1::JobState state) {
    return Count("SELECT COUNT(*) FROM jobs WHERE state = " + std::to_string(state));
  }

  // Leases the next pending job, lets kJobMs pass and stores its true time;
  // false when nothing is pending.
  bool MeasureOne(int64_t job_ms = kJobMs) {
    absl::StatusOr<std::optional<db::Lease>> lease = db::JobStore(db_.get()).LeaseNextSync(
        "cpu", "w", clock_.NowUnixMs(), clock_.NowUnixMs() + 600'000);
    EXPECT_TRUE(lease.ok()) << lease.status();
    if (!lease.ok() || !lease->has_value()) return false;
    clock_.Advance(job_ms);
    const double t = TrueSeconds((*lease)->config);
    v1::Measurement m;
    m.set_outcome(v1::OK);
    m.set_device("cpu");
    for (int i = 0; i < 3; ++i) m.add_step_seconds(t);
    m.mutable_stats()->set_steps(3);
    m.mutable_stats()->set_median_s(t);
    m.set_timed_seconds(3 * t);
    m.set_build_seconds(1);
    EXPECT_TRUE(db::ResultStore(db_.get())
                    .StoreSync((*lease)->job_id, (*lease)->attempt_id, "w", platform_id_, m,
                               clock_.NowUnixMs())
                    .ok());
    return true;
  }

  BudgetStepSummary MustStep(BudgetPlanner& planner) {
    absl::StatusOr<BudgetStepSummary> step = planner.Step();
    EXPECT_TRUE(step.ok()) << step.status();
    return step.ok() ? *step : BudgetStepSummary{};
  }

  // One worker, and one job pending at a time (no lookahead), as the
  // tests count releases.
  BudgetPlannerOptions OneWorker() {
    BudgetPlannerOptions options;
    options.workers_of = [](const std::string& device) { return device == "cpu" ? 1 : 0; };
    options.lookahead = 0;
    return options;
  }

  common::FakeClock clock_{kNow};
  int64_t platform_id_ = 0;
};

TEST_F(BudgetPlannerTest, DesignThenMostUncertainThenPredictionsWhenTheBudgetEnds) {
  const int64_t sweep = CreateSweep(kBudgetSeconds);
  ASSERT_EQ(InState(v1::JOB_HELD), 48);
  BudgetPlanner planner(db_.get(), &clock_, OneWorker());

  // The design: 2(d+1) = 8 points over (batch, layer, node), before any
  // measurement and before the budget starts counting.
  EXPECT_EQ(MustStep(planner).released, 8);
  EXPECT_EQ(InState(v1::JOB_PENDING), 8);
  EXPECT_EQ(MustStep(planner).released, 0) << "pending jobs are not released twice";
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(MeasureOne());
  const int64_t first_start = Count("SELECT MIN(started_unix_ms) FROM attempts");
  const int64_t deadline = first_start + static_cast<int64_t>(kBudgetSeconds * 1000);

  // Then one at a time for the one worker, each chosen by the model.
  while (clock_.NowUnixMs() < deadline) {
    const BudgetStepSummary step = MustStep(planner);
    EXPECT_EQ(step.predicted, 0);
    if (step.released == 0) break;  // nothing left fits in the budget
    EXPECT_EQ(step.released, 1);
    ASSERT_TRUE(MeasureOne());
  }
  EXPECT_LE(Count("SELECT MAX(started_unix_ms) FROM attempts"), deadline)
      << "no measurement starts after the budget";
  clock_.Advance(std::max<int64_t>(0, deadline - clock_.NowUnixMs()));

  const int64_t measured = Count("SELECT COUNT(*) FROM results");
  EXPECT_EQ(measured, 12) << "8 design points, then one per 5 s until 60 s";
  const BudgetStepSummary end = MustStep(planner);
  EXPECT_EQ(end.predicted, 48 - measured);
  EXPECT_EQ(InState(v1::JOB_HELD), 0);
  EXPECT_EQ(InState(v1::JOB_PREDICTED), 48 - measured);
  EXPECT_EQ(Count("SELECT state FROM sweeps WHERE id = " + std::to_string(sweep)), v1::SWEEP_DONE);
  EXPECT_EQ(MustStep(planner).predicted, 0) << "predicted once";

  absl::StatusOr<std::vector<v1::ResultRow>> rows = db::ResultStore(db_.get()).Query(sweep, false);
  ASSERT_TRUE(rows.ok());
  int near = 0, predicted = 0;
  for (const v1::ResultRow& row : *rows) {
    if (row.state() != v1::JOB_PREDICTED) {
      EXPECT_FALSE(row.has_prediction());
      continue;
    }
    ++predicted;
    EXPECT_FALSE(row.has_measurement());
    const v1::PredictedStep& p = row.prediction();
    EXPECT_EQ(p.model(), kPredictionModelVersion);
    EXPECT_EQ(p.measurements(), measured);
    EXPECT_EQ(p.platform_fingerprint(), "fp-budget");
    EXPECT_LE(p.step_seconds_low(), p.step_seconds());
    EXPECT_GE(p.step_seconds_high(), p.step_seconds());
    EXPECT_NEAR(p.examples_per_sec(), row.config().params().at("batch") / p.step_seconds(), 1e-6);
    if (std::fabs(p.step_seconds() / TrueSeconds(row.config()) - 1) < 0.25) ++near;
  }
  EXPECT_EQ(predicted, 48 - measured);
  EXPECT_GE(near, predicted * 9 / 10) << "the prior is the world here, up to the 0.1 ms";
}

TEST_F(BudgetPlannerTest, PendingJobsAtTheEndAreHeldAgainAndTooFewMeasurementsBuyMore) {
  const int64_t sweep = CreateSweep(4);
  BudgetPlanner planner(db_.get(), &clock_, OneWorker());
  EXPECT_EQ(MustStep(planner).released, 8);
  ASSERT_TRUE(MeasureOne());  // 5 s: past the 4 s budget after one result
  const BudgetStepSummary end = MustStep(planner);
  EXPECT_EQ(end.reheld, 7) << "the design's untaken jobs go back";
  EXPECT_EQ(end.predicted, 0) << "one measurement predicts nothing";
  EXPECT_EQ(end.released, 2) << "the fewest that a model needs";
  ASSERT_TRUE(MeasureOne());
  ASSERT_TRUE(MeasureOne());
  EXPECT_EQ(MustStep(planner).predicted, 45);
  EXPECT_EQ(Count("SELECT state FROM sweeps WHERE id = " + std::to_string(sweep)), v1::SWEEP_DONE);
}

TEST_F(BudgetPlannerTest, KeepsOneJobMoreThanWorkersPendingSoThatNoneWaitsForTheRefit) {
  CreateSweep(kBudgetSeconds);
  BudgetPlannerOptions options = OneWorker();
  options.lookahead = 1;
  BudgetPlanner planner(db_.get(), &clock_, options);
  EXPECT_EQ(MustStep(planner).released, 8);  // the design, whatever the lookahead
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(MeasureOne());
  EXPECT_EQ(MustStep(planner).released, 2) << "one for the worker, one waiting";
  EXPECT_EQ(InState(v1::JOB_PENDING), 2);
  ASSERT_TRUE(MeasureOne());
  EXPECT_EQ(MustStep(planner).released, 1);
  EXPECT_EQ(InState(v1::JOB_PENDING), 2);
}

// The planner's clock: every read is `plan_ms` later, so that a plan (two
// reads: its start and its end) takes that long.
class PlanTakesTime : public common::Clock {
 public:
  PlanTakesTime(common::FakeClock* clock, int64_t plan_ms) : clock_(clock), plan_ms_(plan_ms) {}
  int64_t NowUnixMs() const override {
    clock_->Advance(plan_ms_);
    return clock_->NowUnixMs();
  }

 private:
  common::FakeClock* clock_;
  int64_t plan_ms_;
};

// Four workers take the 8-job design in 0.4 s while a plan takes 0.25 s
// (0.9 s from plan to plan: 8.9 jobs/s).
class PacedBudgetPlannerTest : public BudgetPlannerTest {
 protected:
  // What the plan after the design releases, with a lookahead of at least 1
  // and at most `max_lookahead`; `then` runs one more plan.
  void DesignThenPlan(int max_lookahead, int64_t* released, int64_t* then) {
    CreateSweep(kBudgetSeconds);
    BudgetPlannerOptions options;
    options.workers_of = [](const std::string&) { return 4; };
    options.lookahead = 1;
    options.max_lookahead = max_lookahead;
    PlanTakesTime plan_clock(&clock_, 250);
    BudgetPlanner planner(db_.get(), &plan_clock, options);
    EXPECT_EQ(MustStep(planner).released, 8);  // the design
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(MeasureOne(/*job_ms=*/50));
    *released = MustStep(planner).released;
    *then = MustStep(planner).released;
  }
};

TEST_F(PacedBudgetPlannerTest, KeepsPendingWhatTheWorkersTakeWhileTwoPlansRun) {
  int64_t released = 0, then = 0;
  ASSERT_NO_FATAL_FAILURE(DesignThenPlan(/*max_lookahead=*/256, &released, &then));
  // One per worker, and what they take during two plans: 2 x 8.9/s x 0.25 s
  // = 5, not the configured 1.
  EXPECT_EQ(released, 4 + 5);
  EXPECT_EQ(then, 0) << "nothing taken: nothing to plan";
}

TEST_F(PacedBudgetPlannerTest, TheLookaheadStopsAtItsCeiling) {
  int64_t released = 0, then = 0;
  ASSERT_NO_FATAL_FAILURE(DesignThenPlan(/*max_lookahead=*/2, &released, &then));
  EXPECT_EQ(released, 4 + 2);
}

// A design is a share of the grid up to max_design: on a 100,000-point grid
// 5 % was 5,000 blind jobs and half a minute of the planner.
TEST_F(BudgetPlannerTest, TheDesignIsAShareOfTheGridUpToItsCap) {
  CreateSweep(kBudgetSeconds);
  BudgetPlannerOptions options = OneWorker();
  options.design_share = 0.5;  // 24 of the 48
  options.max_design = 10;
  BudgetPlanner planner(db_.get(), &clock_, options);
  EXPECT_EQ(MustStep(planner).released, 10);
  EXPECT_EQ(InState(v1::JOB_PENDING), 10);
}

TEST_F(BudgetPlannerTest, AnUnbudgetedSweepIsLeftAlone) {
  v1::SweepSpec spec = db::testing::Spec("plain");
  ASSERT_TRUE(db::SweepStore(db_.get()).CreateSync(spec, db::testing::Jobs(4), kNow).ok());
  EXPECT_EQ(InState(v1::JOB_PENDING), 4);
  BudgetPlanner planner(db_.get(), &clock_, OneWorker());
  const BudgetStepSummary step = MustStep(planner);
  EXPECT_EQ(step.released + step.predicted + step.reheld, 0);
  EXPECT_EQ(InState(v1::JOB_PENDING), 4);
}

TEST_F(BudgetPlannerTest, EstimatesTheTimeLeftFromTheModelWithinTheBudget) {
  const int64_t sweep = CreateSweep(kBudgetSeconds);
  BudgetPlanner planner(db_.get(), &clock_, OneWorker());
  planner.EstimateTimesLeft();
  EXPECT_FALSE(planner.SecondsLeft(sweep).has_value()) << "no model before 3 measurements";
  EXPECT_EQ(MustStep(planner).released, 8);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(MeasureOne());

  // The 40 held jobs by the model, in full: each its group's fixed seconds
  // plus its timed steps at the world's step time (which the model learned).
  absl::StatusOr<std::vector<v1::ResultRow>> rows = db::ResultStore(db_.get()).Query(sweep, false);
  ASSERT_TRUE(rows.ok());
  absl::StatusOr<SweepPredictor> predictor = SweepPredictor::Of(*db_, *rows);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  ASSERT_EQ(predictor->groups().size(), 1u);
  const SweepPredictor::Group& group = predictor->groups()[0];
  EXPECT_NEAR(group.timed_steps, 3, 1e-9);
  double truth = 0;
  for (const v1::ResultRow& row : *rows) {
    if (row.state() == v1::JOB_HELD) truth += group.fixed_seconds + 3 * TrueSeconds(row.config());
  }
  std::optional<double> left = ModelSecondsLeft(*predictor, 0, 1, /*held_too=*/true);
  ASSERT_TRUE(left.has_value());
  EXPECT_NEAR(*left / truth, 1, 0.05) << *left << " vs " << truth;
  EXPECT_NEAR(*ModelSecondsLeft(*predictor, 0, 4, true), *left / 4, 1e-9) << "four workers";
  EXPECT_EQ(*ModelSecondsLeft(*predictor, 0, 1, /*held_too=*/false), 0) << "nothing pending";

  // A budgeted sweep ends with its budget: 60 s from the first lease, of
  // which the 8 measurements took 40. Its plan (each step) records it.
  ASSERT_GT(truth, 20);
  MustStep(planner);
  ASSERT_TRUE(planner.SecondsLeft(sweep).has_value());
  EXPECT_NEAR(*planner.SecondsLeft(sweep), kBudgetSeconds - 8 * kJobMs / 1000.0, 1e-6);
  clock_.Advance(5000);
  EXPECT_NEAR(*planner.SecondsLeft(sweep), kBudgetSeconds - 8 * kJobMs / 1000.0 - 5, 1e-6);
}

}  // namespace
}  // namespace paradnn::server
