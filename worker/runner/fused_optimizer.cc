#include "worker/runner/fused_optimizer.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstdint>
#include <utility>

#include "worker/runner/fused_update_kernels.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::OptimizerKind;
namespace {

// The suite's hyper-parameters (docs/models.md, docs/measurement.md).
constexpr double kLearningRate = 0.1;
constexpr double kRmsPropAlpha = 0.9;
constexpr double kRmsPropEps = 1.0;
constexpr double kMomentum = 0.9;

// Elements one thread updates at least (1 MiB of float32 weights): below
// this a parameter's update, microseconds long, stays on the calling thread
// rather than wake the pool (LibTorch splits each element-wise operation
// from 32,768 elements).
constexpr int64_t kGrainElements = 262144;

// The update's float32 constants, as LibTorch's kernels use them.
UpdateConstants SuiteConstants() {
  UpdateConstants c;
  c.lr_negated = static_cast<float>(-kLearningRate);
  c.alpha = static_cast<float>(kRmsPropAlpha);
  c.one_minus_alpha = static_cast<float>(1 - kRmsPropAlpha);
  c.eps = static_cast<float>(kRmsPropEps);
  c.momentum = static_cast<float>(kMomentum);
  return c;
}

// Whether the fused kernels can update `p`: on the CPU, a dtype they
// handle, and its elements one dense block (so the gradient and the state,
// laid out like it, line up element for element in memory order).
bool FusedUpdatable(const torch::Tensor& p) {
  const torch::ScalarType t = p.scalar_type();
  return p.device().is_cpu() && p.is_non_overlapping_and_dense() &&
         (t == torch::kFloat32 || t == torch::kBFloat16 || t == torch::kFloat16);
}

class FusedCpuOptimizer final : public TrainingOptimizer {
 public:
  FusedCpuOptimizer(OptimizerKind kind, std::vector<torch::Tensor> parameters)
      : kind_(kind), parameters_(std::move(parameters)), state_(parameters_.size()) {}

  void Step() override {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      const torch::Tensor& grad = parameters_[i].grad();
      if (!grad.defined()) continue;
      StepParameter(parameters_[i], grad, state_[i]);
    }
  }

  bool fused() const override { return true; }

 private:
  // Created at a parameter's first update, laid out like it.
  struct State {
    torch::Tensor square_avg;       // RMSprop
    torch::Tensor momentum_buffer;  // RMSprop and SGD with momentum
    bool momentum_started = false;  // SGD with momentum: buffer holds a gradient
  };

  void StepParameter(torch::Tensor& param, const torch::Tensor& grad_in, State& state) {
    // Autograd makes a gradient laid out like its parameter; should one not
    // be, copy it into that layout rather than update mismatched elements.
    torch::Tensor grad = grad_in;
    if (grad.strides() != param.strides() || grad.scalar_type() != param.scalar_type()) {
      grad = torch::empty_like(param);
      grad.copy_(grad_in);
    }
    if (kind_ == OptimizerKind::kRmsProp && !state.square_avg.defined()) {
      state.square_avg = torch::zeros_like(param);
      state.momentum_buffer = torch::zeros_like(param);
    }
    if (kind_ == OptimizerKind::kMomentum && !state.momentum_buffer.defined()) {
      state.momentum_buffer = torch::empty_like(param);
    }
    // The dtypes FusedUpdatable admits.
    switch (param.scalar_type()) {
      case torch::kFloat32:
        Update<float>(param, grad, state);
        break;
      case torch::kBFloat16:
        Update<c10::BFloat16>(param, grad, state);
        break;
      case torch::kFloat16:
        Update<c10::Half>(param, grad, state);
        break;
      default:
        TORCH_CHECK(false, "fused optimizer: no kernel for ", param.scalar_type());
    }
    state.momentum_started = true;
  }

  // The update of one parameter stored as T, its gradient laid out alike.
  template <typename T>
  void Update(torch::Tensor& param, const torch::Tensor& grad, State& state) const {
    T* p = param.data_ptr<T>();
    const T* g = grad.data_ptr<T>();
    const UpdateConstants c = SuiteConstants();
    switch (kind_) {
      case OptimizerKind::kRmsProp: {
        T* sq = state.square_avg.data_ptr<T>();
        T* buf = state.momentum_buffer.data_ptr<T>();
        at::parallel_for(0, param.numel(), kGrainElements, [&](int64_t begin, int64_t end) {
          RmsPropMomentumRange(p, g, sq, buf, begin, end, c);
        });
        return;
      }
      case OptimizerKind::kMomentum: {
        T* buf = state.momentum_buffer.data_ptr<T>();
        const bool first_step = !state.momentum_started;
        at::parallel_for(0, param.numel(), kGrainElements, [&](int64_t begin, int64_t end) {
          MomentumRange(p, g, buf, first_step, begin, end, c);
        });
        return;
      }
      case OptimizerKind::kSgd:
        at::parallel_for(0, param.numel(), kGrainElements,
                         [&](int64_t begin, int64_t end) { SgdRange(p, g, begin, end, c); });
        return;
    }
  }

  OptimizerKind kind_;
  std::vector<torch::Tensor> parameters_;
  std::vector<State> state_;
};

class TorchOptimizer final : public TrainingOptimizer {
 public:
  explicit TorchOptimizer(std::unique_ptr<torch::optim::Optimizer> optimizer)
      : optimizer_(std::move(optimizer)) {}
  void Step() override { optimizer_->step(); }
  bool fused() const override { return false; }

 private:
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

}  // namespace

std::unique_ptr<torch::optim::Optimizer> MakeTorchOptimizer(
    OptimizerKind kind, const std::vector<torch::Tensor>& parameters) {
  switch (kind) {
    case OptimizerKind::kRmsProp:
      return std::make_unique<torch::optim::RMSprop>(parameters,
                                                     torch::optim::RMSpropOptions(kLearningRate)
                                                         .alpha(kRmsPropAlpha)
                                                         .momentum(kMomentum)
                                                         .eps(kRmsPropEps));
    case OptimizerKind::kSgd:
      return std::make_unique<torch::optim::SGD>(parameters,
                                                 torch::optim::SGDOptions(kLearningRate));
    case OptimizerKind::kMomentum:
      return std::make_unique<torch::optim::SGD>(
          parameters, torch::optim::SGDOptions(kLearningRate).momentum(kMomentum));
  }
  return nullptr;
}

std::unique_ptr<TrainingOptimizer> MakeTrainingOptimizer(
    OptimizerKind kind, const std::vector<torch::Tensor>& parameters) {
  bool fusable = true;
  for (const torch::Tensor& p : parameters) fusable = fusable && FusedUpdatable(p);
  if (fusable) return std::make_unique<FusedCpuOptimizer>(kind, parameters);
  return std::make_unique<TorchOptimizer>(MakeTorchOptimizer(kind, parameters));
}

}  // namespace paradnn::runner
