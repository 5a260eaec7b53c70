#include "model/family.h"

#include <algorithm>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::model {

extern const FamilyDef kAllReduceFamily;
extern const FamilyDef kCnnFamily;
extern const FamilyDef kFcFamily;
extern const FamilyDef kInceptionFamily;
extern const FamilyDef kTorchScriptFamily;
extern const FamilyDef kRnnFamily;
extern const FamilyDef kDenseNet121Family;
extern const FamilyDef kMobileNetV1Family;
extern const FamilyDef kNoopFamily;
extern const FamilyDef kResNet50Family;
extern const FamilyDef kRetinaNetFamily;
extern const FamilyDef kTransformerFamily;
extern const FamilyDef kSqueezeNet10Family;

namespace {

// One line per family, in name order.
const FamilyDef* const kFamilies[] = {
    &kAllReduceFamily,   &kCnnFamily,         &kDenseNet121Family,  &kFcFamily,
    &kInceptionFamily,   &kMobileNetV1Family, &kNoopFamily,         &kResNet50Family,
    &kRetinaNetFamily,   &kRnnFamily,         &kSqueezeNet10Family, &kTorchScriptFamily,
    &kTransformerFamily,
};

}  // namespace

absl::Span<const FamilyDef* const> AllFamilies() { return kFamilies; }

const FamilyDef* FindFamily(absl::string_view name) {
  for (const FamilyDef* def : kFamilies) {
    if (name == def->name) return def;
  }
  return nullptr;
}

const ParamRule* FindParam(const FamilyDef& family, absl::string_view param) {
  for (const ParamRule& rule : family.params) {
    if (param == rule.name) return &rule;
  }
  return nullptr;
}

const OptionRule* FindOption(const FamilyDef& family, absl::string_view option) {
  for (const OptionRule& rule : family.options) {
    if (option == rule.name) return &rule;
  }
  return nullptr;
}

std::string AllowedRange(const ParamRule& rule) {
  std::string allowed = absl::StrCat("allowed ", rule.min_value, "..", rule.max_value);
  if (rule.multiple_of > 1) absl::StrAppend(&allowed, " in multiples of ", rule.multiple_of);
  if (rule.constraint != nullptr) absl::StrAppend(&allowed, ": ", rule.constraint);
  return allowed;
}

absl::Status CheckParamValue(const std::string& field, int64_t value, const ParamRule& rule,
                             bool on_grid) {
  if (value < rule.min_value || value > rule.max_value) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is out of range; ", AllowedRange(rule)));
  }
  if (on_grid && rule.multiple_of > 1 && value % rule.multiple_of != 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is not a multiple of ",
                                                   rule.multiple_of, "; ", AllowedRange(rule)));
  }
  return absl::OkStatus();
}

std::string Quote(absl::string_view text) {
  constexpr size_t kMaxEcho = 64;
  if (text.size() > kMaxEcho) {
    return absl::StrCat("'", absl::CHexEscape(text.substr(0, kMaxEcho)), "...'");
  }
  return absl::StrCat("'", absl::CHexEscape(text), "'");
}

absl::Status CheckOptionValue(const std::string& field, absl::string_view value,
                              const OptionRule& rule) {
  if (rule.allowed.empty()) {
    // An optional free-text option's empty value is its default: "not given"
    // (what NormalizedConfig writes out for it).
    if (rule.check == nullptr ||
        (value.empty() && rule.default_value != nullptr && *rule.default_value == '\0')) {
      return absl::OkStatus();
    }
    absl::Status s = rule.check(value);
    if (s.ok()) return s;
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", Quote(value), " ", s.message()));
  }
  if (std::find(rule.allowed.begin(), rule.allowed.end(), value) == rule.allowed.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", Quote(value), " is not one of ", AllowedOptionValues(rule)));
  }
  return absl::OkStatus();
}

bool IsThreadParam(absl::string_view name) {
  return name == kIntraOpThreadsRule.name || name == kInterOpThreadsRule.name;
}

int64_t DataParallelDevices(const v1::ModelConfig& config) {
  const auto it = config.params().find(kDevicesRule.name);
  return it == config.params().end() ? 1 : it->second;
}

int64_t DataParallelHosts(const v1::ModelConfig& config) {
  const auto it = config.params().find(kHostsRule.name);
  return it == config.params().end() ? 1 : it->second;
}

bool DataParallelOverlap(const v1::ModelConfig& config) {
  const auto it = config.params().find(kOverlapRule.name);
  return it == config.params().end() || it->second != 0;
}

std::string AllowedFamilies() {
  std::vector<std::string> names;
  for (const FamilyDef* def : kFamilies) names.push_back(def->name);
  return absl::StrJoin(names, "|");
}

std::string AllowedOptionValues(const OptionRule& option) {
  if (!option.allowed.empty()) return absl::StrJoin(option.allowed, "|");
  return option.description;
}

std::string FieldName(FieldStyle style, const std::string& group, const std::string& key) {
  if (style == FieldStyle::kFlag) return absl::StrCat("--", key);
  return group.empty() ? absl::StrCat("config.", key) : absl::StrCat("config.", group, ".", key);
}

}  // namespace paradnn::model
