// Repeats to a target interval (server/repeat_rounds.h): the interval of a
// configuration's mean by simulation and against a hand computation, the
// round planning on hand-made rows, and the whole loop on a real database
// with the budget planner releasing and dropping repeats.
#include "server/repeat_rounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "boost/math/distributions/students_t.hpp"
#include "common/clock.h"
#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "model/sweep.h"
#include "server/budget_planner.h"
#include "server/sweep_planner.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::server {
namespace {

// Two configurations give no prior (fewer than 3 spreads): each one's own
// t interval on its log step times.
TEST(EstimateRepeatIntervalsTest, WithoutAPriorEachHasItsOwnTInterval) {
  const std::vector<std::vector<double>> steps = {{1.0, 1.1, 0.9}, {2.0}};
  const std::vector<v1::RepeatInterval> intervals = EstimateRepeatIntervals(steps);
  ASSERT_EQ(intervals.size(), 2u);
  const double logs[] = {0, std::log(1.1), std::log(0.9)};
  const double mean = (logs[0] + logs[1] + logs[2]) / 3;
  double squares = 0;
  for (double l : logs) squares += (l - mean) * (l - mean);
  const boost::math::students_t t(2);
  const double quantile = boost::math::quantile(boost::math::complement(t, 0.025));
  EXPECT_EQ(intervals[0].runs(), 3);
  EXPECT_NEAR(intervals[0].mean_step_s(), std::exp(mean), 1e-12);
  EXPECT_NEAR(intervals[0].half_width_rel(), std::expm1(quantile * std::sqrt(squares / 2 / 3)),
              1e-12);
  EXPECT_FALSE(intervals[0].pooled());
  EXPECT_DOUBLE_EQ(intervals[0].degrees_of_freedom(), 2);
  EXPECT_EQ(intervals[1].runs(), 1);
  EXPECT_DOUBLE_EQ(intervals[1].mean_step_s(), 2.0);
  EXPECT_EQ(intervals[1].half_width_rel(), 0) << "one run: no interval";
}

// 12 configurations of 3 repeats whose true spreads scatter (log sd 0.05
// to 0.2): the moderated interval of the mean holds the true mean 95 % of
// the time, no narrower on average than it must be.
TEST(EstimateRepeatIntervalsTest, CoversTheTrueMeanBySimulation) {
  std::mt19937_64 random(61);
  std::normal_distribution<double> unit(0, 1);
  std::uniform_real_distribution<double> sd_of(0.05, 0.2);
  int covered = 0, total = 0;
  for (int sweep = 0; sweep < 1000; ++sweep) {
    std::vector<std::vector<double>> steps;
    std::vector<double> truth;
    for (int c = 0; c < 12; ++c) {
      const double sd = sd_of(random), level = 0.001 * (1 + c);
      truth.push_back(level);
      std::vector<double>& runs = steps.emplace_back();
      for (int r = 0; r < 3; ++r) runs.push_back(level * std::exp(sd * unit(random)));
    }
    const std::vector<v1::RepeatInterval> intervals = EstimateRepeatIntervals(steps);
    for (size_t c = 0; c < steps.size(); ++c) {
      ASSERT_TRUE(intervals[c].pooled());
      const double w = std::log1p(intervals[c].half_width_rel());
      const double error = std::fabs(std::log(intervals[c].mean_step_s() / truth[c]));
      covered += error <= w ? 1 : 0;
      ++total;
    }
  }
  const double coverage = static_cast<double>(covered) / total;
  std::printf("12 configurations x 3 repeats, log sd 0.05-0.2: coverage %.1f %%\n", 100 * coverage);
  EXPECT_GE(coverage, 0.93);
  EXPECT_LE(coverage, 0.975);
}

v1::ResultRow Row(int64_t job_id, int node, int repeat, v1::JobState state, double step_s = 0) {
  v1::ResultRow row;
  row.set_job_id(job_id);
  row.set_state(state);
  row.set_repeat(repeat);
  row.mutable_config()->set_family("fc");
  (*row.mutable_config()->mutable_params())["node"] = node;
  if (step_s > 0) {
    row.mutable_measurement()->set_outcome(v1::OK);
    row.mutable_measurement()->mutable_stats()->set_median_s(step_s);
  }
  return row;
}

v1::SweepSpec TargetSpec(double target, int repeats) {
  v1::SweepSpec spec;
  spec.mutable_run()->set_target_interval(target);
  spec.set_repeats(repeats);
  return spec;
}

TEST(PlanTargetRoundTest, ReleasesTheNextRepeatOfWhatIsAboveTheTargetAndDropsTheRest) {
  // node 1: steady (reached); node 2: noisy (above); node 3: every run
  // failed; each with two held repeats (3 and 4).
  std::vector<v1::ResultRow> rows;
  int64_t id = 1;
  for (int r = 0; r < 3; ++r) {
    rows.push_back(Row(id++, 1, r, v1::JOB_DONE, 0.010 * (1 + 0.001 * r)));
    rows.push_back(Row(id++, 2, r, v1::JOB_DONE, 0.010 * (1 + 0.4 * r)));
    rows.push_back(Row(id++, 3, r, v1::JOB_DONE));
  }
  for (int r : {4, 3}) {  // out of order: the lower repeat goes first
    for (int node : {1, 2, 3}) rows.push_back(Row(100 * node + r, node, r, v1::JOB_HELD));
  }
  const v1::SweepSpec spec = TargetSpec(0.05, 5);
  TargetRound round = PlanTargetRound(spec, rows, /*budget_over=*/false);
  EXPECT_EQ(round.release, std::vector<int64_t>({203}));
  EXPECT_EQ(round.drop, std::vector<int64_t>({103, 104, 303, 304}))
      << "node 2 keeps its last held repeat for the next round";

  std::vector<v1::ResultRow> rows_in_flight = rows;
  rows_in_flight.push_back(Row(id++, 2, 3, v1::JOB_LEASED));
  round = PlanTargetRound(spec, rows_in_flight, false);
  EXPECT_TRUE(round.release.empty() && round.drop.empty()) << "the round is not over";

  round = PlanTargetRound(spec, rows_in_flight, /*budget_over=*/true);
  EXPECT_TRUE(round.release.empty());
  EXPECT_EQ(round.drop.size(), 6u) << "past the budget every held repeat goes, in flight or not";

  FillRepeatIntervals(spec, /*sweep_running=*/true, &rows);
  EXPECT_EQ(rows[0].repeat_interval().target_status(), "reached");
  EXPECT_LT(rows[0].repeat_interval().half_width_rel(), 0.05);
  EXPECT_DOUBLE_EQ(rows[0].repeat_interval().target(), 0.05);
  EXPECT_EQ(rows[1].repeat_interval().target_status(), "measuring");
  EXPECT_GT(rows[1].repeat_interval().half_width_rel(), 0.05);
  EXPECT_FALSE(rows[2].has_repeat_interval()) << "no OK repeat: no interval";
}

TEST(FillRepeatIntervalsTest, SaysWhyAConfigurationStoppedShortOfTheTarget) {
  std::vector<v1::ResultRow> rows;
  for (int r = 0; r < 3; ++r) rows.push_back(Row(1 + r, 2, r, v1::JOB_DONE, 0.01 * (1 + 0.4 * r)));
  std::vector<v1::ResultRow> capped = rows;
  FillRepeatIntervals(TargetSpec(0.05, 3), /*sweep_running=*/false, &capped);
  EXPECT_EQ(capped[0].repeat_interval().target_status(), "repeat cap");
  std::vector<v1::ResultRow> stopped = rows;
  FillRepeatIntervals(TargetSpec(0.05, 10), false, &stopped);
  EXPECT_EQ(stopped[0].repeat_interval().target_status(), "stopped");
  v1::SweepSpec budgeted = TargetSpec(0.05, 10);
  budgeted.mutable_run()->set_budget_seconds(60);
  FillRepeatIntervals(budgeted, false, &rows);
  EXPECT_EQ(rows[0].repeat_interval().target_status(), "budget ended");
  std::vector<v1::ResultRow> plain = rows;
  FillRepeatIntervals(TargetSpec(0, 3), false, &plain);
  EXPECT_EQ(plain[0].repeat_interval().target_status(), "") << "no target, no status";
  EXPECT_GT(plain[0].repeat_interval().half_width_rel(), 0);
}

// The whole loop on a database: PlanSweep creates 3 rounds pending and the
// rest held; the planner releases repeats of the noisy configurations only,
// round by round, and drops what no one needs, and the sweep finishes.
class TargetSweepTest : public db::testing::DbTest {
 protected:
  void SetUp() override {
    DbTest::SetUp();
    v1::Platform platform;
    platform.set_fingerprint("fp-target");
    platform.set_device_kind("cpu");
    absl::StatusOr<int64_t> id = db::PlatformStore(db_.get()).UpsertSync(platform);
    ASSERT_TRUE(id.ok()) << id.status();
    platform_id_ = *id;
  }

  // Leases and measures every pending job: configuration node's step time
  // is 1 ms x node with a log-normal noise of sd noise_of[node].
  int MeasurePending(std::mt19937_64& random, const std::map<int64_t, double>& noise_of) {
    int measured = 0;
    for (;;) {
      absl::StatusOr<std::optional<db::Lease>> lease =
          db::JobStore(db_.get()).LeaseNextSync("cpu", "w", clock_.NowUnixMs(), 1e15);
      EXPECT_TRUE(lease.ok()) << lease.status();
      if (!lease.ok() || !lease->has_value()) return measured;
      const int64_t node = (*lease)->config.params().at("node");
      std::normal_distribution<double> noise(0, noise_of.at(node));
      const double t = 0.001 * static_cast<double>(node) * std::exp(noise(random));
      v1::Measurement m;
      m.set_outcome(v1::OK);
      m.set_device("cpu");
      m.add_step_seconds(t);
      m.mutable_stats()->set_steps(1);
      m.mutable_stats()->set_median_s(t);
      EXPECT_TRUE(db::ResultStore(db_.get())
                      .StoreSync((*lease)->job_id, (*lease)->attempt_id, "w", platform_id_, m,
                                 clock_.NowUnixMs())
                      .ok());
      ++measured;
    }
  }

  common::FakeClock clock_{kNow};
  int64_t platform_id_ = 0;
};

TEST_F(TargetSweepTest, RepeatsOnlyWhatIsAboveTheTargetUpToTheCap) {
  v1::SweepSpec spec = db::testing::Spec("target");
  for (const char* key : {"input", "output", "batch"}) (*spec.mutable_params())[key].set_value(8);
  (*spec.mutable_params())["layer"].set_value(1);
  for (int node : {1, 2, 3, 4}) {
    (*spec.mutable_params())["node"].mutable_values()->add_values(node);
  }
  spec.mutable_run()->set_target_interval(0.05);
  spec.set_repeats(8);
  absl::StatusOr<PlannedSweep> plan = PlanSweep(spec, 1000, 5);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->jobs.size(), 32u);
  absl::StatusOr<int64_t> sweep =
      db::SweepStore(db_.get()).CreateSync(spec, plan->jobs, clock_.NowUnixMs());
  ASSERT_TRUE(sweep.ok()) << sweep.status();

  // Nodes 1 and 2 steady, 3 a little noisy, 4 far too noisy for 5 %.
  const std::map<int64_t, double> noise_of = {{1, 0.001}, {2, 0.001}, {3, 0.03}, {4, 0.5}};
  std::mt19937_64 random(67);
  BudgetPlanner planner(db_.get(), &clock_, {});
  EXPECT_EQ(MeasurePending(random, noise_of), 12) << "3 rounds of 4 configurations first";
  int rounds = 3;
  for (; rounds < 20; ++rounds) {
    absl::StatusOr<BudgetStepSummary> step = planner.Step();
    ASSERT_TRUE(step.ok()) << step.status();
    if (step->released == 0) break;
    EXPECT_EQ(MeasurePending(random, noise_of), step->released);
  }
  absl::StatusOr<v1::SweepStatus> status =
      db::SweepStore(db_.get()).Get(*sweep, clock_.NowUnixMs());
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->state(), v1::SWEEP_DONE);
  EXPECT_EQ(status->held_jobs(), 0);

  absl::StatusOr<std::vector<v1::ResultRow>> rows = db::ResultStore(db_.get()).Query(*sweep, false);
  ASSERT_TRUE(rows.ok()) << rows.status();
  FillRepeatIntervals(spec, /*sweep_running=*/false, &*rows);
  std::map<int64_t, int> runs_of;
  std::map<int64_t, std::string> status_of;
  for (const v1::ResultRow& row : *rows) {
    const int64_t node = row.config().params().at("node");
    ++runs_of[node];
    status_of[node] = row.repeat_interval().target_status();
    if (status_of[node] == "reached") {
      EXPECT_LE(row.repeat_interval().half_width_rel(), 0.05);
    }
  }
  EXPECT_EQ(runs_of[1], 3);
  EXPECT_EQ(status_of[1], "reached");
  EXPECT_EQ(runs_of[2], 3);
  EXPECT_EQ(runs_of[4], 8);
  EXPECT_EQ(status_of[4], "repeat cap");
  EXPECT_EQ(status->total_jobs(), runs_of[1] + runs_of[2] + runs_of[3] + runs_of[4])
      << "the dropped repeats are gone";
  std::printf("runs per configuration: %d %d %d %d (%s, %s)\n", runs_of[1], runs_of[2], runs_of[3],
              runs_of[4], status_of[3].c_str(), status_of[4].c_str());
}

}  // namespace
}  // namespace paradnn::server
