#include "worker/runner/model_counts.h"

#include <cstdio>
#include <cstdlib>

#include "worker/runner/family.h"

namespace paradnn::runner {

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

double OptimizerTensorPassesPerParam(OptimizerKind optimizer) {
  switch (optimizer) {
    case OptimizerKind::kRmsProp:
      return 18;
    case OptimizerKind::kMomentum:
      return 8;
    case OptimizerKind::kSgd:
      return 3;
  }
  return 0;
}

double OtherFlops(const WorkBreakdown& b) {
  return b.bias_relu_flops + b.loss_flops + b.optimizer_flops;
}

double BytesPerStep(const WorkBreakdown& b) {
  return b.weight_bytes + b.gradient_bytes + b.optimizer_bytes + b.activation_fwd_bytes +
         b.activation_bwd_bytes;
}

WorkCounts CountWork(const ModelSpec& spec) {
  const FamilyDef* def = FindFamilyDef(spec.family);
  if (def == nullptr) {
    std::fprintf(stderr, "CountWork: family '%s' is not registered\n", spec.family.c_str());
    std::abort();
  }
  return def->count(spec);
}

v1::ModelCounts CountModel(const ModelSpec& spec) { return CountWork(spec).counts; }

}  // namespace paradnn::runner
