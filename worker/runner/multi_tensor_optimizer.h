// MultiTensorOptimizer: the suite's optimizers (RMSprop, SGD, SGD with
// momentum), computing the update torch::optim::RMSprop / SGD compute,
// element for element (the unit test compares them bit for bit).
//
// On CUDA every parameter of a group is updated at once with LibTorch's
// multi-tensor (`_foreach_`) ops: one kernel launch per operation for the
// group instead of one per operation per parameter, the path PyTorch's
// Python optimizers take on CUDA by default since 2.0 (`foreach=True`). On
// the CPU the parameters go one at a time with the plain in-place ops, as
// torch::optim does (cache locality wins there), without torch::optim's
// state lookup by a string made from each tensor's address.
#ifndef PARADNN_WORKER_RUNNER_MULTI_TENSOR_OPTIMIZER_H_
#define PARADNN_WORKER_RUNNER_MULTI_TENSOR_OPTIMIZER_H_

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace paradnn::runner {

struct MultiTensorOptions {
  enum Kind { kRmsProp, kSgd };
  Kind kind = kSgd;
  double lr = 0.1;
  double momentum = 0;  // SGD and RMSprop; 0 = none
  double alpha = 0.99;  // RMSprop: smoothing of the squared-gradient average
  double eps = 1e-8;    // RMSprop: added to the root of that average
  // Most parameter bytes one series of multi-tensor calls updates; 0: one
  // parameter at a time. kByDevice: 64 MiB on CUDA, 0 on the CPU.
  static constexpr int64_t kByDevice = -1;
  int64_t group_bytes = kByDevice;
};

class MultiTensorOptimizer {
 public:
  // `parameters` must outlive the optimizer (they are the model's).
  MultiTensorOptimizer(std::vector<torch::Tensor> parameters, MultiTensorOptions options);

  // One update of every parameter that has a gradient (as torch::optim,
  // parameters without one are left alone and their state untouched).
  void Step();

 private:
  // Per parameter, created at its first update as torch::optim creates it:
  // RMSprop's square average and momentum buffer start at zero; SGD's
  // momentum buffer starts as a copy of the first gradient.
  struct State {
    torch::Tensor square_avg;
    torch::Tensor momentum_buffer;
  };

  // Parameters updated by one series of multi-tensor calls.
  struct Group {
    std::vector<torch::Tensor> params;
    std::vector<torch::Tensor> grads;
    std::vector<State*> states;
  };
  void StepGroup(Group& group);
  // The same update with the plain in-place ops, for a group of one.
  void StepOne(torch::Tensor& param, const torch::Tensor& grad, State& state);

  std::vector<torch::Tensor> parameters_;
  std::vector<State> state_;
  MultiTensorOptions options_;
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MULTI_TENSOR_OPTIMIZER_H_
