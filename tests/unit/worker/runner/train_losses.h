// The model tests' training loop: losses of a few Trainer steps.
#ifndef PARADNN_TESTS_UNIT_WORKER_RUNNER_TRAIN_LOSSES_H_
#define PARADNN_TESTS_UNIT_WORKER_RUNNER_TRAIN_LOSSES_H_

#include <gtest/gtest.h>

#include <vector>

#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;

// Losses of `steps` steps of `trainer` on its fixed batch.
inline std::vector<double> StepLosses(Trainer& trainer, int steps) {
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(trainer.Step().item<double>());
  return losses;
}

// Losses of `steps` training steps (seed 1) on the trainer's fixed batch.
inline std::vector<double> TrainLosses(const ModelSpec& spec, int steps) {
  Trainer trainer(spec, /*seed=*/1, ContextForPrecision(spec.precision));
  return StepLosses(trainer, steps);
}

// TrainLosses of a mixed-precision `spec`, after expecting every parameter
// and its gradient to be float32 still: the master weights the low-precision
// compute updates.
inline std::vector<double> TrainLossesWithFloat32Masters(const ModelSpec& spec, int steps) {
  Trainer trainer(spec, /*seed=*/1, ContextForPrecision(spec.precision));
  const std::vector<double> losses = StepLosses(trainer, steps);
  for (const auto& p : trainer.parameters()) {
    EXPECT_EQ(p.scalar_type(), torch::kFloat32);
    EXPECT_EQ(p.grad().scalar_type(), torch::kFloat32);
  }
  return losses;
}

}  // namespace paradnn::runner

#endif  // PARADNN_TESTS_UNIT_WORKER_RUNNER_TRAIN_LOSSES_H_
