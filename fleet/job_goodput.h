// ML Productivity Goodput of training jobs from their events
// (docs/fleet-events.md, "The decomposition"): per job scheduling, runtime
// (with its badput by cause) and program goodput, and their device-time
// weighted aggregates. Pure: the roofs and paradnn's model counts come in
// as functions.
#ifndef PARADNN_FLEET_JOB_GOODPUT_H_
#define PARADNN_FLEET_JOB_GOODPUT_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "paradnn/v1/fleet_events.pb.h"

namespace paradnn::fleet {

// One device's roofs for a device kind and precision.
struct DeviceRoof {
  double flops_per_sec = 0;
  double bytes_per_sec = 0;  // 0: unknown, no memory term
};
using RoofLookup = std::function<std::optional<DeviceRoof>(const std::string& device_kind,
                                                           const std::string& precision)>;

// A step's FLOPs and bytes from paradnn's own counts for a job's `model`,
// `model_params` and `precision` (its submitted line's attributes), or
// nullopt where paradnn does not know the model.
struct StepCost {
  double flops = 0;
  double bytes = 0;
  std::string source;  // e.g. "paradnn counts (fc)"
};
using ModelCostLookup = std::function<std::optional<StepCost>(const v1::TrainingEvent& submitted)>;

// One job from all its events (any order). A job without a submitted or a
// requested event has `incomplete` set to why, and no figures.
struct DecomposedJob {
  v1::JobGoodput goodput;
  std::string incomplete;
};
DecomposedJob DecomposeJob(std::vector<v1::TrainingEvent> events, const RoofLookup& roofs,
                           const ModelCostLookup& model_cost);

// The badput causes, in the format's order, and a job's seconds of one.
inline constexpr const char* kBadputCauses[] = {"initialization", "compilation",   "data_loading",
                                                "checkpointing",  "lost_progress", "other"};
double BadputSeconds(const v1::GoodputParts& parts, const std::string& cause);

// "1", "2-8", "9-64" or "65+" requested devices.
std::string JobSizeBucket(int devices);

// The UTC day ("2026-12-04") of Unix seconds.
std::string UtcDay(double unix_seconds);

// The device-time weighted aggregate of `jobs`, labelled `group`.
v1::GoodputAggregate AggregateGoodput(const std::vector<const v1::JobGoodput*>& jobs,
                                      const std::string& group);

// Aggregates of `jobs` grouped by `key` (one per distinct value, sorted).
std::vector<v1::GoodputAggregate> GoodputBreakdown(
    const std::vector<v1::JobGoodput>& jobs,
    const std::function<std::string(const v1::JobGoodput&)>& key);

}  // namespace paradnn::fleet

#endif  // PARADNN_FLEET_JOB_GOODPUT_H_
