#include "model/family.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::model {

extern const FamilyDef kCnnFamily;
extern const FamilyDef kFcFamily;
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
    &kCnnFamily,
    &kDenseNet121Family,
    &kFcFamily,
    &kMobileNetV1Family,
    &kNoopFamily,
    &kResNet50Family,
    &kRetinaNetFamily,
    &kRnnFamily,
    &kSqueezeNet10Family,
    &kTorchScriptFamily,
    &kTransformerFamily,
};

}  // namespace

const ParamRule kIntraOpThreadsRule = {"intra_op_threads", 1, 1024, 0,
                                       "intra-op threads for this job (default: run settings)"};
const ParamRule kInterOpThreadsRule = {"inter_op_threads", 1, 1024, 0,
                                       "inter-op threads for this job (default: run settings)"};

absl::Span<const FamilyDef* const> AllFamilies() { return kFamilies; }

const FamilyDef* FindFamilyDef(const std::string& name) {
  for (const FamilyDef* def : kFamilies) {
    if (name == def->name) return def;
  }
  return nullptr;
}

std::string AllowedFamilyNames() {
  std::vector<std::string> names;
  for (const FamilyDef* def : kFamilies) names.push_back(def->name);
  return absl::StrJoin(names, "|");
}

std::string FieldName(FieldStyle style, const std::string& group, const std::string& key) {
  if (style == FieldStyle::kFlag) return absl::StrCat("--", key);
  return group.empty() ? absl::StrCat("config.", key) : absl::StrCat("config.", group, ".", key);
}

}  // namespace paradnn::model
