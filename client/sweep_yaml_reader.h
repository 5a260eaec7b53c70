// SweepYamlReader turns the YAML document of a sweep file into a
// v1::SweepSpec field by field, with errors that name the source, line and
// field ("SOURCE:LINE: FIELD: what is wrong and what is allowed"), and
// remembers each field's line so that a later validation error can be
// located too. Internal to sweep_file (callers use client/sweep_file.h).
// A reader serves one document; it holds no pointer to the document or the
// spec after a call returns. Thread-compatible.
#ifndef PARADNN_CLIENT_SWEEP_YAML_READER_H_
#define PARADNN_CLIENT_SWEEP_YAML_READER_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client::internal {

// Reads one YAML document into a SweepSpec, remembering the line each field
// came from so that validation errors can name it.
class SweepYamlReader {
 public:
  explicit SweepYamlReader(absl::string_view source) : source_(source) {}

  // Reads `root` into `spec`. InvalidArgument "SOURCE:LINE: FIELD: ..." for
  // a field of the wrong kind or an unknown key; model::ValidateSweep judges
  // the values afterwards. yaml-cpp may throw YAML::Exception on some
  // malformed trees (e.g. aliases to nowhere); the caller catches it.
  absl::Status Read(const YAML::Node& root, v1::SweepSpec* spec);

  // Prefixes "SOURCE:LINE: " to a validation error, naming the line of the
  // longest recorded prefix of the field path the message starts with.
  absl::Status Locate(const absl::Status& status) const;

 private:
  int LineOf(const YAML::Node& node, int fallback) const {
    const YAML::Mark mark = node.Mark();
    return mark.is_null() ? fallback : mark.line + 1;
  }
  // InvalidArgument "SOURCE:LINE: PATH: what" ("SOURCE: PATH: what" when
  // `line` <= 0).
  absl::Status Error(int line, const std::string& path, const std::string& what) const;
  // Error for a value of the wrong kind: "expected EXPECTED, got KIND".
  absl::Status WrongKind(int line, const std::string& path, absl::string_view expected,
                         const YAML::Node& node) const;
  // The text of a scalar that must be written unquoted (a number):
  // WrongKind, or "... is quoted text, not EXPECTED; write it unquoted".
  absl::StatusOr<std::string> UnquotedScalar(const YAML::Node& node, const std::string& path,
                                             int line, absl::string_view expected) const;
  void Record(const std::string& path, int line) { lines_.emplace(path, line); }

  // Iterates a mapping's pairs in order, refusing non-scalar and repeated
  // keys. `visit(key, value, line)` gets a scalar value's line, else the
  // key's line.
  absl::Status ForEachPair(
      const YAML::Node& map, const std::string& path,
      const std::function<absl::Status(const std::string&, const YAML::Node&, int)>& visit);

  // One top-level `key` of the file and its `value` at `line`; errors name
  // the allowed keys for an unknown one.
  absl::Status ReadTopLevelKey(const std::string& key, const YAML::Node& value, int line,
                               v1::SweepSpec* spec);
  absl::Status ReadRepeats(const YAML::Node& node, int line, v1::SweepSpec* spec) const;
  // stack: {setting: value or [values]}, into spec.stack.
  absl::Status ReadStack(const YAML::Node& node, int line, v1::SweepSpec* spec);

  absl::Status ReadInt(const YAML::Node& node, const std::string& path, int line,
                       int64_t* out) const;
  absl::Status ReadInt32(const YAML::Node& node, const std::string& path, int line,
                         int32_t* out) const;
  absl::Status ReadUint64(const YAML::Node& node, const std::string& path, int line,
                          uint64_t* out) const;
  absl::Status ReadDouble(const YAML::Node& node, const std::string& path, int line,
                          double* out) const;
  absl::Status ReadString(const YAML::Node& node, const std::string& path, int line,
                          std::string* out) const;
  absl::Status ReadNameList(const YAML::Node& node, const std::string& path, int line,
                            google::protobuf::RepeatedPtrField<std::string>* out);
  absl::Status ReadBool(const YAML::Node& node, const std::string& path, int line, bool* out) const;
  absl::Status ReadParams(const YAML::Node& node, int line, v1::SweepSpec* spec);
  // True when `key` under params is a categorical option: the family's
  // schema says so, or, for a key the family does not know, its value is
  // text rather than numbers (so that the error names it as an option).
  bool IsOptionKey(const std::string& key, const YAML::Node& value) const;
  absl::Status ReadOptions(const YAML::Node& node, int line, v1::SweepSpec* spec);
  // One option's values: a name, a list of names or {values: [...]}, into
  // spec.options[key]. `yaml_path` names the field as written
  // ("params.cell"); lines are recorded under "options.KEY".
  absl::Status ReadOption(const std::string& key, const YAML::Node& node,
                          const std::string& yaml_path, int line, v1::SweepSpec* spec);
  absl::Status ReadParam(const std::string& name, const YAML::Node& node, int line,
                         v1::ParamSpec* out);
  absl::Status ReadIntList(const YAML::Node& node, const std::string& yaml_path,
                           const std::string& proto_path, int line, v1::IntValues* out);
  absl::Status ReadRun(const YAML::Node& node, int line, v1::RunSettings* run);

  std::string source_;
  // The family named at the top level (read first: params are routed to
  // options by its schema); empty when absent or not text.
  std::string family_;
  // Field path as ValidateSweep names it ("params.node.range.mul") -> line.
  std::map<std::string, int> lines_;
};

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_SWEEP_YAML_READER_H_
