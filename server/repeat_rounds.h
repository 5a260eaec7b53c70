// Repeats to a target interval (run.target_interval, issue 37): the
// interval of each configuration's mean step time over its repeats in a
// sweep, whether it reached the sweep's target, and which held repeats the
// next round releases or drops. Pure; thread-compatible.
//
// A target sweep's jobs are configurations x MaxRepeats(spec), the first
// kTargetFirstRounds rounds pending and the rest held (sweep_planner.cc).
// At each round boundary (nothing of the sweep pending or leased) every
// configuration whose interval is still wider than the target gets its
// next repeat released; the held repeats of the others are dropped. The
// released jobs keep their round's shuffled order, so the rounds stay
// interleaved in time.
#ifndef PARADNN_SERVER_REPEAT_ROUNDS_H_
#define PARADNN_SERVER_REPEAT_ROUNDS_H_

#include <cstdint>
#include <vector>

#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::server {

// The interval of the geometric mean of each element of `step_times` (one
// configuration's OK repeats): a t interval on the log step times at
// `level`, the configuration's variance moderated toward the others'
// (analysis::FitSpreadPrior: with 3 repeats each one's own spread rests on
// 2 degrees of freedom). runs and mean_step_s only with fewer than 2.
std::vector<v1::RepeatInterval> EstimateRepeatIntervals(
    const std::vector<std::vector<double>>& step_times, double level = 0.95);

// Sets repeat_interval on every row of each configuration of `spec`'s sweep
// that has at least 2 OK repeats among `rows` (the sweep's rows, as
// ResultStore::Query gives them), with the target's status when the spec
// has one. `sweep_running`: more repeats may still come.
void FillRepeatIntervals(const v1::SweepSpec& spec, bool sweep_running,
                         std::vector<v1::ResultRow>* rows);

struct TargetRound {
  std::vector<int64_t> release;  // held jobs to measure next
  std::vector<int64_t> drop;     // held jobs no configuration needs
};

// The next step of a target sweep from its rows: nothing while a job is
// pending or leased; else each configuration above the target (or with
// fewer than 2 OK repeats) releases its next held repeat, the others' held
// repeats are dropped. `budget_over`: the sweep's run.budget has passed,
// so every held job is dropped at once.
TargetRound PlanTargetRound(const v1::SweepSpec& spec, const std::vector<v1::ResultRow>& rows,
                            bool budget_over);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_REPEAT_ROUNDS_H_
