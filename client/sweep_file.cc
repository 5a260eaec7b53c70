#include "client/sweep_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/sweep_yaml_reader.h"
#include "client/yaml_document.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

using internal::LoadOneDocument;
using internal::SweepYamlReader;

// Where `offset` lies in `text`: 1-based line and column (in bytes).
std::pair<size_t, size_t> LineAndColumn(absl::string_view text, size_t offset) {
  const absl::string_view before = text.substr(0, offset);
  const size_t line_start = before.rfind('\n');
  const size_t line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const size_t column = line_start == absl::string_view::npos ? offset + 1 : offset - line_start;
  return {line, column};
}

}  // namespace

absl::StatusOr<v1::SweepSpec> ParseSweepText(absl::string_view text, absl::string_view source,
                                             int64_t max_jobs) {
  if (text.size() > kMaxSweepFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": ", text.size(), " bytes; a sweep file may have at most ", kMaxSweepFileBytes));
  }
  // YAML is UTF-8 here (a BOM-less UTF-16 file would not parse anyway), and
  // protobuf carries only UTF-8 in the spec's strings and source_text.
  if (const size_t bad = model::FirstNonUtf8Byte(text); bad != absl::string_view::npos) {
    const auto [line, column] = LineAndColumn(text, bad);
    return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": byte ", bad, " (column ",
                                                   column,
                                                   ") is not UTF-8; save the file as UTF-8"));
  }
  absl::StatusOr<YAML::Node> root = LoadOneDocument(std::string(text), source);
  if (!root.ok()) return root.status();
  SweepYamlReader reader(source);
  v1::SweepSpec spec;
  try {
    if (absl::Status s = reader.Read(*root, &spec); !s.ok()) return s;
  } catch (const YAML::Exception& e) {
    // yaml-cpp throws on some malformed trees (e.g. aliases to nowhere).
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", e.mark.is_null() ? 0 : e.mark.line + 1, ": ", e.msg));
  }
  if (spec.device().empty()) spec.set_device("cpu");
  spec.set_source_text(std::string(text));
  if (absl::Status s = model::ValidateSweep(spec, max_jobs); !s.ok()) return reader.Locate(s);
  return spec;
}

absl::StatusOr<v1::SweepSpec> ReadSweepFile(const std::string& path, int64_t max_jobs) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return ParseSweepText(text, "<stdin>", max_jobs);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot read the sweep file: ", std::strerror(error)));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read the sweep file"));
  }
  return ParseSweepText(buffer.str(), path, max_jobs);
}

}  // namespace paradnn::client
