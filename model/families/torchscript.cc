// Family torchscript: a user's own TorchScript model (torch.jit.script or
// trace output), uploaded with its sweep, stored once by the coordinator and
// shipped to the runner in RunnerJob.torchscript_content.
//
// Its one hyper-parameter is `batch` (the -1 in the declared input shapes).
// Nothing about an arbitrary model's work is known without building it, so
// the analytic counts are all 0 ("unknown") and never guessed: the runner
// fills counts.params and a memory estimate of weights, gradients and
// optimizer state from the loaded module once it is built (trainer.cc), and
// model_flops stays 0, so no FLOP rate or utilization is claimed.

#include <string>

#include "absl/strings/str_cat.h"
#include "model/family.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kTorchScriptParams[] = {
    {"batch", 1, int64_t{1} << 24, 0, "examples per training step (the -1 of the input shapes)"},
};

// The model's own field, named like the job carries it.
std::string ModelField(FieldStyle style, const std::string& key) {
  return style == FieldStyle::kFlag ? absl::StrCat("--torchscript (", key, ")")
                                    : absl::StrCat("config.torchscript.", key);
}

absl::Status CheckTorchScript(const ModelSpec& spec, FieldStyle style) {
  const v1::TorchScriptModel& model = spec.torchscript;
  if (model.inputs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        ModelField(style, "inputs"),
        ": empty; family torchscript runs from a job (a torchscript sweep, --job-stdin) that "
        "declares forward()'s inputs"));
  }
  for (int i = 0; i < model.inputs_size(); ++i) {
    const v1::TensorSpec& input = model.inputs(i);
    const std::string field = ModelField(style, absl::StrCat("inputs[", i, "]"));
    if (input.shape().empty()) return absl::InvalidArgumentError(field + ".shape: empty");
    for (int64_t dim : input.shape()) {
      if (dim < 1 && dim != -1) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".shape: ", dim, " is not a positive size or -1 (the batch)"));
      }
    }
    if (!input.dtype().empty() && input.dtype() != "float32" && input.dtype() != "int64") {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".dtype: '", input.dtype(), "' is not one of float32|int64"));
    }
    if (input.dtype() == "int64" && !(input.low() < input.high())) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": int64 values need low < high (randint(low, high))"));
    }
  }
  const std::string& loss = model.loss();
  if (loss != "cross_entropy" && loss != "mse" && loss != "sum" && loss != "output") {
    return absl::InvalidArgumentError(absl::StrCat(ModelField(style, "loss"), ": '", loss,
                                                   "' is not one of cross_entropy|mse|sum|output"));
  }
  if (loss == "cross_entropy" || loss == "mse") {
    const std::string want = loss == "cross_entropy" ? "int64" : "float32";
    const std::string dtype = model.target().dtype().empty() ? "float32" : model.target().dtype();
    if (!model.has_target() || model.target().shape().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(ModelField(style, "target"),
                                                     ": missing; loss ", loss, " needs a ", want,
                                                     " target"));
    }
    if (dtype != want) {
      return absl::InvalidArgumentError(absl::StrCat(ModelField(style, "target.dtype"), ": '",
                                                     dtype, "'; loss ", loss, " needs ", want));
    }
    if (want == "int64" && !(model.target().low() < model.target().high())) {
      return absl::InvalidArgumentError(absl::StrCat(
          ModelField(style, "target"), ": class ids need low < high (randint(low, high))"));
    }
  }
  return absl::OkStatus();
}

// Unknown until the model is built: every count 0 (see the file comment).
WorkCounts CountTorchScript(const ModelSpec& /*spec*/) { return WorkCounts{}; }

}  // namespace

extern const FamilyDef kTorchScriptFamily = {
    "torchscript", "your own TorchScript model, uploaded with its sweep (inputs and loss declared)",
    kTorchScriptParams, {}, CheckTorchScript, CountTorchScript};

}  // namespace paradnn::model
