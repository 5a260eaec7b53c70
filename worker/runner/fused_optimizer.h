// The suite's optimizers (docs/models.md): RMSprop (alpha 0.9, momentum
// 0.9, eps 1.0), SGD and SGD with momentum 0.9, all at lr 0.1.
//
// On the CPU each parameter's whole update is one pass over its elements
// (read weight, gradient and state; write weight and state), the way
// TensorFlow's ApplyRMSProp / ApplyMomentum kernels run it for the original
// ParaDnn. LibTorch 1.13's C++ optimizers run it operation by operation: 18
// tensor passes per RMSprop parameter instead of 7, 40 % of a small FC
// step (docs/measurement.md). The update is the same arithmetic as
// torch::optim's, in float32 for every stored dtype (16-bit weights and
// state are rounded once per step, not once per operation); the unit test
// holds it against torch::optim.
//
// On CUDA, torch::optim runs (LibTorch has no fused update there to call
// and this build has no CUDA compiler); ModelCounts then counts its passes.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_FUSED_OPTIMIZER_H_
#define PARADNN_WORKER_RUNNER_FUSED_OPTIMIZER_H_

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "model/model_spec.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::OptimizerKind;

// One optimizer step over a fixed set of parameters. Not thread-safe.
class TrainingOptimizer {
 public:
  virtual ~TrainingOptimizer() = default;
  // Updates every parameter that has a gradient; parameters without one
  // (and their state) are left alone, as torch::optim does.
  virtual void Step() = 0;
  // Whether the update is one pass per parameter (ModelCounts' fused
  // optimizer traffic) rather than LibTorch's operation-by-operation one.
  virtual bool fused() const = 0;
};

// The suite's optimizer `kind` over `parameters` (the model's; they must
// outlive it): fused when every parameter is on the CPU, torch::optim
// otherwise.
std::unique_ptr<TrainingOptimizer> MakeTrainingOptimizer(
    OptimizerKind kind, const std::vector<torch::Tensor>& parameters);

// torch::optim's optimizer for `kind` with the suite's settings: the
// reference the fused update is tested against, and the CUDA path.
std::unique_ptr<torch::optim::Optimizer> MakeTorchOptimizer(
    OptimizerKind kind, const std::vector<torch::Tensor>& parameters);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_FUSED_OPTIMIZER_H_
