#include "worker/runner/models/fc.h"

#include <memory>
#include <string>

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::FcShape;
using model::FcShapeOf;
using model::ModelSpec;

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
  // Initialized in float32 (LibTorch's initializers), then stored in the
  // weight dtype on the device.
  FcNet model(shape);
  return SyntheticClassificationProblem(
      model.ptr(), [net = model.get()](const torch::Tensor& x) { return net->forward(x); },
      {shape.batch, shape.input}, /*input_low=*/-0.5, shape.output, context);
}

}  // namespace paradnn::runner
