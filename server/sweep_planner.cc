#include "server/sweep_planner.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/run_settings.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "model/sweep.h"

namespace paradnn::server {
namespace {

// " (block=2 filter=16 ... float32 rmsprop)": which configuration an error is about.
std::string DescribeConfig(const v1::ModelConfig& config) {
  std::map<std::string, int64_t> params(config.params().begin(), config.params().end());
  std::vector<std::string> parts;
  parts.reserve(params.size());
  for (const auto& [key, value] : params) parts.push_back(absl::StrCat(key, "=", value));
  std::map<std::string, std::string> options(config.options().begin(), config.options().end());
  for (const auto& [key, value] : options) parts.push_back(absl::StrCat(key, "=", value));
  parts.push_back(config.precision());
  parts.push_back(config.optimizer());
  return absl::StrCat(config.family(), " ", absl::StrJoin(parts, " "));
}

}  // namespace

absl::StatusOr<PlannedSweep> PlanSweep(const v1::SweepSpec& spec, int64_t max_jobs, uint64_t seed) {
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = model::ExpandSweep(spec, max_jobs);
  if (!configs.ok()) return configs.status();
  v1::RunSettings settings = common::WithRunDefaults(spec.run());
  if (settings.seed() == 0) settings.set_seed(seed);
  const size_t n = configs->size();
  const int repeats = model::MaxRepeats(spec);
  // A budgeted sweep's jobs wait for its planner to choose them; a target
  // interval's repeats past the first rounds wait until their
  // configuration's interval says it needs them (BudgetPlanner).
  const bool target = spec.run().target_interval() > 0;
  auto held = [&](int repeat) {
    return target ? repeat >= model::kTargetFirstRounds : spec.run().budget_seconds() > 0;
  };
  PlannedSweep plan;
  plan.jobs.resize(n * static_cast<size_t>(repeats));
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<model::ModelSpec> model =
        model::ParseModelSpec((*configs)[i], model::FieldStyle::kProto);
    if (!model.ok()) {
      return absl::Status(model.status().code(),
                          absl::StrCat(model.status().message(), " (configuration ", i + 1, " of ",
                                       n, ": ", DescribeConfig((*configs)[i]), ")"));
    }
    const v1::ModelCounts counts = model::CountModel(*model);
    plan.total_model_flops += counts.model_flops() * repeats;
    plan.max_peak_memory_estimate_bytes =
        std::max(plan.max_peak_memory_estimate_bytes, counts.peak_memory_estimate_bytes());
    plan.min_params = i == 0 ? counts.params() : std::min(plan.min_params, counts.params());
    plan.max_params = std::max(plan.max_params, counts.params());
    for (int r = 0; r < repeats; ++r) {
      db::NewJob& job = plan.jobs[static_cast<size_t>(r) * n + i];
      job.params = counts.params();
      job.model_flops = counts.model_flops();
      job.peak_memory_estimate_bytes = counts.peak_memory_estimate_bytes();
      job.config = (*configs)[i];
      job.settings = settings;
      job.device = spec.device().empty() ? "cpu" : spec.device();
      job.repeat = r;
      job.held = held(r);
    }
  }
  // Repeats are interleaved: round r runs every configuration once, in its
  // own shuffled order, before round r + 1 starts, so drift of the machine
  // shows as spread across repeats rather than as a difference between
  // configurations.
  for (int r = 0; r < repeats; ++r) {
    const std::vector<int32_t> order = model::ShuffledOrder(n, seed + static_cast<uint64_t>(r));
    for (size_t i = 0; i < n; ++i) {
      plan.jobs[static_cast<size_t>(r) * n + i].ordinal =
          static_cast<int32_t>(static_cast<size_t>(r) * n) + order[i];
    }
  }
  return plan;
}

}  // namespace paradnn::server
