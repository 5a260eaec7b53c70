#include "model/model_counts.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "model/family.h"

namespace paradnn::model {

double OptimizerFlopsPerParam(OptimizerKind optimizer) {
  switch (optimizer) {
    case OptimizerKind::kRmsProp:
      return 12;
    case OptimizerKind::kMomentum:
      return 4;
    case OptimizerKind::kSgd:
      return 2;
  }
  return 0;
}

double OptimizerTensorPassesPerParam(OptimizerKind optimizer, OptimizerUpdate update) {
  const bool fused = update == OptimizerUpdate::kFused;
  switch (optimizer) {
    case OptimizerKind::kRmsProp:
      return fused ? 7 : 18;
    case OptimizerKind::kMomentum:
      return fused ? 5 : 8;
    case OptimizerKind::kSgd:
      return 3;
  }
  return 0;
}

void CountOptimizerUpdate(const ModelSpec& spec, OptimizerUpdate update, v1::ModelCounts* counts) {
  const double extra_passes =
      OptimizerTensorPassesPerParam(spec.optimizer, update) -
      OptimizerTensorPassesPerParam(spec.optimizer, OptimizerUpdate::kFused);
  const double param_bytes =
      static_cast<double>(counts->params()) * WeightElementBytes(spec.precision);
  counts->set_bytes_per_step(counts->bytes_per_step() + extra_passes * param_bytes);
}

double OtherFlops(const WorkBreakdown& b) {
  return b.bias_relu_flops + b.loss_flops + b.optimizer_flops;
}

double BytesPerStep(const WorkBreakdown& b) {
  return b.weight_bytes + b.gradient_bytes + b.optimizer_bytes + b.activation_fwd_bytes +
         b.activation_bwd_bytes;
}

double FillStepCounts(const StepTotals& t, WorkBreakdown* b, v1::ModelCounts* c) {
  const double params = static_cast<double>(t.params);
  b->optimizer_bytes = OptimizerTensorPassesPerParam(t.optimizer, OptimizerUpdate::kFused) *
                       params * t.weight_element_bytes;
  b->optimizer_flops = OptimizerFlopsPerParam(t.optimizer) * params;
  c->set_params(t.params);
  c->set_macs_per_example(std::llround(t.macs_per_example));
  c->set_model_flops(6.0 * t.macs_per_example * t.batch);
  c->set_executed_flops(t.executed_flops);
  c->set_other_flops(OtherFlops(*b));
  c->set_bytes_per_step(BytesPerStep(*b));
  c->set_activation_bytes(t.activation_bytes);
  return params * t.weight_element_bytes * (2 + OptimizerStateTensors(t.optimizer)) +
         2 * t.cast_params * t.cast_element_bytes;
}

WorkCounts CountWork(const ModelSpec& spec) {
  const FamilyDef* def = FindFamily(spec.family);
  if (def == nullptr) {
    std::fprintf(stderr, "CountWork: family '%s' is not registered\n", spec.family.c_str());
    std::abort();
  }
  return def->count(spec);
}

v1::ModelCounts CountModel(const ModelSpec& spec) { return CountWork(spec).counts; }

}  // namespace paradnn::model
