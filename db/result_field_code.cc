#include "db/result_field_code.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "db/result_fields.h"

namespace paradnn::db {
namespace {

constexpr const char* kRegenerate =
    "PARADNN_UPDATE_GENERATED=1 ctest -R db_result_fields_test (in the build folder)";

// A string literal in `quote` (the table's texts are plain; escape anyway).
std::string Quoted(absl::string_view text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back(quote);
  return out;
}

// The shortest decimal text that reads back as exactly `value` (the scale
// factors must not lose a digit on their way into Python or JavaScript).
std::string ExactNumber(double value) {
  if (value == std::trunc(value) && std::fabs(value) < 1e15) return absl::StrFormat("%.0f", value);
  for (int digits = 1; digits <= 17; ++digits) {
    std::string text = absl::StrFormat("%.*g", digits, value);
    if (std::strtod(text.c_str(), nullptr) == value) return text;
  }
  return absl::StrFormat("%.17g", value);
}

// As ExactNumber, and a Python float literal ("1000.0", "1e+09").
std::string PythonFloat(double value) {
  std::string text = ExactNumber(value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

const char* OrEmpty(const char* text) { return text == nullptr ? "" : text; }

}  // namespace

std::string ResultFieldsPython() {
  std::string text = absl::StrCat(
      "\"\"\"The results table's shown fields, generated from db/result_fields.cc by\n"
      "db/result_field_code.cc; do not edit. Regenerate with\n",
      kRegenerate,
      ".\n\n"
      "paradnn.frames reads it: the columns of result_frame after the configuration.\"\"\"\n\n"
      "# (name, title, unit, when, path, predicted_path, multiply, divide); what each\n"
      "# means is ShownColumn and ShownWhen in db/result_fields.h.\n"
      "SHOWN_FIELDS = (\n");
  for (const ResultField& field : ResultFields()) {
    if (!field.shown) continue;
    const ShownColumn& shown = *field.shown;
    const std::vector<std::string> parts = {Quoted(shown.name, '"'),
                                            Quoted(shown.title, '"'),
                                            Quoted(ShownUnitName(shown.unit), '"'),
                                            Quoted(ShownWhenName(shown.when), '"'),
                                            Quoted(field.path, '"'),
                                            Quoted(OrEmpty(shown.predicted_path), '"'),
                                            PythonFloat(shown.multiply),
                                            PythonFloat(shown.divide)};
    absl::StrAppend(&text, "    (", absl::StrJoin(parts, ", "), "),\n");
  }
  absl::StrAppend(&text, ")\n");
  return text;
}

std::string ResultFieldsJavaScript() {
  std::string text = absl::StrCat(
      "// The results table's shown fields, generated from db/result_fields.cc by\n"
      "// db/result_field_code.cc; do not edit. Regenerate with\n// ",
      kRegenerate,
      ".\n"
      "// app.js's resultColumns reads it; what each part means is ShownColumn and\n"
      "// ShownWhen in db/result_fields.h.\n"
      "'use strict';\n\n"
      "const kResultFields = [\n");
  for (const ResultField& field : ResultFields()) {
    if (!field.shown) continue;
    const ShownColumn& shown = *field.shown;
    const std::vector<std::string> parts = {
        absl::StrCat("name: ", Quoted(shown.name, '\'')),
        absl::StrCat("title: ", Quoted(shown.title, '\'')),
        absl::StrCat("unit: ", Quoted(ShownUnitName(shown.unit), '\'')),
        absl::StrCat("when: ", Quoted(ShownWhenName(shown.when), '\'')),
        absl::StrCat("path: ", Quoted(field.path, '\'')),
        absl::StrCat("predictedPath: ", Quoted(OrEmpty(shown.predicted_path), '\'')),
        absl::StrCat("multiply: ", ExactNumber(shown.multiply)),
        absl::StrCat("divide: ", ExactNumber(shown.divide)),
        absl::StrCat("dashboard: ", (shown.shown_in & kDashboard) != 0 ? "true" : "false")};
    absl::StrAppend(&text, "  { ", absl::StrJoin(parts, ", "), " },\n");
  }
  absl::StrAppend(&text, "];\n");
  return text;
}

}  // namespace paradnn::db
