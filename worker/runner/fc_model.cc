#include "worker/runner/fc_model.h"

#include <ATen/autocast_mode.h>

#include <string>

namespace paradnn::runner {
namespace {

// Enables CPU autocast for its lifetime and drops the cached weight casts on
// exit, as Python's `torch.autocast` does when the outermost region ends:
// the cache must not outlive the optimizer step that changes the weights.
class CpuAutocastRegion {
 public:
  explicit CpuAutocastRegion(at::ScalarType dtype) : previous_(at::autocast::is_cpu_enabled()) {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(true);
    at::autocast::increment_nesting();
  }
  ~CpuAutocastRegion() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(previous_);
  }
  CpuAutocastRegion(const CpuAutocastRegion&) = delete;
  CpuAutocastRegion& operator=(const CpuAutocastRegion&) = delete;

 private:
  bool previous_;
};

}  // namespace

FcNetImpl::FcNetImpl(const FcShape& shape) {
  int64_t in = shape.input;
  for (int64_t k = 0; k < shape.layer; ++k) {
    hidden_.push_back(register_module("hidden" + std::to_string(k),
                                      torch::nn::Linear(torch::nn::LinearOptions(in, shape.node))));
    in = shape.node;
  }
  head_ = register_module("head", torch::nn::Linear(torch::nn::LinearOptions(in, shape.output)));
}

torch::Tensor FcNetImpl::forward(torch::Tensor x) {
  for (auto& layer : hidden_) x = torch::relu(layer->forward(x));
  return head_->forward(x);
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

FcTrainer::FcTrainer(const ModelSpec& spec, uint64_t seed) : spec_(spec) {
  torch::manual_seed(seed);
  const torch::ScalarType dtype = WeightDtype(spec.precision);
  autocast_ = spec.precision == Precision::kMixedBf16 || spec.precision == Precision::kMixedFp16;
  // Initialize in float32 (LibTorch's initializers), then store in `dtype`.
  model_ = FcNet(spec.fc);
  model_->to(dtype);
  model_->train();
  input_ = (torch::rand({spec.fc.batch, spec.fc.input}, torch::kFloat32) - 0.5).to(dtype);
  labels_ = torch::randint(0, spec.fc.output, {spec.fc.batch}, torch::kLong);

  constexpr double kLr = 0.1;
  switch (spec.optimizer) {
    case OptimizerKind::kRmsProp:
      optimizer_ = std::make_unique<torch::optim::RMSprop>(
          model_->parameters(),
          torch::optim::RMSpropOptions(kLr).alpha(0.9).momentum(0.9).eps(1.0));
      break;
    case OptimizerKind::kSgd:
      optimizer_ =
          std::make_unique<torch::optim::SGD>(model_->parameters(), torch::optim::SGDOptions(kLr));
      break;
    case OptimizerKind::kMomentum:
      optimizer_ = std::make_unique<torch::optim::SGD>(model_->parameters(),
                                                       torch::optim::SGDOptions(kLr).momentum(0.9));
      break;
  }
}

FcTrainer::~FcTrainer() = default;

torch::Tensor FcTrainer::Step() {
  // Fresh gradient tensors each step (set_to_none), as TensorFlow computes
  // them and as PyTorch >= 2.0 does by default: no memset + accumulate.
  model_->zero_grad(/*set_to_none=*/true);
  torch::Tensor loss;
  if (autocast_) {
    CpuAutocastRegion region(spec_.precision == Precision::kMixedBf16 ? at::kBFloat16 : at::kHalf);
    loss = torch::nn::functional::cross_entropy(model_->forward(input_), labels_);
  } else {
    loss = torch::nn::functional::cross_entropy(model_->forward(input_), labels_);
  }
  loss.backward();
  optimizer_->step();
  return loss.detach();
}

}  // namespace paradnn::runner
