// MultiTensorOptimizer: the suite's optimizers (RMSprop, SGD, SGD with
// momentum) stepping every parameter at once with LibTorch's multi-tensor
// (`_foreach_`) ops.
//
// The update is the one torch::optim::RMSprop / SGD compute, element for
// element (the unit test compares them bit for bit), but in a handful of
// operator calls per step instead of several per parameter: torch::optim
// runs each parameter's update as separate autograd-layer calls and keys its
// state by a string made from the tensor's address, which on a small model
// costs more than the arithmetic. PyTorch's Python optimizers take the same
// path with `foreach=True` (the default on CUDA since 2.0).
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
  void StepGroup(const Group& group);

  std::vector<torch::Tensor> parameters_;
  std::vector<State> state_;
  MultiTensorOptions options_;
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MULTI_TENSOR_OPTIMIZER_H_
