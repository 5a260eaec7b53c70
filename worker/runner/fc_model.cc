#include "worker/runner/fc_model.h"

#include <memory>
#include <string>

namespace paradnn::runner {

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

TrainingProblem BuildFcProblem(const ModelSpec& spec, const BuildContext& context) {
  const FcShape shape = FcShapeOf(spec);
  struct State {
    FcNet model{nullptr};
    torch::Tensor input;
    torch::Tensor labels;
  };
  auto state = std::make_shared<State>();
  // Initialized in float32 (LibTorch's initializers), then stored in the
  // weight dtype on the device.
  state->model = FcNet(shape);
  TrainingProblem problem;
  problem.parameters = PrepareModule(*state->model, context);
  const auto on_device = torch::TensorOptions().device(context.device);
  state->input = (torch::rand({shape.batch, shape.input}, on_device.dtype(torch::kFloat32)) - 0.5)
                     .to(context.input_dtype);
  state->labels = torch::randint(0, shape.output, {shape.batch}, on_device.dtype(torch::kLong));
  State* s = state.get();
  problem.forward_loss = [s] {
    return torch::nn::functional::cross_entropy(s->model->forward(s->input), s->labels);
  };
  problem.owner = state;
  return problem;
}

}  // namespace paradnn::runner
