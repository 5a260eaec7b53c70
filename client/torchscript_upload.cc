#include "client/torchscript_upload.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "model/families/torchscript.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

constexpr const char* kSectionKeys[] = {"file", "sha256", "inputs", "loss", "target"};
constexpr const char* kTensorKeys[] = {"name", "shape", "dtype", "low", "high"};

// User text (a key, a value, a file name) as errors echo it: escaped, and
// cut after 160 bytes.
std::string Echo(absl::string_view text) {
  constexpr size_t kMaxEcho = 160;
  if (text.size() > kMaxEcho)
    return absl::StrCat(absl::CHexEscape(text.substr(0, kMaxEcho)), "...");
  return absl::CHexEscape(text);
}

int LineOf(const YAML::Node& node, int fallback) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? fallback : mark.line + 1;
}

bool OneOf(const std::string& value, const std::string& allowed) {
  for (absl::string_view name : absl::StrSplit(allowed, '|')) {
    if (name == value) return true;
  }
  return false;
}

class SectionReader {
 public:
  SectionReader(absl::string_view source, std::map<std::string, int>* lines)
      : source_(source), lines_(lines) {}

  absl::Status Read(const YAML::Node& section, int line, v1::TorchScriptModel* model) {
    lines_->emplace("torchscript", line);
    if (!section.IsMap()) {
      return Error(line, "torchscript",
                   "expected a mapping with file, inputs and loss (and target for "
                   "cross_entropy and mse)");
    }
    auto read_key = [&](const std::string& key, const YAML::Node& value, const std::string& path,
                        int key_line, int value_line) -> absl::Status {
      if (key == "file") return ReadFile(value, value_line, model);
      if (key == "sha256") return ReadText(value, path, value_line, model->mutable_sha256());
      if (key == "loss") {
        return ReadChoice(value, path, value_line, model::AllowedTorchScriptLosses(),
                          model->mutable_loss());
      }
      if (key == "inputs") return ReadInputs(value, value_line, model);
      if (key == "target") return ReadTensor(value, path, value_line, model->mutable_target());
      return UnknownKey(key_line, path, kSectionKeys);
    };
    if (absl::Status s = ForEachKey(section, "torchscript", line, read_key); !s.ok()) return s;
    if (model->content().empty() && model->sha256().empty()) {
      return Error(line, "torchscript.file",
                   "missing; name the TorchScript file (torch.jit.script/trace, saved with "
                   "torch.jit.save), relative to the sweep file");
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(int line, const std::string& path, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ":", line, ": ", Echo(path), ": ", what));
  }

  // A key is a plain name, given once per mapping (yaml-cpp keeps both of a
  // repeated key, and the second would silently win).
  absl::Status CheckKey(const YAML::Node& key, const std::string& field, int line,
                        std::map<std::string, int>* seen) const {
    if (!key.IsScalar()) return Error(line, field, "keys must be plain names");
    if (auto [prev, inserted] = seen->emplace(key.Scalar(), line); !inserted) {
      return Error(line, field, absl::StrCat("repeated key (first at line ", prev->second, ")"));
    }
    return absl::OkStatus();
  }

  // Walks the mapping `map` (the value at `path`, from `line`): checks each
  // key (CheckKey), records the line of "PATH.KEY", and returns the first
  // error of `visit(key, value, "PATH.KEY", key_line, value_line)`.
  template <typename Visit>
  absl::Status ForEachKey(const YAML::Node& map, const std::string& path, int line,
                          Visit visit) const {
    std::map<std::string, int> seen;
    // yaml-cpp hands out each pair by value: it->first would dangle.
    for (const auto& pair : map) {
      const std::string key = pair.first.Scalar();
      const YAML::Node& value = pair.second;
      const int key_line = LineOf(pair.first, line);
      const int value_line = value.IsScalar() ? LineOf(value, key_line) : key_line;
      const std::string field = absl::StrCat(path, ".", key);
      if (absl::Status s = CheckKey(pair.first, field, key_line, &seen); !s.ok()) return s;
      (*lines_)[field] = value_line;
      if (absl::Status s = visit(key, value, field, key_line, value_line); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  template <size_t N>
  absl::Status UnknownKey(int line, const std::string& path,
                          const char* const (&allowed)[N]) const {
    return Error(line, path,
                 absl::StrCat("unknown key; allowed: ",
                              absl::StrJoin(std::begin(allowed), std::end(allowed), ", ")));
  }

  absl::Status ReadText(const YAML::Node& node, const std::string& path, int line,
                        std::string* out) const {
    if (!node.IsScalar()) return Error(line, path, "expected text");
    *out = node.Scalar();
    return absl::OkStatus();
  }

  // Text that must be one of `allowed` ("a|b|c").
  absl::Status ReadChoice(const YAML::Node& node, const std::string& path, int line,
                          const std::string& allowed, std::string* out) const {
    if (absl::Status s = ReadText(node, path, line, out); !s.ok()) return s;
    if (OneOf(*out, allowed)) return absl::OkStatus();
    return Error(line, path, absl::StrCat("'", Echo(*out), "' is not one of ", allowed));
  }

  // Reads the model file, relative to the sweep file's folder.
  absl::Status ReadFile(const YAML::Node& node, int line, v1::TorchScriptModel* model) const {
    std::string name;
    if (absl::Status s = ReadText(node, "torchscript.file", line, &name); !s.ok()) return s;
    if (name.empty()) return Error(line, "torchscript.file", "empty; name the model file");
    std::filesystem::path path(name);
    const std::filesystem::path sweep_file(source_);
    if (path.is_relative() && source_ != "<stdin>" && sweep_file.has_parent_path()) {
      path = sweep_file.parent_path() / path;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return Error(line, "torchscript.file",
                   absl::StrCat("'", Echo(path.string()), "' is a folder"));
    }
    // A device, FIFO or socket (/dev/zero, /dev/stdin) has no size to check
    // and may never end; a model is a file.
    if (const auto status = std::filesystem::status(path, ec);
        !ec && status.type() != std::filesystem::file_type::regular) {
      return Error(line, "torchscript.file",
                   absl::StrCat("'", Echo(path.string()), "' is not a regular file"));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      const int error = errno;
      return Error(line, "torchscript.file",
                   absl::StrCat("cannot read '", Echo(path.string()), "': ", std::strerror(error)));
    }
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<uintmax_t>(model::kMaxTorchScriptBytes)) {
      return Error(line, "torchscript.file",
                   absl::StrCat("'", Echo(path.string()), "' has ", size, " bytes; at most ",
                                model::kMaxTorchScriptBytes, " (256 MiB) can be uploaded"));
    }
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (in.bad()) {
      return Error(line, "torchscript.file",
                   absl::StrCat("cannot read '", Echo(path.string()), "'"));
    }
    model->set_content(std::move(bytes).str());
    if (model->content().empty()) {
      return Error(line, "torchscript.file", absl::StrCat("'", Echo(path.string()), "' is empty"));
    }
    model->set_file_name(path.filename().string());
    return absl::OkStatus();
  }

  absl::Status ReadInputs(const YAML::Node& node, int line, v1::TorchScriptModel* model) const {
    if (!node.IsSequence()) {
      return Error(line, "torchscript.inputs",
                   "expected a list of tensors, one per forward() argument, e.g. "
                   "[{name: x, shape: [-1, 64], dtype: float32}]");
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string path = absl::StrCat("torchscript.inputs[", i, "]");
      const int item_line = LineOf(node[i], line);
      (*lines_)[path] = item_line;
      if (absl::Status s = ReadTensor(node[i], path, item_line, model->add_inputs()); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadTensor(const YAML::Node& node, const std::string& path, int line,
                          v1::TensorSpec* tensor) const {
    if (!node.IsMap()) {
      return Error(line, path, "expected a mapping with shape (and name, dtype, low, high)");
    }
    bool has_shape = false;
    auto read_key = [&](const std::string& key, const YAML::Node& value, const std::string& field,
                        int key_line, int value_line) -> absl::Status {
      if (key == "name") return ReadText(value, field, value_line, tensor->mutable_name());
      if (key == "shape") {
        has_shape = true;
        return ReadShape(value, field, value_line, tensor);
      }
      if (key == "dtype") {
        return ReadChoice(value, field, value_line, model::AllowedTensorDtypes(),
                          tensor->mutable_dtype());
      }
      if (key != "low" && key != "high") return UnknownKey(key_line, field, kTensorKeys);
      double number = 0;
      if (!value.IsScalar() || !absl::SimpleAtod(value.Scalar(), &number) ||
          !std::isfinite(number)) {
        return Error(value_line, field, "expected a number");
      }
      if (key == "low") {
        tensor->set_low(number);
      } else {
        tensor->set_high(number);
      }
      return absl::OkStatus();
    };
    if (absl::Status s = ForEachKey(node, path, line, read_key); !s.ok()) return s;
    if (!has_shape) {
      return Error(line, absl::StrCat(path, ".shape"),
                   "missing; give the dimensions, -1 where the batch goes (e.g. [-1, 64])");
    }
    return absl::OkStatus();
  }

  absl::Status ReadShape(const YAML::Node& node, const std::string& path, int line,
                         v1::TensorSpec* tensor) const {
    constexpr const char* kHint = "a list of positive integers, -1 where the batch goes";
    if (!node.IsSequence() || node.size() == 0) {
      return Error(line, path, absl::StrCat("expected ", kHint, " (e.g. [-1, 3, 224, 224])"));
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const int item_line = LineOf(node[i], line);
      int64_t dim = 0;
      if (!node[i].IsScalar() || !absl::SimpleAtoi(node[i].Scalar(), &dim) ||
          (dim < 1 && dim != -1)) {
        return Error(
            item_line, absl::StrCat(path, "[", i, "]"),
            absl::StrCat("'", node[i].IsScalar() ? Echo(node[i].Scalar()) : "(not a scalar)",
                         "' is not ", kHint));
      }
      tensor->add_shape(dim);
    }
    return absl::OkStatus();
  }

  std::string source_;
  std::map<std::string, int>* lines_;
};

}  // namespace

absl::Status ReadTorchScriptSection(const YAML::Node& section, int line, absl::string_view source,
                                    v1::TorchScriptModel* model,
                                    std::map<std::string, int>* lines) {
  return SectionReader(source, lines).Read(section, line, model);
}

}  // namespace paradnn::client
