// The LibTorch side of the families: each family registers a builder that
// makes its network and synthetic batch on the device, and Trainer runs the
// training step common to all of them (zero_grad, forward under autocast for
// mixed precision, loss, backward, optimizer step).
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODEL_BUILDER_H_
#define PARADNN_WORKER_RUNNER_MODEL_BUILDER_H_

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/model_spec.h"
#include "worker/runner/fused_optimizer.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;
using model::Precision;

// Where and in which types a builder makes its model and data.
struct BuildContext {
  torch::Device device = torch::kCPU;
  // dtype of the stored weights: float32 for float32 and the mixed
  // precisions, bfloat16/float16 for the pure 16-bit precisions.
  torch::ScalarType weight_dtype = torch::kFloat32;
  // dtype of floating-point synthetic inputs (= weight_dtype; the mixed
  // precisions keep float32 inputs and let autocast cast them).
  torch::ScalarType input_dtype = torch::kFloat32;
  // The job's RunnerJob.torchscript_content (family torchscript only).
  const std::string* torchscript_content = nullptr;
  // Images, activations and 4-D weights in channels_last (NHWC) rather than
  // contiguous NCHW: the family's memory_format option.
  bool channels_last = false;
};

// Whether `spec` asks for channels_last (its family has the memory_format
// option and it is "channels_last").
bool WantsChannelsLast(const ModelSpec& spec);

// `images` (4-D) in the layout `context` asks for.
torch::Tensor InLayout(const torch::Tensor& images, const BuildContext& context);

// One family's training problem, ready to step: every tensor already on the
// device, weights in their dtype, module(s) in training mode.
struct TrainingProblem {
  // Trainable parameters (the optimizer's and zero_grad's set).
  std::vector<torch::Tensor> parameters;
  // Forward on the fixed synthetic batch and the loss (0-dim). Called once
  // per step, under autocast when the precision is mixed.
  std::function<torch::Tensor()> forward_loss;
  // Keeps the module(s) and data the closure uses alive.
  std::shared_ptr<void> owner;
};

// Builds the problem for a valid `spec`. Runs under torch::manual_seed(seed)
// and torch::NoGradGuard is NOT active. Throws c10::Error / std::bad_alloc.
using ModelBuilderFn = TrainingProblem (*)(const ModelSpec& spec, const BuildContext& context);

// The builder of `family`, or nullptr when this build has none.
ModelBuilderFn FindModelBuilder(const std::string& family);

// Moves a freshly built (float32, CPU) module to the context's device and
// weight dtype, in training mode, and returns its trainable parameters.
std::vector<torch::Tensor> PrepareModule(torch::nn::Module& module, const BuildContext& context);

// A classifier trained with cross-entropy on one fixed synthetic batch:
// PrepareModule(*model), then float inputs of `input_sizes` uniform in
// [input_low, input_low + 1) (made in float32, stored in context.input_dtype)
// and int64 labels uniform in [0, classes) of input_sizes[0] rows, in that
// order of random draws. `forward` maps the inputs to the logits.
TrainingProblem SyntheticClassificationProblem(
    std::shared_ptr<torch::nn::Module> model,
    std::function<torch::Tensor(const torch::Tensor&)> forward,
    const std::vector<int64_t>& input_sizes, double input_low, int64_t classes,
    const BuildContext& context);

// Elements of every trainable parameter of `module`.
int64_t CountParameters(const torch::nn::Module& module);

// dtype of the stored weights for `precision`.
torch::ScalarType WeightDtype(Precision precision);

// The CPU build context of `precision`: weights and synthetic inputs in
// WeightDtype(precision), no TorchScript content.
BuildContext ContextForPrecision(Precision precision);

// Builds the problem for `spec` and steps it. Not thread-safe.
class Trainer {
 public:
  // Throws c10::Error / std::bad_alloc (caller turns them into outcomes).
  Trainer(const ModelSpec& spec, uint64_t seed, const BuildContext& context);
  ~Trainer();

  // One full training step; returns the loss, detached. On the CPU every
  // kernel has finished when Step() returns.
  torch::Tensor Step();

  const std::vector<torch::Tensor>& parameters() const { return problem_.parameters; }
  // Whether the optimizer update runs fused (fused_optimizer.h).
  bool optimizer_fused() const { return optimizer_->fused(); }
  // Seconds each part of the steps so far took, summed: zero_grad, forward
  // and backward (compute_s); the gradient hook (gradient_hook_s: data
  // parallelism's wait for the all-reduces); the optimizer update. Clock
  // reads on the host: on CUDA a part ends when its kernels are queued, and
  // the wait for the device lands in the part that next waits.
  struct StepParts {
    double compute_s = 0;
    double gradient_hook_s = 0;
    double optimizer_s = 0;
  };
  const StepParts& step_parts() const { return parts_; }
  // Called in every Step() between backward and the optimizer update, with
  // the parameters (their gradients set): data parallelism averages the
  // gradients there (data_parallel.h).
  void set_gradient_hook(std::function<void(const std::vector<torch::Tensor>&)> hook) {
    gradient_hook_ = std::move(hook);
  }

 private:
  ModelSpec spec_;
  TrainingProblem problem_;
  std::unique_ptr<TrainingOptimizer> optimizer_;
  bool autocast_ = false;
  bool cuda_ = false;  // the problem lives on a CUDA device
  std::function<void(const std::vector<torch::Tensor>&)> gradient_hook_;
  StepParts parts_;
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODEL_BUILDER_H_
