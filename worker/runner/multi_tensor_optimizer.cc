#include "worker/runner/multi_tensor_optimizer.h"

#include <utility>

namespace paradnn::runner {

MultiTensorOptimizer::MultiTensorOptimizer(std::vector<torch::Tensor> parameters,
                                           MultiTensorOptions options)
    : parameters_(std::move(parameters)), state_(parameters_.size()), options_(options) {}

namespace {

// Bytes of parameters one group of multi-tensor calls updates on CUDA.
// RMSprop makes a temporary (the root of the average) per parameter it
// updates at once; grouping keeps that within this bound (or one parameter,
// if larger), while a small model's parameters still go in one group.
constexpr int64_t kCudaGroupBytes = int64_t{64} << 20;

}  // namespace

void MultiTensorOptimizer::Step() {
  torch::NoGradGuard no_grad;
  // On the CPU, one parameter at a time: each parameter's whole update runs
  // while it is in cache, where the multi-tensor ops sweep every parameter
  // once per op (FC 4x32 batch 64, one thread: 0.42 ms per step that way,
  // 0.39 ms per parameter). On CUDA, multi-tensor: one kernel launch per op
  // for a group instead of one per op per parameter.
  int64_t group_limit = options_.group_bytes;
  if (group_limit == MultiTensorOptions::kByDevice) {
    group_limit = !parameters_.empty() && parameters_.front().is_cuda() ? kCudaGroupBytes : 0;
  }
  Group group;
  int64_t group_bytes = 0;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const torch::Tensor& grad = parameters_[i].grad();
    if (!grad.defined()) continue;
    const int64_t bytes = parameters_[i].numel() * parameters_[i].element_size();
    if (!group.params.empty() && group_bytes + bytes > group_limit) {
      StepGroup(group);
      group = Group();
      group_bytes = 0;
    }
    group.params.push_back(parameters_[i]);
    group.grads.push_back(grad);
    group.states.push_back(&state_[i]);
    group_bytes += bytes;
  }
  if (!group.params.empty()) StepGroup(group);
}

void MultiTensorOptimizer::StepOne(torch::Tensor& param, const torch::Tensor& grad,
                                   State& state) {
  if (options_.kind == MultiTensorOptions::kSgd) {
    if (options_.momentum == 0) {
      param.add_(grad, -options_.lr);
      return;
    }
    if (!state.momentum_buffer.defined()) {
      state.momentum_buffer = torch::clone(grad).detach();
    } else {
      state.momentum_buffer.mul_(options_.momentum).add_(grad);
    }
    param.add_(state.momentum_buffer, -options_.lr);
    return;
  }
  if (!state.square_avg.defined()) {
    state.square_avg = torch::zeros_like(param);
    if (options_.momentum > 0) state.momentum_buffer = torch::zeros_like(param);
  }
  state.square_avg.mul_(options_.alpha).addcmul_(grad, grad, 1 - options_.alpha);
  torch::Tensor avg = state.square_avg.sqrt().add_(options_.eps);
  if (options_.momentum > 0) {
    state.momentum_buffer.mul_(options_.momentum).addcdiv_(grad, avg);
    param.add_(state.momentum_buffer, -options_.lr);
  } else {
    param.addcdiv_(grad, avg, -options_.lr);
  }
}

void MultiTensorOptimizer::StepGroup(Group& group) {
  if (group.params.size() == 1) {
    StepOne(group.params[0], group.grads[0], *group.states[0]);
    return;
  }
  const std::vector<torch::Tensor>& params = group.params;
  const std::vector<torch::Tensor>& grads = group.grads;
  if (options_.kind == MultiTensorOptions::kSgd) {
    if (options_.momentum == 0) {
      torch::_foreach_add_(params, grads, -options_.lr);
      return;
    }
    // buf = grad at a parameter's first update, momentum * buf + grad after.
    std::vector<torch::Tensor> continuing;
    std::vector<torch::Tensor> continuing_grads;
    std::vector<torch::Tensor> buffers;
    for (size_t i = 0; i < params.size(); ++i) {
      State& state = *group.states[i];
      if (!state.momentum_buffer.defined()) {
        state.momentum_buffer = torch::clone(grads[i]).detach();
      } else {
        continuing.push_back(state.momentum_buffer);
        continuing_grads.push_back(grads[i]);
      }
      buffers.push_back(state.momentum_buffer);
    }
    if (!continuing.empty()) {
      torch::_foreach_mul_(continuing, options_.momentum);
      torch::_foreach_add_(continuing, continuing_grads);
    }
    torch::_foreach_add_(params, buffers, -options_.lr);
    return;
  }

  // RMSprop (not centered, no weight decay), as torch::optim::RMSprop.
  std::vector<torch::Tensor> square_avgs;
  std::vector<torch::Tensor> buffers;
  for (size_t i = 0; i < params.size(); ++i) {
    State& state = *group.states[i];
    if (!state.square_avg.defined()) {
      state.square_avg = torch::zeros_like(params[i]);
      if (options_.momentum > 0) state.momentum_buffer = torch::zeros_like(params[i]);
    }
    square_avgs.push_back(state.square_avg);
    if (options_.momentum > 0) buffers.push_back(state.momentum_buffer);
  }
  torch::_foreach_mul_(square_avgs, options_.alpha);
  torch::_foreach_addcmul_(square_avgs, grads, grads, 1 - options_.alpha);
  std::vector<torch::Tensor> avg = torch::_foreach_sqrt(square_avgs);
  torch::_foreach_add_(avg, options_.eps);
  if (options_.momentum > 0) {
    torch::_foreach_mul_(buffers, options_.momentum);
    torch::_foreach_addcdiv_(buffers, grads, avg);
    torch::_foreach_add_(params, buffers, -options_.lr);
  } else {
    torch::_foreach_addcdiv_(params, grads, avg, -options_.lr);
  }
}

}  // namespace paradnn::runner
