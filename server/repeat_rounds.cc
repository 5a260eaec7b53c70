#include "server/repeat_rounds.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "boost/math/distributions/students_t.hpp"
#include "model/sweep.h"
#include "server/analysis/comparison_stats.h"

namespace paradnn::server {
namespace {

// One configuration's rows in a sweep.
struct RepeatGroup {
  std::vector<size_t> rows;                // indexes into the sweep's rows
  std::vector<double> ok_steps;            // the OK repeats' median step times
  std::vector<const v1::ResultRow*> held;  // by repeat
  bool in_flight = false;                  // a repeat pending or leased
};

bool IsOkStep(const v1::ResultRow& row) {
  return row.state() == v1::JOB_DONE && row.has_measurement() &&
         row.measurement().outcome() == v1::OK && row.measurement().stats().median_s() > 0;
}

// `rows` by configuration (model::ConfigKey), in order of their first row.
std::vector<RepeatGroup> GroupRepeats(const std::vector<v1::ResultRow>& rows) {
  std::vector<RepeatGroup> groups;
  std::map<std::string, size_t> group_of;
  for (size_t i = 0; i < rows.size(); ++i) {
    const v1::ResultRow& row = rows[i];
    const auto [it, inserted] = group_of.emplace(model::ConfigKey(row.config()), groups.size());
    if (inserted) groups.emplace_back();
    RepeatGroup& group = groups[it->second];
    group.rows.push_back(i);
    if (IsOkStep(row)) group.ok_steps.push_back(row.measurement().stats().median_s());
    if (row.state() == v1::JOB_HELD) group.held.push_back(&row);
    if (row.state() == v1::JOB_PENDING || row.state() == v1::JOB_LEASED) group.in_flight = true;
  }
  for (RepeatGroup& group : groups) {
    std::sort(
        group.held.begin(), group.held.end(),
        [](const v1::ResultRow* a, const v1::ResultRow* b) { return a->repeat() < b->repeat(); });
  }
  return groups;
}

std::vector<v1::RepeatInterval> IntervalsOf(const std::vector<RepeatGroup>& groups) {
  std::vector<std::vector<double>> steps;
  steps.reserve(groups.size());
  for (const RepeatGroup& group : groups) steps.push_back(group.ok_steps);
  return EstimateRepeatIntervals(steps);
}

bool AboveTarget(const v1::RepeatInterval& interval, double target) {
  return interval.runs() < 2 || interval.half_width_rel() > target;
}

// Where a configuration stands against the sweep's target.
std::string TargetStatus(const v1::SweepSpec& spec, bool sweep_running, const RepeatGroup& group,
                         const v1::RepeatInterval& interval) {
  if (!AboveTarget(interval, spec.run().target_interval())) return "reached";
  if (sweep_running && (group.in_flight || !group.held.empty())) return "measuring";
  if (group.rows.size() >= static_cast<size_t>(model::MaxRepeats(spec))) return "repeat cap";
  return spec.run().budget_seconds() > 0 ? "budget ended" : "stopped";
}

}  // namespace

std::vector<v1::RepeatInterval> EstimateRepeatIntervals(
    const std::vector<std::vector<double>>& step_times, double level) {
  std::vector<analysis::RoundSpread> spreads;
  spreads.reserve(step_times.size());
  for (const std::vector<double>& steps : step_times) spreads.push_back(analysis::LogSpread(steps));
  // One configuration's 2-4 repeats say little about its spread; the
  // others' say more (comparison_stats.h).
  const analysis::SpreadPrior prior = analysis::FitSpreadPrior(spreads);
  std::vector<v1::RepeatInterval> intervals;
  intervals.reserve(step_times.size());
  for (size_t i = 0; i < step_times.size(); ++i) {
    v1::RepeatInterval& interval = intervals.emplace_back();
    interval.set_runs(static_cast<int32_t>(step_times[i].size()));
    if (step_times[i].empty()) continue;
    interval.set_mean_step_s(std::exp(spreads[i].log_level));
    if (step_times[i].size() < 2) continue;
    const analysis::RoundSpread moderated = analysis::Moderate(prior, spreads[i]);
    const boost::math::students_t t(moderated.degrees_of_freedom);
    const double quantile = boost::math::quantile(boost::math::complement(t, (1 - level) / 2));
    const double half_width =
        quantile * std::sqrt(moderated.variance / static_cast<double>(step_times[i].size()));
    interval.set_half_width_rel(std::expm1(half_width));
    interval.set_degrees_of_freedom(moderated.degrees_of_freedom);
    interval.set_pooled(!prior.empty());
  }
  return intervals;
}

void FillRepeatIntervals(const v1::SweepSpec& spec, bool sweep_running,
                         std::vector<v1::ResultRow>* rows) {
  const std::vector<RepeatGroup> groups = GroupRepeats(*rows);
  const std::vector<v1::RepeatInterval> intervals = IntervalsOf(groups);
  const double target = spec.run().target_interval();
  for (size_t g = 0; g < groups.size(); ++g) {
    if (intervals[g].runs() < 2) continue;
    v1::RepeatInterval interval = intervals[g];
    if (target > 0) {
      interval.set_target(target);
      interval.set_target_status(TargetStatus(spec, sweep_running, groups[g], interval));
    }
    for (size_t i : groups[g].rows) *(*rows)[i].mutable_repeat_interval() = interval;
  }
}

TargetRound PlanTargetRound(const v1::SweepSpec& spec, const std::vector<v1::ResultRow>& rows,
                            bool budget_over) {
  TargetRound round;
  const std::vector<RepeatGroup> groups = GroupRepeats(rows);
  if (!budget_over) {
    for (const RepeatGroup& group : groups) {
      if (group.in_flight) return round;  // the round is not over
    }
  }
  const std::vector<v1::RepeatInterval> intervals = IntervalsOf(groups);
  for (size_t g = 0; g < groups.size(); ++g) {
    const RepeatGroup& group = groups[g];
    // A configuration with no OK repeat (out of memory, a crash) would
    // fail the same way again: it is not repeated.
    const bool wanted = !budget_over && !group.ok_steps.empty() &&
                        AboveTarget(intervals[g], spec.run().target_interval());
    if (group.held.empty()) continue;
    if (wanted) {
      round.release.push_back(group.held.front()->job_id());  // the rest wait for later rounds
    } else {
      for (const v1::ResultRow* held : group.held) round.drop.push_back(held->job_id());
    }
  }
  return round;
}

}  // namespace paradnn::server
