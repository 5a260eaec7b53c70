// The model tests' training loop: losses of a few Trainer steps.
#ifndef PARADNN_TESTS_UNIT_WORKER_RUNNER_TRAIN_LOSSES_H_
#define PARADNN_TESTS_UNIT_WORKER_RUNNER_TRAIN_LOSSES_H_

#include <vector>

#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;

// Losses of `steps` training steps (seed 1) on the trainer's fixed batch.
inline std::vector<double> TrainLosses(const ModelSpec& spec, int steps) {
  Trainer trainer(spec, /*seed=*/1, ContextForPrecision(spec.precision));
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(trainer.Step().item<double>());
  return losses;
}

}  // namespace paradnn::runner

#endif  // PARADNN_TESTS_UNIT_WORKER_RUNNER_TRAIN_LOSSES_H_
