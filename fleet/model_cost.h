// A training job's step cost from paradnn's own counts, where the job names
// a model paradnn builds (docs/fleet-events.md, "Program goodput"): the
// submitted event's `model` as a family or real-world model, its
// `model_params` as the family's parameters (`batch` the global batch) and
// its `precision`. Pure.
#ifndef PARADNN_FLEET_MODEL_COST_H_
#define PARADNN_FLEET_MODEL_COST_H_

#include <optional>

#include "fleet/job_goodput.h"
#include "paradnn/v1/fleet_events.pb.h"

namespace paradnn::fleet {

// paradnn's model FLOPs (6 x MACs x batch) and bytes per step of the model
// `submitted` names, or nullopt where it names none paradnn knows, or its
// parameters do not configure it (not integers, out of range, missing).
std::optional<StepCost> ParadnnStepCost(const v1::TrainingEvent& submitted);

}  // namespace paradnn::fleet

#endif  // PARADNN_FLEET_MODEL_COST_H_
