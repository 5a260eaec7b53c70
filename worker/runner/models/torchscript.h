// Family torchscript in LibTorch: loads the job's TorchScript module from
// BuildContext::torchscript_content and trains it on synthetic inputs made
// from the declared TensorSpecs.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_TORCHSCRIPT_H_
#define PARADNN_WORKER_RUNNER_MODELS_TORCHSCRIPT_H_

#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;

// torch::jit::load of the content; floating-point parameters and buffers
// moved to the context's device and weight dtype (integer buffers keep
// their type); training mode; the trainable set is every parameter that
// requires grad. Inputs: -1 in a shape is the batch; float32 specs are
// uniform in [low, high) ([-0.5, 0.5) when both are 0) in the context's
// input dtype; int64 specs are randint(low, high). Loss: cross_entropy
// (output logits vs an int64 target), mse (output vs a float target shaped
// like the output), sum (of the output), output (forward returns a scalar
// loss). Throws c10::Error (LibTorch's message) when the bytes do not load
// or forward fails, std::invalid_argument for a job without model bytes or
// an output the loss rule cannot use.
TrainingProblem BuildTorchScriptProblem(const ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_TORCHSCRIPT_H_
