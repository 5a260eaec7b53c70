#include "worker/runner/model_builder.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <chrono>
#include <stdexcept>

#include "worker/runner/models/cnn.h"
#include "worker/runner/models/fc.h"
#include "worker/runner/models/inception.h"
#include "worker/runner/models/retinanet.h"
#include "worker/runner/models/rnn.h"
#include "worker/runner/models/torchscript.h"
#include "worker/runner/models/transformer.h"
#include "worker/runner/models/vision.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;
using model::Precision;
namespace {

struct BuilderEntry {
  const char* family;
  ModelBuilderFn build;
};

// One line per family with a LibTorch builder.
const BuilderEntry kBuilders[] = {
    {"cnn", BuildCnnProblem},
    {"densenet121", BuildVisionProblem},
    {"fc", BuildFcProblem},
    {"inception", BuildInceptionProblem},
    {"mobilenet_v1", BuildVisionProblem},
    {"resnet50", BuildVisionProblem},
    {"retinanet", BuildRetinaNetProblem},
    {"rnn", BuildRnnProblem},
    {"squeezenet1_0", BuildVisionProblem},
    {"torchscript", BuildTorchScriptProblem},
    {"transformer", BuildTransformerProblem},
};

// Enables autocast on the model's device (CPU or CUDA) for its lifetime and
// drops the cached weight casts on exit, as Python's `torch.autocast` does
// when the outermost region ends: the cache must not outlive the optimizer
// step that changes the weights.
//
// LibTorch 2.4 gave autocast one API per device type and deprecated the
// per-device functions 1.13 has (deprecations are errors here): both are
// spelled out, one source for Debian's 1.13 and a GPU host's 2.x.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool AutocastEnabled(bool cuda) {
  return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU);
}
void SetAutocast(bool cuda, bool enabled) {
  at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, enabled);
}
void SetAutocastDtype(bool cuda, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, dtype);
}
#else
bool AutocastEnabled(bool cuda) {
  return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void SetAutocast(bool cuda, bool enabled) {
  if (cuda) {
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_cpu_enabled(enabled);
  }
}
void SetAutocastDtype(bool cuda, at::ScalarType dtype) {
  if (cuda) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
}
#endif

class AutocastRegion {
 public:
  AutocastRegion(bool cuda, at::ScalarType dtype) : cuda_(cuda), previous_(AutocastEnabled(cuda)) {
    SetAutocastDtype(cuda_, dtype);
    SetAutocast(cuda_, true);
    at::autocast::increment_nesting();
  }
  ~AutocastRegion() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    SetAutocast(cuda_, previous_);
  }
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  bool cuda_;
  bool previous_;
};

}  // namespace

ModelBuilderFn FindModelBuilder(const std::string& family) {
  for (const BuilderEntry& entry : kBuilders) {
    if (family == entry.family) return entry.build;
  }
  return nullptr;
}

bool WantsChannelsLast(const ModelSpec& spec) {
  auto it = spec.options.find("memory_format");
  return it != spec.options.end() && it->second == "channels_last";
}

torch::Tensor InLayout(const torch::Tensor& images, const BuildContext& context) {
  if (!context.channels_last || images.dim() != 4) return images;
  return images.contiguous(torch::MemoryFormat::ChannelsLast);
}

std::vector<torch::Tensor> PrepareModule(torch::nn::Module& module, const BuildContext& context) {
  module.to(context.device, context.weight_dtype);
  module.train();
  if (context.channels_last) {
    // Conv weights in NHWC as well, as module.to(memory_format=
    // torch.channels_last) does in Python: oneDNN and cuDNN then keep every
    // activation in that layout without reorders.
    torch::NoGradGuard no_grad;
    for (torch::Tensor p : module.parameters()) {
      if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
  std::vector<torch::Tensor> trainable;
  for (const torch::Tensor& p : module.parameters()) {
    if (p.requires_grad()) trainable.push_back(p);
  }
  return trainable;
}

int64_t CountParameters(const torch::nn::Module& module) {
  int64_t total = 0;
  for (const auto& p : module.parameters()) {
    if (p.requires_grad()) total += p.numel();
  }
  return total;
}

torch::ScalarType WeightDtype(Precision precision) {
  switch (precision) {
    case Precision::kBFloat16:
      return torch::kBFloat16;
    case Precision::kFloat16:
      return torch::kFloat16;
    case Precision::kFloat32:
    case Precision::kMixedBf16:
    case Precision::kMixedFp16:
      return torch::kFloat32;
  }
  return torch::kFloat32;
}

TrainingProblem SyntheticClassificationProblem(
    std::shared_ptr<torch::nn::Module> model,
    std::function<torch::Tensor(const torch::Tensor&)> forward,
    const std::vector<int64_t>& input_sizes, double input_low, int64_t classes,
    const BuildContext& context) {
  struct State {
    std::shared_ptr<torch::nn::Module> model;
    std::function<torch::Tensor(const torch::Tensor&)> forward;
    torch::Tensor inputs;
    torch::Tensor labels;
  };
  auto state = std::make_shared<State>();
  state->model = std::move(model);
  state->forward = std::move(forward);
  TrainingProblem problem;
  problem.parameters = PrepareModule(*state->model, context);
  const auto on_device = torch::TensorOptions().device(context.device);
  torch::Tensor inputs = torch::rand(input_sizes, on_device.dtype(torch::kFloat32));
  if (input_low != 0) inputs = inputs + input_low;
  state->inputs = InLayout(inputs.to(context.input_dtype), context);
  state->labels = torch::randint(0, classes, {input_sizes.at(0)}, on_device.dtype(torch::kLong));
  State* s = state.get();
  problem.forward_loss = [s] {
    return torch::nn::functional::cross_entropy(s->forward(s->inputs), s->labels);
  };
  problem.owner = state;
  return problem;
}

BuildContext ContextForPrecision(Precision precision) {
  BuildContext context;
  context.weight_dtype = WeightDtype(precision);
  context.input_dtype = context.weight_dtype;
  return context;
}

Trainer::Trainer(const ModelSpec& spec, uint64_t seed, const BuildContext& context) : spec_(spec) {
  ModelBuilderFn build = FindModelBuilder(spec.family);
  if (build == nullptr) {
    throw std::invalid_argument("family '" + spec.family +
                                "' has no LibTorch builder in this runner");
  }
  torch::manual_seed(seed);
  autocast_ = spec.precision == Precision::kMixedBf16 || spec.precision == Precision::kMixedFp16;
  cuda_ = context.device.is_cuda();
  BuildContext in_layout = context;
  in_layout.channels_last = WantsChannelsLast(spec);
  problem_ = build(spec, in_layout);
  optimizer_ = MakeTrainingOptimizer(spec.optimizer, problem_.parameters);
}

Trainer::~Trainer() = default;

torch::Tensor Trainer::Step() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  // Fresh gradient tensors each step (set_to_none), as TensorFlow computes
  // them and as PyTorch >= 2.0 does by default: no memset + accumulate.
  for (torch::Tensor& p : problem_.parameters) p.mutable_grad().reset();
  torch::Tensor loss;
  if (autocast_) {
    AutocastRegion region(cuda_,
                          spec_.precision == Precision::kMixedBf16 ? at::kBFloat16 : at::kHalf);
    loss = problem_.forward_loss();
  } else {
    loss = problem_.forward_loss();
  }
  loss.backward();
  const Clock::time_point backward_done = Clock::now();
  if (gradient_hook_) gradient_hook_(problem_.parameters);
  const Clock::time_point hook_done = Clock::now();
  optimizer_->Step();
  parts_.compute_s += std::chrono::duration<double>(backward_done - start).count();
  parts_.gradient_hook_s += std::chrono::duration<double>(hook_done - backward_done).count();
  parts_.optimizer_s += std::chrono::duration<double>(Clock::now() - hook_done).count();
  return loss.detach();
}

}  // namespace paradnn::runner
