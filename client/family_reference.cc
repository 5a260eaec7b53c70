#include "client/family_reference.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sweep_validation.h"

namespace paradnn::client {
namespace {

std::string Code(absl::string_view text) { return absl::StrCat("`", text, "`"); }

std::string ParamRow(const common::ParamSchema& p) {
  std::string need = "optional";
  if (p.required) {
    need = "required";
  } else if (p.default_value != 0) {
    need = absl::StrCat("default ", p.default_value);
  }
  std::string allowed = absl::StrCat(p.min_value, " … ", p.max_value);
  if (p.multiple_of > 1) absl::StrAppend(&allowed, ", multiples of ", p.multiple_of);
  std::string meaning = p.description;
  if (p.constraint != nullptr) absl::StrAppend(&meaning, "; ", p.constraint);
  return absl::StrCat("| ", Code(p.name), " | integer | ", need, " | ", allowed, " | ", meaning,
                      " |\n");
}

std::string OptionRow(const common::OptionSchema& o) {
  std::string need = "optional";
  if (o.default_value == nullptr) {
    need = "required";
  } else if (*o.default_value != '\0') {
    need = absl::StrCat("default ", Code(o.default_value));
  }
  std::string allowed = "text (see meaning)";
  if (!o.allowed.empty()) {
    std::vector<std::string> names;
    for (const char* name : o.allowed) names.push_back(Code(name));
    allowed = absl::StrJoin(names, ", ");
  }
  return absl::StrCat("| ", Code(o.name), " | option | ", need, " | ", allowed, " | ",
                      o.description, " |\n");
}

}  // namespace

std::string FamilyReferenceMarkdown() {
  std::string text;
  for (const common::FamilySchema& family : common::Families()) {
    absl::StrAppend(&text, "### ", Code(family.name), ": ", family.summary, "\n\n",
                    "| key | kind | required / default | allowed | meaning |\n",
                    "| --- | --- | --- | --- | --- |\n");
    for (const common::ParamSchema& p : family.params) absl::StrAppend(&text, ParamRow(p));
    for (const common::OptionSchema& o : family.options) absl::StrAppend(&text, OptionRow(o));
    absl::StrAppend(&text, "\n");
  }
  return text;
}

}  // namespace paradnn::client
