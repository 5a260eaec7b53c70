#include "worker/runner/model_spec.h"

#include <array>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::runner {
namespace {

constexpr std::array<const char*, 5> kFcKeys = {"layer", "node", "input", "output", "batch"};

std::string FieldName(FieldStyle style, const std::string& proto_path, const std::string& flag) {
  return style == FieldStyle::kFlag ? absl::StrCat("--", flag) : proto_path;
}

absl::StatusOr<Precision> ParsePrecision(const std::string& raw, FieldStyle style) {
  const std::string name = absl::AsciiStrToLower(raw);
  if (name.empty() || name == "float32") return Precision::kFloat32;
  if (name == "bfloat16") return Precision::kBFloat16;
  if (name == "float16") return Precision::kFloat16;
  if (name == "mixed_bf16") return Precision::kMixedBf16;
  if (name == "mixed_fp16") return Precision::kMixedFp16;
  return absl::InvalidArgumentError(absl::StrCat(FieldName(style, "config.precision", "precision"),
                                                 ": '", raw, "' is not one of ",
                                                 kAllowedPrecisions));
}

absl::StatusOr<OptimizerKind> ParseOptimizer(const std::string& raw, FieldStyle style) {
  const std::string name = absl::AsciiStrToLower(raw);
  if (name.empty() || name == "rmsprop") return OptimizerKind::kRmsProp;
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "momentum") return OptimizerKind::kMomentum;
  return absl::InvalidArgumentError(absl::StrCat(FieldName(style, "config.optimizer", "optimizer"),
                                                 ": '", raw, "' is not one of ",
                                                 kAllowedOptimizers));
}

absl::StatusOr<int64_t> RequirePositive(const v1::ModelConfig& config, const char* key, int64_t max,
                                        FieldStyle style) {
  const std::string field = FieldName(style, absl::StrCat("config.params.", key), key);
  auto it = config.params().find(key);
  if (it == config.params().end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": required for family fc (an integer in 1..", max, ")"));
  }
  if (it->second <= 0 || it->second > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", it->second, " is out of range; allowed 1..", max));
  }
  return it->second;
}

}  // namespace

absl::StatusOr<ModelSpec> ParseModelSpec(const v1::ModelConfig& config, FieldStyle style) {
  ModelSpec spec;
  spec.family = absl::AsciiStrToLower(config.family());
  if (spec.family != "fc") {
    return absl::InvalidArgumentError(
        absl::StrCat(FieldName(style, "config.family", "family"), ": '", config.family(),
                     "' is not a family this runner builds; allowed: ", kAllowedFamilies));
  }
  for (const auto& [key, value] : config.params()) {
    bool known = false;
    for (const char* k : kFcKeys) known = known || key == k;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          FieldName(style, absl::StrCat("config.params.", key), key),
          ": unknown hyper-parameter for family fc; allowed: ", absl::StrJoin(kFcKeys, ", ")));
    }
  }
  if (!config.options().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        FieldName(style, absl::StrCat("config.options.", config.options().begin()->first),
                  config.options().begin()->first),
        ": family fc takes no categorical options"));
  }
  auto layer = RequirePositive(config, "layer", kMaxFcLayer, style);
  if (!layer.ok()) return layer.status();
  auto node = RequirePositive(config, "node", kMaxFcWidth, style);
  if (!node.ok()) return node.status();
  auto input = RequirePositive(config, "input", kMaxFcWidth, style);
  if (!input.ok()) return input.status();
  auto output = RequirePositive(config, "output", kMaxFcWidth, style);
  if (!output.ok()) return output.status();
  auto batch = RequirePositive(config, "batch", kMaxFcBatch, style);
  if (!batch.ok()) return batch.status();
  spec.fc = FcShape{*layer, *node, *input, *output, *batch};

  auto precision = ParsePrecision(config.precision(), style);
  if (!precision.ok()) return precision.status();
  spec.precision = *precision;
  auto optimizer = ParseOptimizer(config.optimizer(), style);
  if (!optimizer.ok()) return optimizer.status();
  spec.optimizer = *optimizer;
  return spec;
}

v1::ModelConfig NormalizedConfig(const v1::ModelConfig& config) {
  v1::ModelConfig out = config;
  out.set_family(absl::AsciiStrToLower(config.family()));
  if (auto p = ParsePrecision(config.precision(), FieldStyle::kProto); p.ok()) {
    out.set_precision(PrecisionName(*p));
  }
  if (auto o = ParseOptimizer(config.optimizer(), FieldStyle::kProto); o.ok()) {
    out.set_optimizer(OptimizerName(*o));
  }
  return out;
}

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return "float32";
    case Precision::kBFloat16:
      return "bfloat16";
    case Precision::kFloat16:
      return "float16";
    case Precision::kMixedBf16:
      return "mixed_bf16";
    case Precision::kMixedFp16:
      return "mixed_fp16";
  }
  return "float32";
}

const char* OptimizerName(OptimizerKind optimizer) {
  switch (optimizer) {
    case OptimizerKind::kRmsProp:
      return "rmsprop";
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kMomentum:
      return "momentum";
  }
  return "rmsprop";
}

int WeightElementBytes(Precision precision) {
  switch (precision) {
    case Precision::kBFloat16:
    case Precision::kFloat16:
      return 2;
    case Precision::kFloat32:
    case Precision::kMixedBf16:
    case Precision::kMixedFp16:
      return 4;
  }
  return 4;
}

int ActivationElementBytes(Precision precision) { return precision == Precision::kFloat32 ? 4 : 2; }

int OptimizerStateTensors(OptimizerKind optimizer) {
  switch (optimizer) {
    case OptimizerKind::kRmsProp:
      return 2;
    case OptimizerKind::kSgd:
      return 0;
    case OptimizerKind::kMomentum:
      return 1;
  }
  return 0;
}

std::string DescribeSpec(const ModelSpec& spec) {
  return absl::StrCat(spec.family, " layer=", spec.fc.layer, " node=", spec.fc.node,
                      " input=", spec.fc.input, " output=", spec.fc.output,
                      " batch=", spec.fc.batch, " ", PrecisionName(spec.precision), " ",
                      OptimizerName(spec.optimizer));
}

}  // namespace paradnn::runner
