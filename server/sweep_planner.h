// Sweep planning: a validated SweepSpec becomes the jobs the coordinator
// stores, each with model/'s estimates, in the interleaved shuffled order
// repeats run in. Pure; thread-safe. CoordinatorService calls it on its
// planning thread.
#ifndef PARADNN_SERVER_SWEEP_PLANNER_H_
#define PARADNN_SERVER_SWEEP_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "db/sweep_store.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::server {

// The jobs of a sweep and the estimates SubmitSweepResponse reports
// (sums and extremes of model::ModelCounts over the jobs).
struct PlannedSweep {
  std::vector<db::NewJob> jobs;
  double total_model_flops = 0;
  double max_peak_memory_estimate_bytes = 0;
  int64_t min_params = 0;
  int64_t max_params = 0;
};

// Expands `spec` (model::ExpandSweep, which validates it) into the jobs to
// store: the cross product, spec.repeats times (job.repeat 0..repeats-1);
// repeat round r runs in the order model::ShuffledOrder(seed + r) gives
// and before round r + 1 (ordinals r*n .. r*n+n-1). Each job carries the
// effective run settings (seed filled in) and model/'s estimates
// (model::ParseModelSpec + model::CountModel). A configuration those refuse
// refuses the whole sweep with their error and names the configuration.
// Pure; thread-safe.
absl::StatusOr<PlannedSweep> PlanSweep(const v1::SweepSpec& spec, int64_t max_jobs, uint64_t seed);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_SWEEP_PLANNER_H_
