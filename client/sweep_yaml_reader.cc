#include "client/sweep_yaml_reader.h"

#include <cmath>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/torchscript_upload.h"
#include "common/human_units.h"
#include "model/sweep.h"

namespace paradnn::client::internal {
namespace {

constexpr const char* kTopLevelKeys[] = {"name",        "family",  "device",
                                         "params",      "options", "precision",
                                         "optimizer",   "run",     "run_predicted_oom",
                                         "torchscript", "repeats", "profile",
                                         "stack"};
constexpr const char* kParamMapKeys[] = {"min", "max", "mul", "add", "values"};

std::string EchoValue(absl::string_view text) {
  constexpr size_t kMaxEcho = 64;
  if (text.size() > kMaxEcho) {
    return absl::StrCat("'", absl::CHexEscape(text.substr(0, kMaxEcho)), "...'");
  }
  return absl::StrCat("'", absl::CHexEscape(text), "'");
}

// A field path as errors name it: paths hold the file's keys, which may be
// long or hold control characters.
std::string EchoPath(absl::string_view path) {
  constexpr size_t kMaxEcho = 160;
  if (path.size() > kMaxEcho)
    return absl::StrCat(absl::CHexEscape(path.substr(0, kMaxEcho)), "...");
  return absl::CHexEscape(path);
}

const char* KindOf(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

// A scalar written in quotes carries the non-specific tag "!"; plain scalars
// carry "?". Quoted text is text, even when it looks like a number.
bool IsQuoted(const YAML::Node& node) { return node.Tag() == "!"; }

// The value type of a RunSettings setter (in decltype only).
template <typename T>
T SetterValue(void (v1::RunSettings::*set)(T));

}  // namespace

absl::Status SweepYamlReader::Error(int line, const std::string& path,
                                    const std::string& what) const {
  const std::string field = EchoPath(path);
  if (line <= 0) return absl::InvalidArgumentError(absl::StrCat(source_, ": ", field, ": ", what));
  return absl::InvalidArgumentError(absl::StrCat(source_, ":", line, ": ", field, ": ", what));
}

absl::Status SweepYamlReader::WrongKind(int line, const std::string& path,
                                        absl::string_view expected, const YAML::Node& node) const {
  return Error(line, path, absl::StrCat("expected ", expected, ", got ", KindOf(node)));
}

absl::StatusOr<std::string> SweepYamlReader::UnquotedScalar(const YAML::Node& node,
                                                            const std::string& path, int line,
                                                            absl::string_view expected) const {
  if (!node.IsScalar()) return WrongKind(line, path, expected, node);
  if (IsQuoted(node)) {
    return Error(line, path,
                 absl::StrCat(EchoValue(node.Scalar()), " is quoted text, not ", expected,
                              "; write it unquoted"));
  }
  return node.Scalar();
}

absl::Status SweepYamlReader::ForEachPair(
    const YAML::Node& map, const std::string& path,
    const std::function<absl::Status(const std::string&, const YAML::Node&, int)>& visit) {
  std::map<std::string, int> seen;
  // yaml-cpp's iterators hand out their pair by value (it->first lives in a
  // temporary): hold each pair in a variable of its own.
  for (const auto& pair : map) {
    const YAML::Node& key = pair.first;
    const int key_line = LineOf(key, LineOf(map, 0));
    if (!key.IsScalar()) {
      return Error(key_line, path.empty() ? "(top level)" : path,
                   absl::StrCat("keys must be plain names, got ", KindOf(key)));
    }
    const std::string name = key.Scalar();
    const std::string field = path.empty() ? name : absl::StrCat(path, ".", name);
    if (auto [prev, inserted] = seen.emplace(name, key_line); !inserted) {
      return Error(key_line, field,
                   absl::StrCat("repeated key (first at line ", prev->second, ")"));
    }
    // Scalars are named at their own line; mappings and lists at their
    // key's line (where a block mapping's name is written).
    const YAML::Node& value = pair.second;
    const int line = value.IsScalar() ? LineOf(value, key_line) : key_line;
    if (absl::Status s = visit(name, value, line); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadInt(const YAML::Node& node, const std::string& path, int line,
                                      int64_t* out) const {
  absl::StatusOr<std::string> text = UnquotedScalar(node, path, line, "an integer");
  if (!text.ok()) return text.status();
  if (!absl::SimpleAtoi(*text, out)) {
    return Error(line, path, absl::StrCat(EchoValue(*text), " is not an integer"));
  }
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadInt32(const YAML::Node& node, const std::string& path, int line,
                                        int32_t* out) const {
  int64_t value = 0;
  if (absl::Status s = ReadInt(node, path, line, &value); !s.ok()) return s;
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return Error(line, path, absl::StrCat(value, " is out of range for a 32-bit integer"));
  }
  *out = static_cast<int32_t>(value);
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadUint64(const YAML::Node& node, const std::string& path, int line,
                                         uint64_t* out) const {
  if (!node.IsScalar()) return WrongKind(line, path, "an integer", node);
  const std::string& text = node.Scalar();
  if (IsQuoted(node) || text.empty() || text.front() == '-' || !absl::SimpleAtoi(text, out)) {
    return Error(line, path, absl::StrCat(EchoValue(text), " is not a non-negative integer"));
  }
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadDouble(const YAML::Node& node, const std::string& path, int line,
                                         double* out) const {
  absl::StatusOr<std::string> text = UnquotedScalar(node, path, line, "a number");
  if (!text.ok()) return text.status();
  if (!absl::SimpleAtod(*text, out) || !std::isfinite(*out)) {
    return Error(line, path, absl::StrCat(EchoValue(*text), " is not a number"));
  }
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadString(const YAML::Node& node, const std::string& path, int line,
                                         std::string* out) const {
  if (!node.IsScalar()) return WrongKind(line, path, "text", node);
  *out = node.Scalar();
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadNameList(const YAML::Node& node, const std::string& path,
                                           int line,
                                           google::protobuf::RepeatedPtrField<std::string>* out) {
  if (node.IsScalar()) {
    Record(absl::StrCat(path, "[0]"), line);
    *out->Add() = node.Scalar();
    return absl::OkStatus();
  }
  if (!node.IsSequence()) return WrongKind(line, path, "a name or a list of names", node);
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string item = absl::StrCat(path, "[", i, "]");
    const int item_line = LineOf(node[i], line);
    Record(item, item_line);
    if (absl::Status s = ReadString(node[i], item, item_line, out->Add()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadIntList(const YAML::Node& node, const std::string& yaml_path,
                                          const std::string& proto_path, int line,
                                          v1::IntValues* out) {
  if (!node.IsSequence()) return WrongKind(line, yaml_path, "a list of integers", node);
  Record(proto_path, line);
  for (size_t i = 0; i < node.size(); ++i) {
    const int item_line = LineOf(node[i], line);
    Record(absl::StrCat(proto_path, "[", i, "]"), item_line);
    int64_t value = 0;
    if (absl::Status s = ReadInt(node[i], absl::StrCat(yaml_path, "[", i, "]"), item_line, &value);
        !s.ok()) {
      return s;
    }
    out->add_values(value);
  }
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadParam(const std::string& name, const YAML::Node& node, int line,
                                        v1::ParamSpec* out) {
  const std::string path = absl::StrCat("params.", name);
  Record(path, line);
  if (node.IsNull()) {
    return Error(line, path, "missing value; write a number, a list [a, b] or {min, max, mul|add}");
  }
  if (node.IsScalar()) {
    int64_t value = 0;
    if (absl::Status s = ReadInt(node, path, line, &value); !s.ok()) return s;
    out->set_value(value);
    return absl::OkStatus();
  }
  if (node.IsSequence()) {
    return ReadIntList(node, path, path + ".values", line, out->mutable_values());
  }
  // A mapping: {values: [...]} or {min, max, mul|add}.
  const std::string range_path = path + ".range";
  Record(range_path, line);
  bool has_values = false, has_min = false, has_max = false;
  v1::IntRange range;
  absl::Status status =
      ForEachPair(node, path, [&](const std::string& key, const YAML::Node& value, int value_line) {
        const std::string field = absl::StrCat(path, ".", key);
        if (key == "values") {
          has_values = true;
          return ReadIntList(value, field, field, value_line, out->mutable_values());
        }
        Record(absl::StrCat(range_path, ".", key), value_line);
        int64_t integer = 0;
        if (key == "min" || key == "max" || key == "add") {
          if (absl::Status s = ReadInt(value, field, value_line, &integer); !s.ok()) return s;
          if (key == "min") {
            has_min = true;
            range.set_min(integer);
          } else if (key == "max") {
            has_max = true;
            range.set_max(integer);
          } else {
            range.set_add(integer);
          }
          return absl::OkStatus();
        }
        if (key == "mul") {
          double mul = 0;
          if (absl::Status s = ReadDouble(value, field, value_line, &mul); !s.ok()) return s;
          range.set_mul(mul);
          return absl::OkStatus();
        }
        return Error(
            value_line, field,
            absl::StrCat("unknown key; allowed: ",
                         absl::StrJoin(std::begin(kParamMapKeys), std::end(kParamMapKeys), ", ")));
      });
  if (!status.ok()) return status;
  const bool ranged = has_min || has_max || range.has_mul() || range.has_add();
  if (has_values && ranged) {
    return Error(line, path, "give either values: [...] or min/max with mul|add, not both");
  }
  if (has_values) return absl::OkStatus();
  if (!ranged) {
    return Error(line, path, "empty mapping; write {min, max, mul|add} or {values: [...]}");
  }
  if (!has_min || !has_max) {
    return Error(line, absl::StrCat(path, has_min ? ".max" : ".min"),
                 "missing; a range needs both min and max");
  }
  *out->mutable_range() = range;
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadBool(const YAML::Node& node, const std::string& path, int line,
                                       bool* out) const {
  if (!node.IsScalar()) return WrongKind(line, path, "true or false", node);
  const std::string& text = node.Scalar();
  if (!IsQuoted(node) && (text == "true" || text == "True" || text == "TRUE")) {
    *out = true;
  } else if (!IsQuoted(node) && (text == "false" || text == "False" || text == "FALSE")) {
    *out = false;
  } else {
    return Error(line, path, absl::StrCat(EchoValue(text), " is not true or false"));
  }
  return absl::OkStatus();
}

bool SweepYamlReader::IsOptionKey(const std::string& key, const YAML::Node& value) const {
  if (const model::FamilyDef* family = model::FindFamily(family_); family != nullptr) {
    if (model::FindOption(*family, key) != nullptr) return true;
    if (model::FindParam(*family, key) != nullptr) return false;
  }
  auto is_text = [](const YAML::Node& node) {
    double number = 0;
    return node.IsScalar() && (IsQuoted(node) || !absl::SimpleAtod(node.Scalar(), &number));
  };
  if (value.IsScalar()) return is_text(value);
  if (value.IsSequence()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (is_text(value[i])) return true;
    }
  }
  return false;
}

absl::Status SweepYamlReader::ReadOption(const std::string& key, const YAML::Node& node,
                                         const std::string& yaml_path, int line,
                                         v1::SweepSpec* spec) {
  const std::string path = absl::StrCat("options.", key);
  if (auto it = lines_.find(path); it != lines_.end()) {
    return Error(line, yaml_path,
                 absl::StrCat("option ", model::EchoKey(key), " is given twice (first at line ",
                              it->second, "); give it once, under params or under options"));
  }
  Record(path, line);
  v1::StringValues& out = (*spec->mutable_options())[key];
  if (node.IsNull()) {
    return Error(line, yaml_path, "missing value; write a name or a list of names");
  }
  if (node.IsScalar()) {
    Record(path + "[0]", line);
    out.add_values(node.Scalar());
    return absl::OkStatus();
  }
  YAML::Node list = node;
  std::string list_path = yaml_path;
  if (node.IsMap()) {
    // {values: [a, b]}, as for integer parameters.
    if (node.size() != 1 || !node["values"]) {
      return Error(line, yaml_path, "expected a name, a list of names or {values: [...]}");
    }
    list = node["values"];
    list_path = yaml_path + ".values";
  }
  if (!list.IsSequence()) return WrongKind(line, list_path, "a list of names", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const int item_line = LineOf(list[i], line);
    Record(absl::StrCat(path, "[", i, "]"), item_line);
    if (absl::Status s =
            ReadString(list[i], absl::StrCat(list_path, "[", i, "]"), item_line, out.add_values());
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadParams(const YAML::Node& node, int line, v1::SweepSpec* spec) {
  if (!node.IsMap()) return WrongKind(line, "params", "a mapping of parameter: value", node);
  return ForEachPair(
      node, "params", [&](const std::string& key, const YAML::Node& value, int value_line) {
        if (IsOptionKey(key, value)) {
          return ReadOption(key, value, absl::StrCat("params.", key), value_line, spec);
        }
        return ReadParam(key, value, value_line, &(*spec->mutable_params())[key]);
      });
}

absl::Status SweepYamlReader::ReadOptions(const YAML::Node& node, int line, v1::SweepSpec* spec) {
  if (!node.IsMap()) return WrongKind(line, "options", "a mapping of option: names", node);
  return ForEachPair(
      node, "options", [&](const std::string& key, const YAML::Node& value, int value_line) {
        return ReadOption(key, value, absl::StrCat("options.", key), value_line, spec);
      });
}

absl::Status SweepYamlReader::ReadRun(const YAML::Node& node, int line, v1::RunSettings* run) {
  if (!node.IsMap()) return WrongKind(line, "run", "a mapping of settings", node);
  using Reader = std::function<absl::Status(const YAML::Node&, const std::string&, int)>;
  // A setting read with `read` (ReadDouble, ReadInt32, ReadUint64, ReadBool)
  // and stored with its setter `set`.
  auto as = [&](auto read, auto set) -> Reader {
    return [this, run, read, set](const YAML::Node& n, const std::string& path, int l) {
      decltype(SetterValue(set)) v{};
      if (absl::Status s = (this->*read)(n, path, l, &v); !s.ok()) return s;
      (run->*set)(v);
      return absl::OkStatus();
    };
  };
  using R = SweepYamlReader;
  // A scalar a person writes with a unit (a duration, a percentage).
  auto as_parsed = [&](absl::StatusOr<double> (*parse)(const std::string&),
                       void (v1::RunSettings::*set)(double), const char* expected) -> Reader {
    return [this, run, parse, set, expected](const YAML::Node& n, const std::string& path, int l) {
      if (!n.IsScalar()) return WrongKind(l, path, expected, n);
      absl::StatusOr<double> value = parse(n.Scalar());
      if (!value.ok()) return Error(l, path, std::string(value.status().message()));
      (run->*set)(*value);
      return absl::OkStatus();
    };
  };
  const std::vector<std::pair<const char*, Reader>> readers = {
      {"ci", as(&R::ReadDouble, &v1::RunSettings::set_ci)},
      {"max_seconds", as(&R::ReadDouble, &v1::RunSettings::set_max_seconds)},
      {"warmup_steps", as(&R::ReadInt32, &v1::RunSettings::set_warmup_steps)},
      {"min_steps", as(&R::ReadInt32, &v1::RunSettings::set_min_steps)},
      {"max_steps", as(&R::ReadInt32, &v1::RunSettings::set_max_steps)},
      {"intra_op_threads", as(&R::ReadInt32, &v1::RunSettings::set_intra_op_threads)},
      {"inter_op_threads", as(&R::ReadInt32, &v1::RunSettings::set_inter_op_threads)},
      {"timeout_seconds", as(&R::ReadDouble, &v1::RunSettings::set_timeout_seconds)},
      {"profile_steps", as(&R::ReadInt32, &v1::RunSettings::set_profile_steps)},
      {"profile", as(&R::ReadBool, &v1::RunSettings::set_profile)},
      {"fresh", as(&R::ReadBool, &v1::RunSettings::set_fresh)},
      {"budget", as_parsed(&common::ParseDurationSeconds, &v1::RunSettings::set_budget_seconds,
                           "a duration (90s, 30m, 1h)")},
      {"target_interval", as_parsed(&common::ParseFraction, &v1::RunSettings::set_target_interval,
                                    "a fraction (3% or 0.03)")},
      {"seed", as(&R::ReadUint64, &v1::RunSettings::set_seed)},
  };
  return ForEachPair(node, "run", [&](const std::string& key, const YAML::Node& value, int l) {
    const std::string path = absl::StrCat("run.", key);
    Record(path, l);
    for (const auto& [name, reader] : readers) {
      if (key == name) return reader(value, path, l);
    }
    std::vector<const char*> names;
    names.reserve(std::size(readers));
    for (const auto& entry : readers) names.push_back(entry.first);
    return Error(l, path, absl::StrCat("unknown key; allowed: ", absl::StrJoin(names, ", ")));
  });
}

absl::Status SweepYamlReader::Read(const YAML::Node& root, v1::SweepSpec* spec) {
  if (root.IsNull()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source_, ": the file is empty; a sweep file is a mapping with name, family and params"));
  }
  if (!root.IsMap()) {
    return WrongKind(LineOf(root, 1), "(top level)", "a mapping with name, family and params",
                     root);
  }
  Record("params", LineOf(root, 1));
  if (const YAML::Node family = root["family"]; family && family.IsScalar()) {
    family_ = family.Scalar();
  }
  return ForEachPair(root, "", [&](const std::string& key, const YAML::Node& value, int line) {
    Record(key, line);
    return ReadTopLevelKey(key, value, line, spec);
  });
}

absl::Status SweepYamlReader::ReadTopLevelKey(const std::string& key, const YAML::Node& value,
                                              int line, v1::SweepSpec* spec) {
  if (key == "name") return ReadString(value, key, line, spec->mutable_name());
  if (key == "family") return ReadString(value, key, line, spec->mutable_family());
  if (key == "device") return ReadString(value, key, line, spec->mutable_device());
  if (key == "params") {
    lines_["params"] = line;
    return ReadParams(value, line, spec);
  }
  if (key == "options") {
    lines_["options"] = line;
    if (value.IsNull()) return absl::OkStatus();
    return ReadOptions(value, line, spec);
  }
  if (key == "run_predicted_oom") {
    bool run = false;
    if (absl::Status s = ReadBool(value, key, line, &run); !s.ok()) return s;
    spec->set_run_predicted_oom(run);
    return absl::OkStatus();
  }
  if (key == "repeats") return ReadRepeats(value, line, spec);
  if (key == "profile") {
    bool profile = false;
    if (absl::Status s = ReadBool(value, key, line, &profile); !s.ok()) return s;
    spec->mutable_run()->set_profile(profile);
    return absl::OkStatus();
  }
  if (key == "precision") {
    if (value.IsNull()) return Error(line, key, "missing value; write a name or a list of names");
    return ReadNameList(value, key, line, spec->mutable_precision());
  }
  if (key == "optimizer") {
    if (value.IsNull()) return Error(line, key, "missing value; write a name or a list of names");
    return ReadNameList(value, key, line, spec->mutable_optimizer());
  }
  if (key == "run") {
    if (value.IsNull()) return absl::OkStatus();
    return ReadRun(value, line, spec->mutable_run());
  }
  if (key == "stack") {
    if (value.IsNull()) return absl::OkStatus();
    return ReadStack(value, line, spec);
  }
  if (key == "torchscript") {
    return ReadTorchScriptSection(value, line, source_, spec->mutable_torchscript(), &lines_);
  }
  return Error(
      line, key,
      absl::StrCat("unknown key; allowed: ",
                   absl::StrJoin(std::begin(kTopLevelKeys), std::end(kTopLevelKeys), ", ")));
}

absl::Status SweepYamlReader::ReadRepeats(const YAML::Node& node, int line,
                                          v1::SweepSpec* spec) const {
  int32_t repeats = 0;
  if (absl::Status s = ReadInt32(node, "repeats", line, &repeats); !s.ok()) return s;
  if (repeats < 1 || repeats > model::kMaxRepeats) {
    return Error(line, "repeats",
                 absl::StrCat(repeats, " is out of range; allowed 1..", model::kMaxRepeats,
                              " (times each configuration is measured)"));
  }
  spec->set_repeats(repeats);
  return absl::OkStatus();
}

absl::Status SweepYamlReader::ReadStack(const YAML::Node& node, int line, v1::SweepSpec* spec) {
  if (!node.IsMap()) {
    return WrongKind(line, "stack",
                     "a mapping of setting: values (e.g. blas_core: [as-installed, auto])", node);
  }
  return ForEachPair(
      node, "stack", [&](const std::string& setting, const YAML::Node& values, int value_line) {
        const std::string path = absl::StrCat("stack.", setting);
        Record(path, value_line);
        if (values.IsNull()) {
          return Error(value_line, path, "missing value; write a value or a list of values");
        }
        return ReadNameList(values, path, value_line,
                            (*spec->mutable_stack())[setting].mutable_values());
      });
}

absl::Status SweepYamlReader::Locate(const absl::Status& status) const {
  const std::string message(status.message());
  const size_t colon = message.find(": ");
  std::string path = colon == std::string::npos ? "" : message.substr(0, colon);
  while (!path.empty()) {
    if (auto it = lines_.find(path); it != lines_.end()) {
      return absl::Status(status.code(), absl::StrCat(source_, ":", it->second, ": ", message));
    }
    const size_t cut = path.find_last_of(".[");
    path = cut == std::string::npos ? "" : path.substr(0, cut);
    // Options are usually written under params; a missing one is located
    // there unless the file has a top-level options mapping.
    if (path == "options" && lines_.count(path) == 0) path = "params";
  }
  return absl::Status(status.code(), absl::StrCat(source_, ": ", message));
}

}  // namespace paradnn::client::internal
