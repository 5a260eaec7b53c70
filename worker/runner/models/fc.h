// The FC family in LibTorch (docs/models.md "FC"):
//   input -> [Linear(node) + ReLU] x layer -> Linear(output), biases on,
// trained with softmax cross-entropy on one synthetic batch.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_FC_H_
#define PARADNN_WORKER_RUNNER_MODELS_FC_H_

#include <torch/torch.h>

#include <vector>

#include "model/families/fc.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::FcShape;
using model::ModelSpec;

class FcNetImpl : public torch::nn::Module {
 public:
  explicit FcNetImpl(const FcShape& shape);
  torch::Tensor forward(torch::Tensor x);

 private:
  std::vector<torch::nn::Linear> hidden_;
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(FcNet);

// Weights from LibTorch's default Linear initialization; the input is
// uniform in [-0.5, 0.5) and labels uniform in [0, output).
TrainingProblem BuildFcProblem(const ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_FC_H_
