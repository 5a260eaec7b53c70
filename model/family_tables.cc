#include "model/family_tables.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/family.h"

namespace paradnn::model {
namespace {

std::string Code(absl::string_view text) { return absl::StrCat("`", text, "`"); }

std::string ParamRow(const ParamRule& p) {
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

std::string OptionRow(const OptionRule& o) {
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

// A Python string literal (the table's texts are ASCII without quotes or
// backslashes; escape them anyway).
std::string PyString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace

std::string FamilyReferenceMarkdown() {
  std::string text;
  for (const FamilyDef* def : AllFamilies()) {
    const FamilyDef& family = *def;
    absl::StrAppend(&text, "### ", Code(family.name), ": ", family.summary, "\n\n",
                    "| key | kind | required / default | allowed | meaning |\n",
                    "| --- | --- | --- | --- | --- |\n");
    for (const ParamRule& p : family.params) absl::StrAppend(&text, ParamRow(p));
    for (const OptionRule& o : family.options) absl::StrAppend(&text, OptionRow(o));
    absl::StrAppend(&text, "\n");
  }
  return text;
}

std::string JaxFamilyTablePython() {
  std::string text =
      "\"\"\"The model families' keys, generated from model/family.h by\n"
      "model/family_tables.cc; do not edit. Regenerate with\n"
      "PARADNN_UPDATE_GENERATED=1 ctest -R model_test (in the build folder).\"\"\"\n\n"
      "# family: {\"summary\": ..., \"params\": ((name, min, max, required, default or None,\n"
      "# multiple_of), ...), \"options\": ((name, allowed values (() = free text), default\n"
      "# (None = required, \"\" = none)), ...)}\n"
      "FAMILIES = {\n";
  for (const FamilyDef* family : AllFamilies()) {
    absl::StrAppend(&text, "    ", PyString(family->name), ": {\n",
                    "        \"summary\": ", PyString(family->summary),
                    ",\n        \"params\": (\n");
    for (const ParamRule& p : family->params) {
      absl::StrAppend(&text, "            (", PyString(p.name), ", ", p.min_value, ", ",
                      p.max_value, ", ", p.required ? "True" : "False", ", ",
                      p.default_value != 0 ? absl::StrCat(p.default_value) : "None", ", ",
                      p.multiple_of, "),\n");
    }
    absl::StrAppend(&text, "        ),\n        \"options\": (\n");
    for (const OptionRule& o : family->options) {
      std::vector<std::string> allowed;
      for (const char* value : o.allowed) allowed.push_back(PyString(value));
      absl::StrAppend(&text, "            (", PyString(o.name), ", (", absl::StrJoin(allowed, ", "),
                      allowed.size() == 1 ? "," : "", "), ",
                      o.default_value == nullptr ? "None" : PyString(o.default_value), "),\n");
    }
    absl::StrAppend(&text, "        ),\n    },\n");
  }
  absl::StrAppend(&text, "}\n");
  return text;
}

}  // namespace paradnn::model
