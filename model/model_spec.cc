#include "model/model_spec.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "model/family.h"

namespace paradnn::model {
namespace {

// The value of `key` in a spec's params or options; a key the family does
// not have is a bug in the caller (families read their own keys), so the
// process aborts naming it: "ModelSpec::WHAT: family F has no KIND 'KEY'".
template <typename Map>
const typename Map::mapped_type& ValueOrAbort(const Map& map, const char* what, const char* kind,
                                              const std::string& family, const std::string& key) {
  auto it = map.find(key);
  if (it == map.end()) {
    std::fprintf(stderr, "ModelSpec::%s: family %s has no %s '%s'\n", what, family.c_str(), kind,
                 key.c_str());
    std::abort();
  }
  return it->second;
}

absl::StatusOr<Precision> ParsePrecision(const std::string& raw, FieldStyle style) {
  const std::string name = absl::AsciiStrToLower(raw);
  if (name.empty() || name == "float32") return Precision::kFloat32;
  if (name == "bfloat16") return Precision::kBFloat16;
  if (name == "float16") return Precision::kFloat16;
  if (name == "mixed_bf16") return Precision::kMixedBf16;
  if (name == "mixed_fp16") return Precision::kMixedFp16;
  return absl::InvalidArgumentError(absl::StrCat(FieldName(style, "", "precision"), ": '", raw,
                                                 "' is not one of ", kAllowedPrecisions));
}

absl::StatusOr<OptimizerKind> ParseOptimizer(const std::string& raw, FieldStyle style) {
  const std::string name = absl::AsciiStrToLower(raw);
  if (name.empty() || name == "rmsprop") return OptimizerKind::kRmsProp;
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "momentum") return OptimizerKind::kMomentum;
  return absl::InvalidArgumentError(absl::StrCat(FieldName(style, "", "optimizer"), ": '", raw,
                                                 "' is not one of ", kAllowedOptimizers));
}

std::string ParamNames(const FamilyDef& def) {
  std::vector<std::string> names;
  for (const ParamRule& rule : def.params) names.push_back(rule.name);
  return absl::StrJoin(names, ", ");
}

absl::Status CheckParams(const v1::ModelConfig& config, const FamilyDef& def, FieldStyle style,
                         ModelSpec* spec) {
  for (const auto& entry : config.params()) {
    if (FindParam(def, entry.first) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(FieldName(style, "params", entry.first),
                                                     ": unknown hyper-parameter for family ",
                                                     def.name, "; allowed: ", ParamNames(def)));
    }
  }
  for (const ParamRule& rule : def.params) {
    const std::string field = FieldName(style, "params", rule.name);
    auto it = config.params().find(rule.name);
    if (it == config.params().end()) {
      if (rule.required) {
        return absl::InvalidArgumentError(absl::StrCat(field, ": required for family ", def.name,
                                                       " (an integer in ", rule.min_value, "..",
                                                       rule.max_value, ")"));
      }
      if (rule.default_value != 0) spec->params[rule.name] = rule.default_value;
      continue;
    }
    if (absl::Status s = CheckParamValue(field, it->second, rule); !s.ok()) return s;
    spec->params[rule.name] = it->second;
  }
  return absl::OkStatus();
}

absl::Status CheckOptions(const v1::ModelConfig& config, const FamilyDef& def, FieldStyle style,
                          ModelSpec* spec) {
  for (const auto& entry : config.options()) {
    if (FindOption(def, entry.first) == nullptr) {
      std::vector<std::string> names;
      for (const OptionRule& rule : def.options) names.push_back(rule.name);
      return absl::InvalidArgumentError(absl::StrCat(
          FieldName(style, "options", entry.first), ": unknown option for family ", def.name,
          names.empty() ? std::string("; it takes none")
                        : "; allowed: " + absl::StrJoin(names, ", ")));
    }
  }
  for (const OptionRule& rule : def.options) {
    const std::string field = FieldName(style, "options", rule.name);
    auto it = config.options().find(rule.name);
    std::string value;
    if (it == config.options().end()) {
      if (rule.default_value == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(field, ": required for family ", def.name,
                                                       " (one of ", AllowedOptionValues(rule),
                                                       ")"));
      }
      value = rule.default_value;
    } else {
      value = absl::AsciiStrToLower(it->second);
      if (absl::Status s = CheckOptionValue(field, value, rule); !s.ok()) return s;
    }
    spec->options[rule.name] = value;
  }
  return absl::OkStatus();
}

}  // namespace

int64_t ModelSpec::Param(const std::string& key) const {
  return ValueOrAbort(params, "Param", "parameter", family, key);
}

const std::string& ModelSpec::Option(const std::string& key) const {
  return ValueOrAbort(options, "Option", "option", family, key);
}

absl::StatusOr<ModelSpec> ParseModelSpec(const v1::ModelConfig& config, FieldStyle style) {
  ModelSpec spec;
  spec.family = absl::AsciiStrToLower(config.family());
  const FamilyDef* def = FindFamily(spec.family);
  if (def == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(FieldName(style, "", "family"), ": '", config.family(),
                     "' is not a family this runner builds; allowed: ", AllowedFamilies()));
  }
  if (absl::Status s = CheckParams(config, *def, style, &spec); !s.ok()) return s;
  if (absl::Status s = CheckOptions(config, *def, style, &spec); !s.ok()) return s;
  spec.torchscript = config.torchscript();

  auto precision = ParsePrecision(config.precision(), style);
  if (!precision.ok()) return precision.status();
  spec.precision = *precision;
  auto optimizer = ParseOptimizer(config.optimizer(), style);
  if (!optimizer.ok()) return optimizer.status();
  spec.optimizer = *optimizer;
  if (def->check != nullptr) {
    if (absl::Status s = def->check(spec, style); !s.ok()) return s;
  }
  return spec;
}

v1::ModelConfig NormalizedConfig(const v1::ModelConfig& config) {
  v1::ModelConfig out = config;
  out.set_family(absl::AsciiStrToLower(config.family()));
  if (auto spec = ParseModelSpec(config, FieldStyle::kProto); spec.ok()) {
    for (const auto& [key, value] : spec->params) (*out.mutable_params())[key] = value;
    for (const auto& [key, value] : spec->options) (*out.mutable_options())[key] = value;
  }
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
  std::string line = spec.family;
  for (const auto& [key, value] : spec.params) absl::StrAppend(&line, " ", key, "=", value);
  for (const auto& [key, value] : spec.options) absl::StrAppend(&line, " ", key, "=", value);
  absl::StrAppend(&line, " ", PrecisionName(spec.precision), " ", OptimizerName(spec.optimizer));
  return line;
}

}  // namespace paradnn::model
