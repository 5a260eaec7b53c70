#include "server/budget_planner.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "server/prediction/acquisition.h"
#include "server/prediction/space_filling_design.h"
#include "server/repeat_rounds.h"
#include "server/sweep_predictor.h"

namespace paradnn::server {
namespace {

namespace pr = prediction;

bool Held(const v1::ResultRow& row) { return row.state() == v1::JOB_HELD; }
bool InFlight(const v1::ResultRow& row) {
  return row.state() == v1::JOB_PENDING || row.state() == v1::JOB_LEASED;
}

// max(2(d+1), share of the grid at most max_design), at most the grid.
size_t DesignSize(const SweepPredictor::Group& group, double share, size_t max_design) {
  const size_t by_dimension = 2 * (group.space.size() + 1);
  const auto by_share = std::min(
      max_design, static_cast<size_t>(std::ceil(share * static_cast<double>(group.rows.size()))));
  return std::min(group.rows.size(), std::max(by_dimension, by_share));
}

// The job ids of up to `count` held rows of `group` that a space-filling
// design adds to every row already taken (measured, running or failed).
std::vector<int64_t> DesignJobs(const SweepPredictor& predictor, const SweepPredictor::Group& group,
                                size_t count, uint64_t seed) {
  std::vector<std::vector<double>> points;
  std::vector<size_t> already;
  for (size_t k = 0; k < group.rows.size(); ++k) {
    points.push_back(group.inputs[k].coordinates);
    if (!Held(predictor.rows()[group.rows[k]])) already.push_back(k);
  }
  std::vector<int64_t> jobs;
  for (size_t k : pr::SpaceFillingDesign(points, count, seed, already)) {
    jobs.push_back(predictor.rows()[group.rows[k]].job_id());
  }
  return jobs;
}

// The job ids of up to `count` held rows of `group` its model is least sure
// of per second of measuring, conditioned on the ones running, whose cost
// fits in `seconds_left`.
std::vector<int64_t> AcquiredJobs(const SweepPredictor& predictor,
                                  const SweepPredictor::Group& group, size_t count,
                                  double seconds_left, double max_timed_seconds) {
  std::vector<pr::PredictorInput> running;
  std::vector<bool> taken(group.rows.size(), false);
  for (size_t k = 0; k < group.rows.size(); ++k) {
    const v1::ResultRow& row = predictor.rows()[group.rows[k]];
    taken[k] = !Held(row);
    if (InFlight(row)) running.push_back(group.inputs[k]);
  }
  const pr::StepTimeModel model = group.model->WithPending(running);
  pr::AcquisitionOptions options;
  options.fixed_seconds = group.fixed_seconds;
  options.timed_steps = group.timed_steps;
  std::vector<int64_t> jobs;
  // Asks for more than `count`, as some may not fit in what is left.
  for (size_t k : pr::NextToMeasure(model, group.inputs, taken, count * 4, options)) {
    if (jobs.size() == count) break;
    double timed = group.timed_steps * group.model->PredictSeconds(group.inputs[k]);
    if (max_timed_seconds > 0) timed = std::min(timed, max_timed_seconds);
    if (group.fixed_seconds + timed > seconds_left) continue;
    jobs.push_back(predictor.rows()[group.rows[k]].job_id());
  }
  return jobs;
}

// The planner thread's nice value (setpriority).
constexpr int kPlannerNice = 10;

// How often EstimateTimesLeft refits every running sweep.
constexpr int64_t kEstimateEveryMs = 5000;

// What a plan depends on besides the clock: every job's state and the
// workers; `released` counted as pending already. Equal signatures: the
// same plan, so the refit (a quarter of a second at 2,000 configurations)
// is skipped.
size_t PlanSignature(const std::vector<v1::ResultRow>& rows, int workers,
                     const std::vector<int64_t>& released = {}) {
  std::string text = absl::StrCat(workers, ";");
  for (const v1::ResultRow& row : rows) {
    const bool now_pending =
        std::find(released.begin(), released.end(), row.job_id()) != released.end();
    absl::StrAppend(&text, row.job_id(), ":", now_pending ? v1::JOB_PENDING : row.state(), ",");
  }
  return std::hash<std::string>()(text);
}

}  // namespace

std::optional<double> ModelSecondsLeft(const SweepPredictor& predictor, double max_timed_seconds,
                                       int workers, bool held_too) {
  double total = 0;
  for (const SweepPredictor::Group& group : predictor.groups()) {
    for (size_t k = 0; k < group.rows.size(); ++k) {
      const v1::ResultRow& row = predictor.rows()[group.rows[k]];
      if (!InFlight(row) && !(held_too && Held(row))) continue;
      if (!group.model) return std::nullopt;
      double timed = group.timed_steps * group.model->PredictSeconds(group.inputs[k]);
      if (max_timed_seconds > 0) timed = std::min(timed, max_timed_seconds);
      total += group.fixed_seconds + timed;
    }
  }
  return total / std::max(1, workers);
}

BudgetPlanner::BudgetPlanner(db::Database* database, const common::Clock* clock,
                             BudgetPlannerOptions options)
    : database_(database), budgets_(database), clock_(clock), options_(std::move(options)) {}

BudgetPlanner::~BudgetPlanner() { Stop(); }

void BudgetPlanner::Start() {
  thread_ = std::thread([this] {
    // Below the runners it plans for: on a host that also measures (paradnn
    // local, a 2-core worker), a refit must not take CPU from a timed step.
    // Linux lets one thread be niced; elsewhere this is a no-op.
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kPlannerNice) != 0) {
      spdlog::debug("budget planner: could not lower its priority");
    }
    while (WaitForKick()) RunGuarded();
  });
}

bool BudgetPlanner::WaitForKick() {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + absl::Seconds(1);
  while (!kicked_ && !stopping_ && !wake_.WaitWithDeadline(&mu_, deadline)) {
  }
  if (stopping_) return false;
  kicked_ = false;
  return true;
}

void BudgetPlanner::RunGuarded() {
  // The planner's models are bounded (FitOptions), but a sweep's rows are
  // not: out of memory here ends this pass, not the coordinator, which
  // keeps assigning what is already pending.
  try {
    if (absl::StatusOr<BudgetStepSummary> step = Step(); !step.ok()) {
      spdlog::warn("budget planner: {}", step.status().ToString());
    }
    if (clock_->NowUnixMs() - estimated_unix_ms_ >= kEstimateEveryMs) EstimateTimesLeft();
  } catch (const std::bad_alloc&) {
    spdlog::error("budget planner: out of memory in this pass; it tries again in a second");
  } catch (const std::exception& e) {
    spdlog::error("budget planner: {}; it tries again in a second", e.what());
  }
}

void BudgetPlanner::Kick() {
  {
    absl::MutexLock lock(&mu_);
    kicked_ = true;
  }
  wake_.Signal();
}

void BudgetPlanner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.Signal();
  if (thread_.joinable()) thread_.join();
}

std::optional<double> BudgetPlanner::SecondsLeft(int64_t sweep_id) const {
  absl::MutexLock lock(&estimates_mu_);
  auto it = seconds_left_.find(sweep_id);
  if (it == seconds_left_.end()) return std::nullopt;
  const double since = static_cast<double>(clock_->NowUnixMs() - it->second.second) / 1000.0;
  return std::max(0.0, it->second.first - since);
}

void BudgetPlanner::RecordSecondsLeft(int64_t sweep_id, const SweepPredictor& predictor,
                                      const db::BudgetedSweep& sweep, double budget_left,
                                      int64_t now_unix_ms) {
  const int workers = options_.workers_of ? options_.workers_of(sweep.spec.device()) : 1;
  const bool budgeted = sweep.spec.run().budget_seconds() > 0;
  std::optional<double> left =
      ModelSecondsLeft(predictor, sweep.spec.run().max_seconds(), workers, /*held_too=*/budgeted);
  absl::MutexLock lock(&estimates_mu_);
  if (!left) {
    seconds_left_.erase(sweep_id);
    return;
  }
  if (budgeted) left = std::min(*left, std::max(0.0, budget_left));
  seconds_left_[sweep_id] = {*left, now_unix_ms};
}

void BudgetPlanner::EstimateTimesLeft() {
  const int64_t now = clock_->NowUnixMs();
  estimated_unix_ms_ = now;
  absl::StatusOr<std::vector<db::BudgetedSweep>> sweeps = budgets_.RunningSweeps();
  if (!sweeps.ok()) {
    spdlog::warn("estimating sweeps' time left: {}", sweeps.status().ToString());
    return;
  }
  std::set<int64_t> running;
  for (const db::BudgetedSweep& sweep : *sweeps) {
    running.insert(sweep.sweep_id);
    // A budgeted sweep's plan records its estimate (StepSweep).
    if (sweep.spec.run().budget_seconds() > 0 && planned_signature_.count(sweep.sweep_id) != 0) {
      continue;
    }
    absl::StatusOr<std::vector<v1::ResultRow>> rows =
        db::ResultStore(database_).Query(sweep.sweep_id, /*include_samples=*/false);
    if (!rows.ok()) continue;
    // Nothing left to estimate (every job ended): no model is fitted.
    const bool budgeted = sweep.spec.run().budget_seconds() > 0;
    if (std::none_of(rows->begin(), rows->end(), [&](const v1::ResultRow& row) {
          return InFlight(row) || (budgeted && Held(row));
        })) {
      running.erase(sweep.sweep_id);
      continue;
    }
    const int workers = options_.workers_of ? options_.workers_of(sweep.spec.device()) : 1;
    const size_t signature = PlanSignature(*rows, workers);
    auto seen = estimated_signature_.find(sweep.sweep_id);
    if (seen != estimated_signature_.end() && seen->second == signature) continue;  // counts down
    absl::StatusOr<SweepPredictor> predictor =
        SweepPredictor::Of(*database_, *std::move(rows), /*calibrate_intervals=*/false);
    if (!predictor.ok()) continue;
    estimated_signature_[sweep.sweep_id] = signature;
    double budget_left = sweep.spec.run().budget_seconds();
    if (budget_left > 0) {
      absl::StatusOr<int64_t> first = budgets_.FirstStartUnixMs(sweep.sweep_id);
      if (first.ok() && *first > 0) budget_left -= static_cast<double>(now - *first) / 1000.0;
    }
    RecordSecondsLeft(sweep.sweep_id, *predictor, sweep, budget_left, now);
  }
  absl::MutexLock lock(&estimates_mu_);
  for (auto it = seconds_left_.begin(); it != seconds_left_.end();) {
    it = running.count(it->first) != 0 ? std::next(it) : seconds_left_.erase(it);
  }
}

uint64_t BudgetPlanner::DesignSeed(const db::BudgetedSweep& sweep) const {
  return sweep.spec.run().seed() != 0 ? sweep.spec.run().seed() : options_.design_seed;
}

absl::StatusOr<BudgetStepSummary> BudgetPlanner::Step() {
  absl::StatusOr<std::vector<db::BudgetedSweep>> sweeps = budgets_.HoldingSweeps();
  if (!sweeps.ok()) return sweeps.status();
  BudgetStepSummary summary;
  for (const db::BudgetedSweep& sweep : *sweeps) {
    const bool target = sweep.spec.run().target_interval() > 0;
    if (!target && !(sweep.spec.run().budget_seconds() > 0)) continue;
    if (absl::Status s = target ? StepTargetSweep(sweep, clock_->NowUnixMs(), &summary)
                                : StepSweep(sweep, clock_->NowUnixMs(), &summary);
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("sweep ", sweep.sweep_id, ": ", s.message()));
    }
  }
  if (summary.released > 0 && options_.released) options_.released();
  if ((summary.predicted > 0 || summary.reheld > 0 || summary.dropped > 0) && options_.changed) {
    options_.changed();
  }
  return summary;
}

absl::Status BudgetPlanner::StepTargetSweep(const db::BudgetedSweep& sweep, int64_t now_unix_ms,
                                            BudgetStepSummary* summary) {
  bool budget_over = false;
  if (sweep.spec.run().budget_seconds() > 0) {
    absl::StatusOr<int64_t> first_start = budgets_.FirstStartUnixMs(sweep.sweep_id);
    if (!first_start.ok()) return first_start.status();
    budget_over = *first_start > 0 &&
                  now_unix_ms >= *first_start + sweep.spec.run().budget_seconds() * 1000.0;
  }
  if (!budget_over) {
    // Steps come every second and on every result; while a round runs
    // nothing is decided, so its counts, not its rows, are read.
    absl::StatusOr<v1::SweepStatus> status =
        db::SweepStore(database_).Get(sweep.sweep_id, now_unix_ms);
    if (!status.ok()) return status.status();
    if (status->pending_jobs() + status->leased_jobs() > 0) return absl::OkStatus();
  }
  absl::StatusOr<std::vector<v1::ResultRow>> rows =
      db::ResultStore(database_).Query(sweep.sweep_id, /*include_samples=*/false);
  if (!rows.ok()) return rows.status();
  const TargetRound round = PlanTargetRound(sweep.spec, *rows, budget_over);
  if (!round.release.empty()) {
    absl::StatusOr<int64_t> released = budgets_.ReleaseSync(round.release, now_unix_ms);
    if (!released.ok()) return released.status();
    summary->released += *released;
  }
  if (!round.drop.empty()) {
    absl::StatusOr<int64_t> dropped =
        budgets_.DropHeldSync(sweep.sweep_id, round.drop, now_unix_ms);
    if (!dropped.ok()) return dropped.status();
    summary->dropped += *dropped;
    spdlog::info("sweep {}: {} configuration repeat(s) not needed{}", sweep.sweep_id, *dropped,
                 budget_over ? " (its budget ended)" : " (target interval reached or stopped)");
  }
  return absl::OkStatus();
}

absl::Status BudgetPlanner::StepSweep(const db::BudgetedSweep& sweep, int64_t now_unix_ms,
                                      BudgetStepSummary* summary) {
  absl::StatusOr<int64_t> first_start = budgets_.FirstStartUnixMs(sweep.sweep_id);
  if (!first_start.ok()) return first_start.status();
  const double budget_ms = sweep.spec.run().budget_seconds() * 1000.0;
  const bool over = *first_start > 0 && now_unix_ms >= *first_start + budget_ms;
  if (over) {
    absl::StatusOr<int64_t> reheld = budgets_.HoldPendingSync(sweep.sweep_id, now_unix_ms);
    if (!reheld.ok()) return reheld.status();
    summary->reheld += *reheld;
  }
  if (!over && reuse_checked_.count(sweep.sweep_id) == 0) {
    // What earlier sweeps measured on a connected worker's fingerprint
    // costs nothing: released first, the design then builds on it.
    absl::StatusOr<std::optional<int64_t>> reusable =
        budgets_.ReleaseReusableSync(sweep.sweep_id, now_unix_ms);
    if (!reusable.ok()) return reusable.status();
    if (reusable->has_value()) {
      reuse_checked_.insert(sweep.sweep_id);
      if (**reusable > 0) {
        spdlog::info("sweep {}: {} held job(s) take results of earlier sweeps", sweep.sweep_id,
                     **reusable);
        summary->released += **reusable;
        return absl::OkStatus();
      }
    }
  }
  absl::StatusOr<std::vector<v1::ResultRow>> rows =
      db::ResultStore(database_).Query(sweep.sweep_id, /*include_samples=*/false);
  if (!rows.ok()) return rows.status();
  const int workers = options_.workers_of ? options_.workers_of(sweep.spec.device()) : 1;
  const auto pending =
      static_cast<size_t>(std::count_if(rows->begin(), rows->end(), [](const v1::ResultRow& row) {
        return row.state() == v1::JOB_PENDING;
      }));
  const size_t target =
      static_cast<size_t>(std::max(1, workers)) + Lookahead(sweep.sweep_id, pending, now_unix_ms);
  if (!over) {
    // Once the design is out (the first plan), enough jobs pending is
    // nothing to plan for: the fit is the planner's cost.
    auto planned = planned_signature_.find(sweep.sweep_id);
    if (planned != planned_signature_.end() &&
        (pending >= target || planned->second == PlanSignature(*rows, workers))) {
      return absl::OkStatus();
    }
  }
  // Planning ranks by variance and sums medians: only the predictions
  // stored at the end need calibrated intervals.
  absl::StatusOr<SweepPredictor> predictor =
      SweepPredictor::Of(*database_, *std::move(rows), /*calibrate_intervals=*/over);
  if (!predictor.ok()) return predictor.status();

  std::vector<int64_t> release;
  if (over) {
    absl::StatusOr<std::vector<int64_t>> more =
        PredictHeld(sweep, *predictor, now_unix_ms, summary);
    if (!more.ok()) return more.status();
    release = *std::move(more);
  } else {
    const double seconds_left = *first_start > 0 ? (*first_start + budget_ms - now_unix_ms) / 1000.0
                                                 : sweep.spec.run().budget_seconds();
    release = NextReleases(sweep, *predictor, seconds_left, pending, target);
    planned_signature_[sweep.sweep_id] = PlanSignature(predictor->rows(), workers, release);
    RecordSecondsLeft(sweep.sweep_id, *predictor, sweep, seconds_left, now_unix_ms);
    Pace& pace = pace_[sweep.sweep_id];
    pace.pending_after = pending + release.size();
    const double plan_seconds = static_cast<double>(clock_->NowUnixMs() - now_unix_ms) / 1000.0;
    pace.plan_seconds = std::max(plan_seconds, 0.9 * pace.plan_seconds);
    spdlog::debug(
        "sweep {}: planned in {:.3f} s: {} pending of {} wanted, {} released, {:.1f} leased/s",
        sweep.sweep_id, plan_seconds, pending, target, release.size(), pace.leases_per_second);
  }
  if (!release.empty()) {
    absl::StatusOr<int64_t> moved = budgets_.ReleaseSync(release, now_unix_ms);
    if (!moved.ok()) return moved.status();
    summary->released += *moved;
  }
  return absl::OkStatus();
}

size_t BudgetPlanner::Lookahead(int64_t sweep_id, size_t pending, int64_t now_unix_ms) {
  const auto floor = static_cast<size_t>(std::max(0, options_.lookahead));
  const auto ceiling = std::max(floor, static_cast<size_t>(std::max(0, options_.max_lookahead)));
  Pace& pace = pace_[sweep_id];
  if (floor == 0) return 0;  // exactly one pending job per worker
  if (pace.last_plan_unix_ms > 0 && now_unix_ms > pace.last_plan_unix_ms) {
    const double seconds = static_cast<double>(now_unix_ms - pace.last_plan_unix_ms) / 1000.0;
    const double leased =
        pace.pending_after > pending ? static_cast<double>(pace.pending_after - pending) : 0.0;
    // Run dry, the workers may have wanted more than they got: probe up.
    const double rate =
        pending == 0 ? std::max(leased / seconds, 2 * pace.leases_per_second) : leased / seconds;
    pace.leases_per_second =
        pace.leases_per_second == 0 ? rate : 0.7 * pace.leases_per_second + 0.3 * rate;
  }
  pace.last_plan_unix_ms = now_unix_ms;
  pace.pending_after = pending;
  // One plan to notice that the pending jobs ran low, one to replace them.
  const double wanted = std::ceil(2 * pace.leases_per_second * pace.plan_seconds);
  if (!(wanted > static_cast<double>(floor))) return floor;
  return std::min(ceiling, static_cast<size_t>(wanted));
}

std::vector<int64_t> BudgetPlanner::NextReleases(const db::BudgetedSweep& sweep,
                                                 const SweepPredictor& predictor,
                                                 double seconds_left, size_t pending,
                                                 size_t target) {
  // Each group's progress, counted once.
  struct Progress {
    size_t taken = 0;      // measured, running or failed: not held
    size_t in_flight = 0;  // pending or leased
    size_t design = 0;     // DesignSize
  };
  std::vector<Progress> progress;
  progress.reserve(predictor.groups().size());
  bool designing = false;  // a group's design is released whole
  for (const SweepPredictor::Group& group : predictor.groups()) {
    Progress& p = progress.emplace_back();
    for (size_t i : group.rows) {
      p.taken += Held(predictor.rows()[i]) ? 0 : 1;
      p.in_flight += InFlight(predictor.rows()[i]) ? 1 : 0;
    }
    p.design = DesignSize(group, options_.design_share, options_.max_design);
    designing = designing || p.taken < p.design;
  }
  if (pending >= target && !designing) return {};
  const size_t want = target > pending ? target - pending : 0;
  std::vector<int64_t> release;
  for (size_t g = 0; g < predictor.groups().size(); ++g) {
    const SweepPredictor::Group& group = predictor.groups()[g];
    const Progress& p = progress[g];
    std::vector<int64_t> jobs;
    if (p.taken < p.design) {
      jobs = DesignJobs(predictor, group, p.design - p.taken, DesignSeed(sweep));
    } else if (group.model) {
      const size_t share = (want + predictor.groups().size() - 1) / predictor.groups().size();
      jobs = AcquiredJobs(predictor, group, share, seconds_left, sweep.spec.run().max_seconds());
    } else if (p.in_flight == 0) {
      // The design's results failed or are on another platform: widen it.
      jobs = DesignJobs(predictor, group, want, DesignSeed(sweep));
    }
    release.insert(release.end(), jobs.begin(), jobs.end());
  }
  return release;
}

absl::StatusOr<std::vector<int64_t>> BudgetPlanner::PredictHeld(const db::BudgetedSweep& sweep,
                                                                const SweepPredictor& predictor,
                                                                int64_t now_unix_ms,
                                                                BudgetStepSummary* summary) {
  std::vector<int64_t> release;
  std::vector<std::pair<int64_t, v1::PredictedStep>> predictions;
  for (const SweepPredictor::Group& group : predictor.groups()) {
    if (!group.model) {
      size_t in_flight = 0;
      for (size_t i : group.rows) in_flight += InFlight(predictor.rows()[i]) ? 1 : 0;
      // The budget bought too few measurements to predict from: measure
      // the fewest that can (logged: this sweep overruns its budget).
      if (in_flight > 0) continue;
      const size_t measured = std::count(group.measured.begin(), group.measured.end(), true);
      std::vector<int64_t> more =
          DesignJobs(predictor, group, kMinMeasurementsToPredict - measured, DesignSeed(sweep));
      spdlog::warn(
          "sweep {}: budget ended with {} measurement(s) of {}; measuring {} more "
          "to predict from",
          sweep.sweep_id, measured, group.key, more.size());
      release.insert(release.end(), more.begin(), more.end());
      continue;
    }
    for (size_t i : group.rows) {
      const v1::ResultRow& row = predictor.rows()[i];
      if (!Held(row)) continue;
      absl::StatusOr<v1::PredictedStep> step = predictor.Predict(row.config());
      if (step.ok()) predictions.emplace_back(row.job_id(), *std::move(step));
    }
  }
  if (!predictions.empty()) {
    absl::StatusOr<int64_t> stored =
        budgets_.StorePredictionsSync(sweep.sweep_id, std::move(predictions), now_unix_ms);
    if (!stored.ok()) return stored.status();
    summary->predicted += *stored;
    spdlog::info("sweep {}: budget of {:.0f} s ended; {} configuration(s) predicted",
                 sweep.sweep_id, sweep.spec.run().budget_seconds(), *stored);
  }
  return release;
}

}  // namespace paradnn::server
