#include "worker/runner/models/torchscript.h"

#include <torch/script.h>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;
namespace {

std::vector<int64_t> ShapeFor(const v1::TensorSpec& spec, int64_t batch) {
  std::vector<int64_t> shape(spec.shape().begin(), spec.shape().end());
  for (int64_t& dim : shape) {
    if (dim == -1) dim = batch;
  }
  return shape;
}

// Synthetic data for one declared tensor, on the device.
torch::Tensor MakeTensor(const v1::TensorSpec& spec, int64_t batch, const BuildContext& context) {
  const std::vector<int64_t> shape = ShapeFor(spec, batch);
  const auto on_device = torch::TensorOptions().device(context.device);
  if (spec.dtype() == "int64") {
    return torch::randint(static_cast<int64_t>(spec.low()), static_cast<int64_t>(spec.high()),
                          shape, on_device.dtype(torch::kLong));
  }
  double low = spec.low();
  double high = spec.high();
  if (low == 0 && high == 0) {
    low = -0.5;
    high = 0.5;
  }
  return (torch::rand(shape, on_device.dtype(torch::kFloat32)) * (high - low) + low)
      .to(context.input_dtype);
}

// A loaded module's tensors to the device; floating-point ones to `dtype`.
// jit::Module::to would also cast integer buffers (e.g. BatchNorm's
// num_batches_tracked), which the model's code does not expect.
void MoveModule(torch::jit::Module& module, const BuildContext& context) {
  torch::NoGradGuard no_grad;
  auto move = [&](torch::Tensor t) {
    const torch::ScalarType dtype = t.is_floating_point() ? context.weight_dtype : t.scalar_type();
    if (t.device() != context.device || t.scalar_type() != dtype) {
      t.set_data(t.to(context.device, dtype));
    }
  };
  for (const torch::Tensor& p : module.parameters(/*recurse=*/true)) move(p);
  for (const torch::Tensor& b : module.buffers(/*recurse=*/true)) move(b);
}

}  // namespace

TrainingProblem BuildTorchScriptProblem(const ModelSpec& spec, const BuildContext& context) {
  const v1::TorchScriptModel& declared = spec.torchscript;
  if (context.torchscript_content == nullptr || context.torchscript_content->empty()) {
    throw std::invalid_argument(absl::StrCat(
        "family torchscript: the job carries no model bytes (RunnerJob.torchscript_content is "
        "empty for model sha256 ",
        declared.sha256().empty() ? std::string("(none)") : declared.sha256(), ")"));
  }
  struct State {
    torch::jit::Module module;
    std::vector<c10::IValue> inputs;
    torch::Tensor target;
    std::string loss;
  };
  auto state = std::make_shared<State>();
  {
    std::istringstream stream(*context.torchscript_content);
    state->module = torch::jit::load(stream, context.device);
  }
  MoveModule(state->module, context);
  state->module.train();

  TrainingProblem problem;
  for (const torch::Tensor& p : state->module.parameters(/*recurse=*/true)) {
    if (p.requires_grad()) problem.parameters.push_back(p);
  }
  const int64_t batch = spec.batch();
  for (const v1::TensorSpec& input : declared.inputs()) {
    state->inputs.emplace_back(MakeTensor(input, batch, context));
  }
  state->loss = declared.loss();
  if (declared.has_target() && (state->loss == "cross_entropy" || state->loss == "mse")) {
    state->target = MakeTensor(declared.target(), batch, context);
  }

  State* s = state.get();
  problem.forward_loss = [s]() -> torch::Tensor {
    c10::IValue result = s->module.forward(s->inputs);
    if (!result.isTensor()) {
      throw std::invalid_argument(absl::StrCat("family torchscript: forward() returned ",
                                               result.tagKind(), "; loss ", s->loss,
                                               " needs it to return one Tensor"));
    }
    torch::Tensor output = result.toTensor();
    if (s->loss == "cross_entropy") {
      return torch::nn::functional::cross_entropy(output, s->target);
    }
    if (s->loss == "mse") {
      if (output.sizes() != s->target.sizes()) {
        throw std::invalid_argument(absl::StrCat(
            "family torchscript: loss mse: the output has shape ", c10::str(output.sizes()),
            " but the declared target has shape ", c10::str(s->target.sizes())));
      }
      return torch::nn::functional::mse_loss(output, s->target.to(output.scalar_type()));
    }
    if (s->loss == "sum") return output.sum();
    // "output": forward returns the loss itself.
    if (output.numel() != 1) {
      throw std::invalid_argument(absl::StrCat(
          "family torchscript: loss output needs forward() to return a scalar loss; it returned "
          "shape ",
          c10::str(output.sizes())));
    }
    return output.reshape({});
  };
  problem.owner = state;
  return problem;
}

}  // namespace paradnn::runner
