// The planner of budgeted sweeps (docs/prediction.md), and of sweeps
// repeated to a target interval (server/repeat_rounds.h). A budgeted sweep's
// jobs are created held; each Step, for every sweep still holding jobs:
//
//   - before any measurement, it releases a space-filling design over each
//     group's grid (max(2(d+1), 5 % of the grid) configurations);
//   - then, whenever fewer jobs are pending than the sweep's device has
//     workers, it refits the group models on every result so far and
//     releases the configurations they are least sure of per second of
//     measuring, skipping those whose expected cost no longer fits in the
//     budget;
//   - once the budget (counted from the sweep's first lease) has passed, it
//     holds the jobs no worker took yet and predicts every held job; the
//     sweep finishes when the ones running now do.
//
// Steps run on the planner's own thread: when Kick()ed (a result arrived)
// and every second. Thread-safe.
#ifndef PARADNN_SERVER_BUDGET_PLANNER_H_
#define PARADNN_SERVER_BUDGET_PLANNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "db/budget_store.h"
#include "db/database.h"
#include "server/sweep_predictor.h"

namespace paradnn::server {

struct BudgetPlannerOptions {
  // The design's share of each group's grid (at least 2(d+1) points, at
  // most max_design: past a few hundred, the model chooses better than a
  // design, and a 5 % design of a 100,000-point grid was 5,000 blind jobs).
  double design_share = 0.05;
  size_t max_design = 256;
  uint64_t design_seed = 1;
  // Workers of a device kind connected now (the jobs kept pending per
  // sweep); at least 1 is assumed.
  std::function<int(const std::string& device)> workers_of;
  // Jobs kept pending beyond one per worker, so that a worker that finishes
  // one leases the next at once instead of waiting for the plan its result
  // starts (at 2,100 configurations and 400 measurements about 0.6 s of
  // every job, a third of a 1-worker budget, went to that wait). At least
  // this many; beyond it, what the workers take while two plans run (the
  // pace measured per sweep: jobs leased per second times the longest
  // recent plan, Lookahead), up to max_lookahead. A fixed lookahead that
  // only grew when workers ran dry left them idle half the time at 100,000
  // configurations and 20 jobs/s. 0: exactly one job per worker.
  int lookahead = 1;
  int max_lookahead = 256;
  // Called after jobs were released (offer them to idle workers) or a sweep
  // changed (predictions stored).
  std::function<void()> released;
  std::function<void()> changed;
};

// What one Step did, for tests and logs.
struct BudgetStepSummary {
  int64_t released = 0;   // jobs moved held -> pending
  int64_t predicted = 0;  // jobs given a prediction
  int64_t reheld = 0;     // pending jobs held again at the deadline
  int64_t dropped = 0;    // a target sweep's held repeats not needed
};

// Seconds the unfinished jobs of `predictor`'s sweep (pending, running and,
// when `held_too`, held) take on `workers` workers by the sweep's model:
// each one its group's fixed seconds plus its timed steps at its predicted
// step time (at most `max_timed_seconds` when > 0), a running one in full.
// nullopt when a group with unfinished jobs has no model yet.
std::optional<double> ModelSecondsLeft(const SweepPredictor& predictor, double max_timed_seconds,
                                       int workers, bool held_too);

class BudgetPlanner {
 public:
  BudgetPlanner(db::Database* database, const common::Clock* clock, BudgetPlannerOptions options);
  ~BudgetPlanner();  // stops the thread

  // The latest model estimate of the time `sweep_id`'s unfinished jobs
  // take (SweepStatus.model_seconds_left), less the time since it was
  // made; nullopt without one.
  std::optional<double> SecondsLeft(int64_t sweep_id) const ABSL_LOCKS_EXCLUDED(estimates_mu_);
  // Refits every running sweep's model for SecondsLeft (a budgeted sweep's
  // estimate at most what is left of its budget); the thread calls it every
  // few seconds, tests directly.
  void EstimateTimesLeft() ABSL_LOCKS_EXCLUDED(estimates_mu_);
  BudgetPlanner(const BudgetPlanner&) = delete;
  BudgetPlanner& operator=(const BudgetPlanner&) = delete;

  // Starts the planning thread.
  void Start();
  // Asks for a Step soon (from any thread; never blocks on one).
  void Kick() ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // One pass over every holding sweep, on the caller's thread.
  absl::StatusOr<BudgetStepSummary> Step();

 private:
  absl::Status StepSweep(const db::BudgetedSweep& sweep, int64_t now_unix_ms,
                         BudgetStepSummary* summary);
  // A sweep with run.target_interval (server/repeat_rounds.h): at a round
  // boundary, the next repeats of the configurations above the target
  // released, the rest dropped; every held repeat dropped once its budget
  // (if any) has passed.
  absl::Status StepTargetSweep(const db::BudgetedSweep& sweep, int64_t now_unix_ms,
                               BudgetStepSummary* summary);
  // Stores `predictor`'s ModelSecondsLeft for the sweep (at most
  // `budget_left` for a budgeted one), or forgets it without a model.
  void RecordSecondsLeft(int64_t sweep_id, const SweepPredictor& predictor,
                         const db::BudgetedSweep& sweep, double budget_left, int64_t now_unix_ms)
      ABSL_LOCKS_EXCLUDED(estimates_mu_);

  // The design's seed: the sweep's run.seed, else options_.design_seed.
  uint64_t DesignSeed(const db::BudgetedSweep& sweep) const;
  // Before the deadline: the held jobs to measure next, up to `target`
  // pending (`pending` are now).
  std::vector<int64_t> NextReleases(const db::BudgetedSweep& sweep, const SweepPredictor& predictor,
                                    double seconds_left, size_t pending, size_t target);
  // What a sweep's lookahead is sized from (Lookahead).
  struct Pace {
    int64_t last_plan_unix_ms = 0;  // when the last plan began (0: none yet)
    size_t pending_after = 0;       // jobs pending once its release was made
    double leases_per_second = 0;   // smoothed
    double plan_seconds = 0;        // the longest recent plan, decaying
  };
  // Counts the jobs leased since `sweep_id`'s last plan (`pending` are left)
  // into its pace and returns the jobs to keep pending beyond one per
  // worker.
  size_t Lookahead(int64_t sweep_id, size_t pending, int64_t now_unix_ms);
  // At the deadline: stores a prediction for every held job of a group with
  // a model; returns the jobs a group without one still has to measure.
  absl::StatusOr<std::vector<int64_t>> PredictHeld(const db::BudgetedSweep& sweep,
                                                   const SweepPredictor& predictor,
                                                   int64_t now_unix_ms, BudgetStepSummary* summary);

  // One pass of Step or EstimateTimesLeft, with std::bad_alloc and other
  // exceptions logged instead of ending the process (the thread's body).
  void RunGuarded();
  // The thread's wait: until Kick()ed or a second has passed. False once
  // stopping.
  bool WaitForKick() ABSL_LOCKS_EXCLUDED(mu_);

  db::Database* database_;
  db::BudgetStore budgets_;
  const common::Clock* clock_;
  const BudgetPlannerOptions options_;

  // Sweeps whose held jobs were matched against earlier sweeps' results
  // (BudgetStore::ReleaseReusableSync), once each. Step runs on one thread
  // at a time: these are its own, unguarded.
  std::set<int64_t> reuse_checked_;
  int64_t estimated_unix_ms_ = 0;  // when EstimateTimesLeft last ran
  // Per sweep, the PlanSignature of the last plan and of the last estimate
  // (budget_planner.cc): what has not changed is not refitted.
  std::map<int64_t, size_t> planned_signature_;
  std::map<int64_t, size_t> estimated_signature_;
  std::map<int64_t, Pace> pace_;

  // Per sweep: the seconds left when estimated, and when.
  mutable absl::Mutex estimates_mu_;
  std::map<int64_t, std::pair<double, int64_t>> seconds_left_ ABSL_GUARDED_BY(estimates_mu_);

  absl::Mutex mu_;
  absl::CondVar wake_;  // kicked_ or stopping_ set
  bool kicked_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_BUDGET_PLANNER_H_
