#include "worker/runner/models/rnn.h"

#include <memory>

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;
using model::RnnCell;
using model::RnnShape;
using model::RnnShapeOf;

RnnNetImpl::RnnNetImpl(const RnnShape& shape) : cell_(shape.cell) {
  embedding_ = register_module(
      "embedding", torch::nn::Embedding(torch::nn::EmbeddingOptions(shape.vocab, shape.embed)));
  switch (cell_) {
    case RnnCell::kRnn:
      rnn_ = register_module("rnn", torch::nn::RNN(torch::nn::RNNOptions(shape.embed, shape.embed)
                                                       .num_layers(shape.layer)
                                                       .nonlinearity(torch::kTanh)));
      break;
    case RnnCell::kLstm:
      lstm_ = register_module(
          "lstm", torch::nn::LSTM(
                      torch::nn::LSTMOptions(shape.embed, shape.embed).num_layers(shape.layer)));
      break;
    case RnnCell::kGru:
      gru_ = register_module(
          "gru",
          torch::nn::GRU(torch::nn::GRUOptions(shape.embed, shape.embed).num_layers(shape.layer)));
      break;
  }
  head_ = register_module("head",
                          torch::nn::Linear(torch::nn::LinearOptions(shape.embed, shape.vocab)));
}

torch::Tensor RnnNetImpl::forward(const torch::Tensor& tokens) {
  torch::Tensor x = embedding_->forward(tokens);
  // Zero initial states, made by the module in x's dtype.
  switch (cell_) {
    case RnnCell::kRnn:
      x = std::get<0>(rnn_->forward(x));
      break;
    case RnnCell::kLstm:
      x = std::get<0>(lstm_->forward(x));
      break;
    case RnnCell::kGru:
      x = std::get<0>(gru_->forward(x));
      break;
  }
  return head_->forward(x);
}

TrainingProblem BuildRnnProblem(const ModelSpec& spec, const BuildContext& context) {
  const RnnShape shape = RnnShapeOf(spec);
  struct State {
    RnnNet model{nullptr};
    torch::Tensor inputs;   // [length, batch] int64
    torch::Tensor targets;  // [length * batch] int64, same order as the logits
  };
  auto state = std::make_shared<State>();
  // Initialized in float32 (LibTorch's initializers), then stored in the
  // weight dtype on the device.
  state->model = RnnNet(shape);
  TrainingProblem problem;
  problem.parameters = PrepareModule(*state->model, context);
  const auto ids = torch::TensorOptions().device(context.device).dtype(torch::kLong);
  const torch::Tensor tokens = torch::randint(0, shape.vocab, {shape.batch, shape.length + 1}, ids);
  // Made contiguous and time-major here, before timing, so the step has no copies.
  state->inputs = tokens.narrow(1, 0, shape.length).t().contiguous();
  state->targets = tokens.narrow(1, 1, shape.length).t().contiguous().view({-1});
  State* s = state.get();
  const int64_t vocab = shape.vocab;
  problem.forward_loss = [s, vocab] {
    const torch::Tensor logits = s->model->forward(s->inputs);
    return torch::nn::functional::cross_entropy(logits.view({-1, vocab}), s->targets);
  };
  problem.owner = state;
  return problem;
}

}  // namespace paradnn::runner
