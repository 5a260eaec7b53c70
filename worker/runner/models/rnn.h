// The RNN family in LibTorch (docs/models.md "RNN"): a next-token
// language model
//   Embedding[vocab, embed] -> `layer` x RNN(tanh)/LSTM/GRU (hidden = embed,
//   LibTorch's fused multi-layer module) -> Linear(embed -> vocab) at every
//   position -> cross-entropy over batch x length,
// trained on one synthetic batch of token ids.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_RNN_H_
#define PARADNN_WORKER_RUNNER_MODELS_RNN_H_

#include <torch/torch.h>

#include "model/families/rnn.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;
using model::RnnCell;
using model::RnnShape;

// Time-major (batch_first = false): the layout LibTorch's CPU RNN kernels
// run in, so no transposes enter the step.
class RnnNetImpl : public torch::nn::Module {
 public:
  explicit RnnNetImpl(const RnnShape& shape);
  // tokens [length, batch] int64 -> logits [length, batch, vocab].
  torch::Tensor forward(const torch::Tensor& tokens);

 private:
  RnnCell cell_;
  torch::nn::Embedding embedding_{nullptr};
  // Exactly one of these is set, by cell_.
  torch::nn::RNN rnn_{nullptr};
  torch::nn::LSTM lstm_{nullptr};
  torch::nn::GRU gru_{nullptr};
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(RnnNet);

// LibTorch's default initializers (embedding N(0, 1); cells and Linear
// uniform). Tokens [batch, length + 1] uniform in [0, vocab): inputs are
// the first `length`, targets the last `length`.
TrainingProblem BuildRnnProblem(const ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_RNN_H_
