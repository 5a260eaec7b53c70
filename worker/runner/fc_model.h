// The FC family in LibTorch (PARADNN_MODELS.md "FC"):
//   input -> [Linear(node) + ReLU] x layer -> Linear(output), biases on,
// trained with softmax cross-entropy on one synthetic batch.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_FC_MODEL_H_
#define PARADNN_WORKER_RUNNER_FC_MODEL_H_

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "worker/runner/model_spec.h"

namespace paradnn::runner {

class FcNetImpl : public torch::nn::Module {
 public:
  explicit FcNetImpl(const FcShape& shape);
  torch::Tensor forward(torch::Tensor x);

 private:
  std::vector<torch::nn::Linear> hidden_;
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(FcNet);

// Elements of every trainable parameter of `module`.
int64_t CountParameters(const torch::nn::Module& module);

// dtype of the stored weights (float32 for mixed precision) and of the
// synthetic input for `precision`.
torch::ScalarType WeightDtype(Precision precision);

// One FC training set-up on the CPU: model, optimizer and the synthetic batch,
// all made by the constructor (so nothing is allocated lazily inside a timed
// step other than what a step itself allocates). Weights come from LibTorch's
// default Linear initialization under torch::manual_seed(seed); the input is
// uniform in [-0.5, 0.5) and labels uniform in [0, output).
// Constructor and Step() throw c10::Error / std::bad_alloc; the caller turns
// them into outcomes. Not thread-safe.
class FcTrainer {
 public:
  FcTrainer(const ModelSpec& spec, uint64_t seed);
  ~FcTrainer();

  // One full training step: zero_grad (gradients set to none), forward
  // (under CPU autocast for mixed precision), softmax cross-entropy,
  // backward, optimizer step. Returns the loss as a detached 0-dim tensor.
  // On the CPU every kernel has finished when Step() returns.
  torch::Tensor Step();

  FcNet& model() { return model_; }

 private:
  ModelSpec spec_;
  FcNet model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  torch::Tensor input_;
  torch::Tensor labels_;
  bool autocast_ = false;
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_FC_MODEL_H_
