// ModelSpec: a validated, typed view of a v1::ModelConfig for the families
// this runner builds. Everything downstream (counts, model builders, the
// timing harness) takes a ModelSpec, never the raw proto map, so that every
// configuration error is reported once, here, naming the offending field.
#ifndef PARADNN_MODEL_MODEL_SPEC_H_
#define PARADNN_MODEL_MODEL_SPEC_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::model {

inline constexpr const char* kAllowedPrecisions = "float32|bfloat16|float16|mixed_bf16|mixed_fp16";
inline constexpr const char* kAllowedOptimizers = "rmsprop|sgd|momentum";

enum class Precision {
  kFloat32,
  kBFloat16,   // the whole model, data and optimizer state in bfloat16
  kFloat16,    // the whole model, data and optimizer state in float16
  kMixedBf16,  // float32 master weights, bfloat16 autocast compute
  kMixedFp16,  // float32 master weights, float16 autocast compute
};

enum class OptimizerKind {
  kRmsProp,   // alpha 0.9, momentum 0.9, eps 1.0, lr 0.1
  kSgd,       // lr 0.1
  kMomentum,  // SGD with momentum 0.9, lr 0.1
};

// A validated model configuration. Every hyper-parameter of the family is
// present (defaults filled in), so family code reads them with Param() and
// Option() without checking again.
struct ModelSpec {
  std::string family;
  std::map<std::string, int64_t> params;
  std::map<std::string, std::string> options;
  Precision precision = Precision::kFloat32;
  OptimizerKind optimizer = OptimizerKind::kRmsProp;
  v1::TorchScriptModel torchscript;  // family torchscript only

  // Examples per training step: every family that trains has "batch" (the
  // allreduce family trains nothing and has none: never asked of it).
  int64_t batch() const { return Param("batch"); }
  // The value of a hyper-parameter the family declares; aborts (a broken
  // invariant) for a key that ParseModelSpec did not fill in.
  int64_t Param(const std::string& key) const;
  const std::string& Option(const std::string& key) const;
};

// How error messages name a field: as the proto path a job carries
// ("config.params.layer") or as the command-line flag ("--layer").
enum class FieldStyle { kProto, kFlag };

// Validates `config` against its family (family.h) and returns its typed
// form with defaults filled in. Empty precision means float32 and empty
// optimizer means rmsprop. Returns InvalidArgument naming the field and the
// allowed values for an unknown family, precision, optimizer or key, a
// missing or out-of-range value, or a family rule that fails.
absl::StatusOr<ModelSpec> ParseModelSpec(const v1::ModelConfig& config, FieldStyle style);

// `config` with the defaults ParseModelSpec applies written out (params,
// options, precision, optimizer), so that a stored result says what was
// measured. Unparseable parts are left as they are.
v1::ModelConfig NormalizedConfig(const v1::ModelConfig& config);

const char* PrecisionName(Precision precision);
const char* OptimizerName(OptimizerKind optimizer);

// Bytes per element of the weights (and their gradients and optimizer
// state) and of the activations for `precision`.
int WeightElementBytes(Precision precision);
int ActivationElementBytes(Precision precision);

// Number of per-parameter state tensors the optimizer keeps
// (RMSProp with momentum: square average + momentum buffer).
int OptimizerStateTensors(OptimizerKind optimizer);

// One-line description, keys in name order, e.g. "fc batch=256 input=2000
// layer=4 node=1024 output=200 float32 rmsprop".
std::string DescribeSpec(const ModelSpec& spec);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_MODEL_SPEC_H_
