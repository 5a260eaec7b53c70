// Family torchscript: what the sweep and the job say about a user's model
// (model/families/torchscript.cc has the family).
#ifndef PARADNN_MODEL_FAMILIES_TORCHSCRIPT_H_
#define PARADNN_MODEL_FAMILIES_TORCHSCRIPT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::model {

inline constexpr const char* kTorchScriptFamilyName = "torchscript";
// The largest model file accepted at submit.
inline constexpr int64_t kMaxTorchScriptBytes = int64_t{256} << 20;

std::string AllowedTorchScriptLosses();  // "cross_entropy|mse|sum|output"
std::string AllowedTensorDtypes();       // "float32|int64"

// The declared inputs (1..64, each 1..8 dimensions, positive or one -1 for
// the batch, at least one batched), the loss rule and the target it needs.
// `path` prefixes every field in errors ("torchscript", "config.torchscript").
absl::Status CheckTorchScriptModel(const v1::TorchScriptModel& model, const std::string& path);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_TORCHSCRIPT_H_
