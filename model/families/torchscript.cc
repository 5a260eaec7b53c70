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

#include "model/families/torchscript.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/family.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kTorchScriptParams[] = {
    {"batch", 1, kMaxBatch, true, "examples per training step (the -1 of the input shapes)"},
    kDevicesRule,
    kHostsRule,
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    kOverlapRule,
};

constexpr const char* kTorchScriptLosses[] = {"cross_entropy", "mse", "sum", "output"};
constexpr const char* kTensorDtypes[] = {"float32", "int64"};
constexpr size_t kMaxTensorNameBytes = 128;
constexpr int kMaxTensorRank = 8;
constexpr int kMaxTorchScriptInputs = 64;
constexpr int64_t kMaxTensorDim = int64_t{1} << 31;
// Elements of one example of a tensor (the product of its dimensions but
// the batch): 2^28 is 1 GiB of float32, more than any model we time takes
// per example. Each dimension alone may be large ([-1, 2^31, 2^31] was
// accepted and every job then failed to allocate).
constexpr int64_t kMaxTensorElementsPerExample = int64_t{1} << 28;

// One input or target: a name of bounded length, 1..kMaxTensorRank
// dimensions that are positive or -1 (the batch, at most once), dtype
// float32|int64 (empty = float32), and a value range low < high (required
// for int64; both 0 lets the runner pick for float32).
absl::Status CheckTensorSpec(const v1::TensorSpec& tensor, const std::string& path) {
  if (tensor.name().size() > kMaxTensorNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".name: ", tensor.name().size(),
                                                   " bytes; at most ", kMaxTensorNameBytes));
  }
  if (tensor.shape().empty() || tensor.shape_size() > kMaxTensorRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".shape: ", tensor.shape_size(), " dimensions; give 1..", kMaxTensorRank,
                     ", -1 where the batch goes (e.g. [-1, 3, 224, 224])"));
  }
  int batch_dims = 0;
  for (int i = 0; i < tensor.shape_size(); ++i) {
    const int64_t dim = tensor.shape(i);
    if (dim == -1) {
      ++batch_dims;
      continue;
    }
    if (dim < 1 || dim > kMaxTensorDim) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".shape[", i, "]: ", dim,
                                                     " is out of range; allowed 1..", kMaxTensorDim,
                                                     ", or -1 for the batch"));
    }
  }
  if (batch_dims > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".shape: ", batch_dims, " dimensions are -1; only the batch is"));
  }
  int64_t elements = 1;
  for (const int64_t dim : tensor.shape()) {
    if (dim == -1) continue;
    // Dimensions are <= 2^31 and the product so far <= 2^28: no overflow.
    elements *= dim;
    if (elements > kMaxTensorElementsPerExample) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".shape: [", absl::StrJoin(tensor.shape(), ", "), "] holds over ",
                       kMaxTensorElementsPerExample, " elements per example; allowed at most ",
                       kMaxTensorElementsPerExample, " (1 GiB of float32)"));
    }
  }
  if (!tensor.dtype().empty() &&
      !absl::c_linear_search(kTensorDtypes, absl::string_view(tensor.dtype()))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".dtype: ", Quote(tensor.dtype()),
                                                   " is not one of ", AllowedTensorDtypes()));
  }
  if (!std::isfinite(tensor.low()) || !std::isfinite(tensor.high())) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": low and high must be finite numbers"));
  }
  const bool integer = tensor.dtype() == "int64";
  if ((integer || tensor.low() != 0 || tensor.high() != 0) && !(tensor.low() < tensor.high())) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".high: ", tensor.high(), " must be > low ", tensor.low(),
        integer ? " (values are randint(low, high))" : " (values are uniform in [low, high))"));
  }
  return absl::OkStatus();
}

absl::Status CheckTorchScript(const ModelSpec& spec, FieldStyle style) {
  return CheckTorchScriptModel(spec.torchscript,
                               style == FieldStyle::kFlag ? "--torchscript" : "config.torchscript");
}

// The sweep's model: its bytes or the sha256 of a stored one, then what
// CheckTorchScriptModel checks. ValidateSweep has checked that only this
// family's sweeps carry a model.
absl::Status CheckTorchScriptSweep(const v1::SweepSpec& spec) {
  if (!spec.has_torchscript()) {
    return absl::InvalidArgumentError(
        "torchscript: missing; family torchscript needs the model file, its inputs and a loss "
        "rule");
  }
  const v1::TorchScriptModel& model = spec.torchscript();
  if (!model.sha256().empty()) {
    const bool hex = model.sha256().size() == 64 &&
                     std::all_of(model.sha256().begin(), model.sha256().end(), [](char c) {
                       return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
    if (!hex) {
      return absl::InvalidArgumentError(absl::StrCat("torchscript.sha256: ", Quote(model.sha256()),
                                                     " is not 64 lowercase hex digits"));
    }
  }
  if (model.content().empty() && model.sha256().empty()) {
    return absl::InvalidArgumentError(
        "torchscript.content: empty; give the model file (or the sha256 of a model the "
        "coordinator already stores)");
  }
  if (static_cast<int64_t>(model.content().size()) > kMaxTorchScriptBytes) {
    return absl::InvalidArgumentError(absl::StrCat("torchscript.content: ", model.content().size(),
                                                   " bytes; at most ", kMaxTorchScriptBytes,
                                                   " (256 MiB)"));
  }
  if (model.file_name().size() > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("torchscript.file_name: ", model.file_name().size(), " bytes; at most 4096"));
  }
  return CheckTorchScriptModel(model, "torchscript");
}

// Unknown until the model is built: every count 0 (see the file comment).
WorkCounts CountTorchScript(const ModelSpec& /*spec*/) { return WorkCounts{}; }

}  // namespace

std::string AllowedTorchScriptLosses() { return absl::StrJoin(kTorchScriptLosses, "|"); }
std::string AllowedTensorDtypes() { return absl::StrJoin(kTensorDtypes, "|"); }

absl::Status CheckTorchScriptModel(const v1::TorchScriptModel& model, const std::string& path) {
  if (model.inputs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ".inputs: empty; declare forward()'s arguments (shape with -1 for the batch, dtype "
        "float32|int64)"));
  }
  if (model.inputs_size() > kMaxTorchScriptInputs) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".inputs: ", model.inputs_size(),
                                                   " inputs; at most ", kMaxTorchScriptInputs));
  }
  bool batched = false;
  for (int i = 0; i < model.inputs_size(); ++i) {
    const v1::TensorSpec& input = model.inputs(i);
    if (absl::Status s = CheckTensorSpec(input, absl::StrCat(path, ".inputs[", i, "]")); !s.ok()) {
      return s;
    }
    batched =
        batched || std::find(input.shape().begin(), input.shape().end(), -1) != input.shape().end();
  }
  if (!batched) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ".inputs: no shape has a -1; mark the batch dimension of at least one input with -1 (the "
        "sweep's batch fills it)"));
  }
  if (!absl::c_linear_search(kTorchScriptLosses, absl::string_view(model.loss()))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".loss: ", Quote(model.loss()),
                                                   " is not one of ", AllowedTorchScriptLosses()));
  }
  const bool needs_target = model.loss() == "cross_entropy" || model.loss() == "mse";
  if (!needs_target) {
    if (model.has_target()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".target: loss ", model.loss(), " takes no target; leave it out"));
    }
    return absl::OkStatus();
  }
  if (!model.has_target()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".target: missing; loss ", model.loss(), " needs a target tensor (",
                     model.loss() == "cross_entropy" ? "int64 class ids in [0, classes)"
                                                     : "float32, shaped like the output",
                     ")"));
  }
  if (absl::Status s = CheckTensorSpec(model.target(), path + ".target"); !s.ok()) return s;
  const std::string& dtype = model.target().dtype().empty() ? "float32" : model.target().dtype();
  const char* want = model.loss() == "cross_entropy" ? "int64" : "float32";
  if (dtype != want) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".target.dtype: ", Quote(dtype), "; loss ",
                                                   model.loss(), " needs ", want));
  }
  return absl::OkStatus();
}

extern const FamilyDef kTorchScriptFamily = {
    kTorchScriptFamilyName,
    "your own TorchScript model, uploaded with its sweep (inputs and loss declared)",
    kTorchScriptParams,
    {},
    kMatmulRoof,
    CheckTorchScript,
    CountTorchScript,
    CheckTorchScriptSweep};

}  // namespace paradnn::model
