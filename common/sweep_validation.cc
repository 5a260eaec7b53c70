#include "common/sweep_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/run_settings.h"
#include "common/stack_findings.h"

namespace paradnn::common {
namespace {

constexpr const char* kDevices[] = {"cpu", "cuda", "tpu"};
constexpr const char* kPrecisions[] = {"float32", "bfloat16", "float16", "mixed_bf16",
                                       "mixed_fp16"};
constexpr const char* kOptimizers[] = {"rmsprop", "sgd", "momentum"};
constexpr const char* kTorchScriptLosses[] = {"cross_entropy", "mse", "sum", "output"};
constexpr const char* kTensorDtypes[] = {"float32", "int64"};

// A sweep file is kept for the record, not parsed by the coordinator; this
// bounds what one client can make it store.
constexpr size_t kMaxSourceTextBytes = 1 << 20;

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

template <size_t N>
bool Contains(const char* const (&names)[N], absl::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

template <size_t N>
std::string JoinNames(const char* const (&names)[N], const char* separator) {
  return absl::StrJoin(std::begin(names), std::end(names), separator);
}

// User text echoed in an error: quoted, escaped, and bounded in length.
std::string Quote(absl::string_view text) {
  constexpr size_t kMaxEcho = 64;
  if (text.size() > kMaxEcho) {
    return absl::StrCat("'", absl::CHexEscape(text.substr(0, kMaxEcho)), "...'");
  }
  return absl::StrCat("'", absl::CHexEscape(text), "'");
}

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kSaturated / b) return kSaturated;
  return a * b;
}

std::string ParamNames(const FamilySchema& family, bool required_only) {
  std::vector<absl::string_view> names;
  for (const ParamSchema& p : family.params) {
    if (!required_only || p.required) names.push_back(p.name);
  }
  return absl::StrJoin(names, ", ");
}

std::string AllowedRange(const ParamSchema& schema) {
  std::string allowed = absl::StrCat("allowed ", schema.min_value, "..", schema.max_value);
  if (schema.multiple_of > 1) absl::StrAppend(&allowed, " in multiples of ", schema.multiple_of);
  if (schema.constraint != nullptr) absl::StrAppend(&allowed, ": ", schema.constraint);
  return allowed;
}

absl::Status OutOfRange(const std::string& field, int64_t value, const ParamSchema& schema) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", value, " is out of range; ", AllowedRange(schema)));
}

bool IsMultiple(int64_t value, const ParamSchema& schema) {
  return schema.multiple_of <= 1 || value % schema.multiple_of == 0;
}

absl::Status NotMultiple(const std::string& field, int64_t value, const ParamSchema& schema) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is not a multiple of ",
                                                 schema.multiple_of, "; ", AllowedRange(schema)));
}

// In range, and on the schema's grid unless `grid` is false (a range's max
// need not lie on it).
absl::Status CheckValue(const std::string& field, int64_t value, const ParamSchema& schema,
                        bool grid = true) {
  if (value < schema.min_value || value > schema.max_value) {
    return OutOfRange(field, value, schema);
  }
  if (grid && !IsMultiple(value, schema)) return NotMultiple(field, value, schema);
  return absl::OkStatus();
}

// Validates one parameter and returns how many values it takes; appends them
// to `values` when it is not null. Walks ranges without storing them so that
// a hostile range costs time proportional to its length only once, bounded
// by the schema's maximum.
absl::StatusOr<int64_t> CheckParam(const v1::ParamSpec& spec, const ParamSchema& schema,
                                   const std::string& path, std::vector<int64_t>* values) {
  switch (spec.kind_case()) {
    case v1::ParamSpec::kValue: {
      if (absl::Status s = CheckValue(path, spec.value(), schema); !s.ok()) return s;
      if (values != nullptr) values->push_back(spec.value());
      return 1;
    }
    case v1::ParamSpec::kValues: {
      const std::string list_path = absl::StrCat(path, ".values");
      const auto& list = spec.values().values();
      if (list.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(list_path, ": empty list; give at least one value"));
      }
      std::unordered_map<int64_t, int> first_index;
      for (int i = 0; i < list.size(); ++i) {
        const std::string item_path = absl::StrCat(list_path, "[", i, "]");
        if (absl::Status s = CheckValue(item_path, list[i], schema); !s.ok()) return s;
        const auto [it, inserted] = first_index.emplace(list[i], i);
        if (!inserted) {
          return absl::InvalidArgumentError(absl::StrCat(item_path, ": ", list[i],
                                                         " is repeated (also at [", it->second,
                                                         "]); each value once"));
        }
      }
      if (values != nullptr) values->insert(values->end(), list.begin(), list.end());
      return static_cast<int64_t>(list.size());
    }
    case v1::ParamSpec::kRange: {
      const v1::IntRange& r = spec.range();
      const std::string range_path = absl::StrCat(path, ".range");
      if (absl::Status s = CheckValue(range_path + ".min", r.min(), schema); !s.ok()) return s;
      if (absl::Status s = CheckValue(range_path + ".max", r.max(), schema, /*grid=*/false);
          !s.ok()) {
        return s;
      }
      if (r.min() > r.max()) {
        return absl::InvalidArgumentError(
            absl::StrCat(range_path, ": min ", r.min(), " > max ", r.max()));
      }
      if (r.has_mul() && r.has_add()) {
        return absl::InvalidArgumentError(
            absl::StrCat(range_path, ": exactly one of mul or add is allowed; got both"));
      }
      if (!r.has_mul() && !r.has_add()) {
        return absl::InvalidArgumentError(
            absl::StrCat(range_path, ": needs a step, mul (> 1) or add (> 0)"));
      }
      if (r.has_add()) {
        if (r.add() <= 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(range_path, ".add: ", r.add(), " must be > 0"));
        }
        if (!IsMultiple(r.add(), schema)) return NotMultiple(range_path + ".add", r.add(), schema);
        const int64_t count = (r.max() - r.min()) / r.add() + 1;
        if (values != nullptr) {
          for (int64_t i = 0; i < count; ++i) values->push_back(r.min() + i * r.add());
        }
        return count;
      }
      const double mul = r.mul();
      if (!(std::isfinite(mul) && mul > 1)) {
        return absl::InvalidArgumentError(absl::StrCat(range_path, ".mul: ", mul, " must be > 1"));
      }
      int64_t count = 0;
      int64_t v = r.min();
      while (true) {
        ++count;
        if (values != nullptr) values->push_back(v);
        // max <= the schema's maximum, far below 2^53: the double is exact.
        const double next = std::round(static_cast<double>(v) * mul);
        if (next > static_cast<double>(r.max())) break;
        if (next <= static_cast<double>(v)) {
          return absl::InvalidArgumentError(
              absl::StrCat(range_path, ".mul: ", mul, " does not advance from ", v, " (", v, " x ",
                           mul, " rounds to ", v, "); use a larger mul or add"));
        }
        v = static_cast<int64_t>(next);
        if (!IsMultiple(v, schema)) {
          return absl::InvalidArgumentError(absl::StrCat(range_path, ".mul: ", mul, " reaches ", v,
                                                         ", not a multiple of ", schema.multiple_of,
                                                         "; ", AllowedRange(schema)));
        }
      }
      return count;
    }
    case v1::ParamSpec::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": no value given; write a number, a list [a, b] or {min, max, mul|add}"));
}

std::string OptionNames(const FamilySchema& family) {
  std::vector<absl::string_view> names;
  for (const OptionSchema& o : family.options) names.push_back(o.name);
  return absl::StrJoin(names, ", ");
}

absl::Status CheckOptionValue(const std::string& field, const std::string& value,
                              const OptionSchema& schema) {
  if (schema.allowed.empty()) {
    if (schema.check == nullptr) return absl::OkStatus();
    absl::Status s = schema.check(value);
    if (s.ok()) return s;
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", Quote(value), " ", s.message()));
  }
  if (std::find(schema.allowed.begin(), schema.allowed.end(), value) == schema.allowed.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", Quote(value), " is not one of ", AllowedOptionValues(schema)));
  }
  return absl::OkStatus();
}

// Validates one option's value list and returns how many values it takes.
absl::StatusOr<int64_t> CheckOption(const v1::StringValues& list, const OptionSchema& schema,
                                    const std::string& path) {
  if (list.values().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": empty list; give at least one of ", AllowedOptionValues(schema)));
  }
  // A free-text option (blocks) has millions of valid values, so a client
  // can send a long list of distinct ones: find repeats in linear time.
  std::unordered_map<std::string_view, int> first_index;
  for (int i = 0; i < list.values_size(); ++i) {
    const std::string item_path = absl::StrCat(path, "[", i, "]");
    if (absl::Status s = CheckOptionValue(item_path, list.values(i), schema); !s.ok()) return s;
    const auto [it, inserted] = first_index.emplace(list.values(i), i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(item_path, ": ", Quote(list.values(i)),
                                                     " is repeated (also at [", it->second, "])"));
    }
  }
  return static_cast<int64_t>(list.values_size());
}

absl::Status CheckName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("name: missing; every sweep needs a name");
  if (name.size() > kMaxSweepNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: ", name.size(), " bytes; at most ", kMaxSweepNameBytes));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    // Bytes >= 0x80 are UTF-8 (protobuf has checked the encoding).
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat("name: control character at byte ", i, " in ",
                                                     Quote(name), "; use printable text"));
    }
  }
  return absl::OkStatus();
}

template <size_t N>
absl::Status CheckNameList(const char* field,
                           const google::protobuf::RepeatedPtrField<std::string>& list,
                           const char* const (&allowed)[N]) {
  for (int i = 0; i < list.size(); ++i) {
    if (!Contains(allowed, list[i])) {
      return absl::InvalidArgumentError(absl::StrCat(field, "[", i, "]: ", Quote(list[i]),
                                                     " is not one of ", JoinNames(allowed, "|")));
    }
    for (int j = 0; j < i; ++j) {
      if (list[j] == list[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, "[", i, "]: ", Quote(list[i]), " is repeated (also at [", j, "])"));
      }
    }
  }
  return absl::OkStatus();
}

// ---- family torchscript -------------------------------------------------------

constexpr size_t kMaxTensorNameBytes = 128;
constexpr int kMaxTensorRank = 8;
constexpr int kMaxTorchScriptInputs = 64;
constexpr int64_t kMaxTensorDim = int64_t{1} << 31;

// One input or target: a name of bounded length, 1..kMaxTensorRank
// dimensions that are positive or -1 (the batch, at most once), dtype
// float32|int64 (empty = float32), and a value range low < high (required
// for int64; both 0 lets the runner pick for float32).
absl::Status CheckTensorSpec(const v1::TensorSpec& tensor, const std::string& path) {
  if (tensor.name().size() > kMaxTensorNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".name: ", tensor.name().size(),
                                                   " bytes; at most ", kMaxTensorNameBytes));
  }
  if (tensor.shape().empty() || tensor.shape_size() > kMaxTensorRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".shape: ", tensor.shape_size(), " dimensions; give 1..", kMaxTensorRank,
                     ", -1 where the batch goes (e.g. [-1, 3, 224, 224])"));
  }
  int batch_dims = 0;
  for (int i = 0; i < tensor.shape_size(); ++i) {
    const int64_t dim = tensor.shape(i);
    if (dim == -1) {
      ++batch_dims;
      continue;
    }
    if (dim < 1 || dim > kMaxTensorDim) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".shape[", i, "]: ", dim,
                                                     " is out of range; allowed 1..", kMaxTensorDim,
                                                     ", or -1 for the batch"));
    }
  }
  if (batch_dims > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".shape: ", batch_dims, " dimensions are -1; only the batch is"));
  }
  if (!tensor.dtype().empty() && !Contains(kTensorDtypes, tensor.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".dtype: ", Quote(tensor.dtype()), " is not one of ", JoinNames(kTensorDtypes, "|")));
  }
  if (!std::isfinite(tensor.low()) || !std::isfinite(tensor.high())) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": low and high must be finite numbers"));
  }
  const bool integer = tensor.dtype() == "int64";
  if ((integer || tensor.low() != 0 || tensor.high() != 0) && !(tensor.low() < tensor.high())) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".high: ", tensor.high(), " must be > low ", tensor.low(),
        integer ? " (values are randint(low, high))" : " (values are uniform in [low, high))"));
  }
  return absl::OkStatus();
}

absl::Status CheckTorchScript(const v1::SweepSpec& spec) {
  const bool is_torchscript = spec.family() == kTorchScriptFamily;
  if (!is_torchscript) {
    if (spec.has_torchscript()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "torchscript: only family torchscript takes a model; this sweep's family is ",
          Quote(spec.family())));
    }
    return absl::OkStatus();
  }
  if (!spec.has_torchscript()) {
    return absl::InvalidArgumentError(
        "torchscript: missing; family torchscript needs the model file, its inputs and a loss "
        "rule");
  }
  const v1::TorchScriptModel& model = spec.torchscript();
  if (!model.sha256().empty()) {
    const bool hex = model.sha256().size() == 64 &&
                     std::all_of(model.sha256().begin(), model.sha256().end(), [](char c) {
                       return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
    if (!hex) {
      return absl::InvalidArgumentError(absl::StrCat("torchscript.sha256: ", Quote(model.sha256()),
                                                     " is not 64 lowercase hex digits"));
    }
  }
  if (model.content().empty() && model.sha256().empty()) {
    return absl::InvalidArgumentError(
        "torchscript.content: empty; give the model file (or the sha256 of a model the "
        "coordinator already stores)");
  }
  if (static_cast<int64_t>(model.content().size()) > kMaxTorchScriptBytes) {
    return absl::InvalidArgumentError(absl::StrCat("torchscript.content: ", model.content().size(),
                                                   " bytes; at most ", kMaxTorchScriptBytes,
                                                   " (256 MiB)"));
  }
  if (model.file_name().size() > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("torchscript.file_name: ", model.file_name().size(), " bytes; at most 4096"));
  }
  if (model.inputs().empty()) {
    return absl::InvalidArgumentError(
        "torchscript.inputs: empty; declare forward()'s arguments (shape with -1 for the batch, "
        "dtype float32|int64)");
  }
  if (model.inputs_size() > kMaxTorchScriptInputs) {
    return absl::InvalidArgumentError(absl::StrCat("torchscript.inputs: ", model.inputs_size(),
                                                   " inputs; at most ", kMaxTorchScriptInputs));
  }
  bool batched = false;
  for (int i = 0; i < model.inputs_size(); ++i) {
    const v1::TensorSpec& input = model.inputs(i);
    if (absl::Status s = CheckTensorSpec(input, absl::StrCat("torchscript.inputs[", i, "]"));
        !s.ok()) {
      return s;
    }
    batched =
        batched || std::find(input.shape().begin(), input.shape().end(), -1) != input.shape().end();
  }
  if (!batched) {
    return absl::InvalidArgumentError(
        "torchscript.inputs: no shape has a -1; mark the batch dimension of at least one input "
        "with -1 (the sweep's batch fills it)");
  }
  if (!Contains(kTorchScriptLosses, model.loss())) {
    return absl::InvalidArgumentError(absl::StrCat("torchscript.loss: ", Quote(model.loss()),
                                                   " is not one of ", AllowedTorchScriptLosses()));
  }
  const bool needs_target = model.loss() == "cross_entropy" || model.loss() == "mse";
  if (!needs_target) {
    if (model.has_target()) {
      return absl::InvalidArgumentError(absl::StrCat("torchscript.target: loss ", model.loss(),
                                                     " takes no target; leave it out"));
    }
    return absl::OkStatus();
  }
  if (!model.has_target()) {
    return absl::InvalidArgumentError(
        absl::StrCat("torchscript.target: missing; loss ", model.loss(), " needs a target tensor (",
                     model.loss() == "cross_entropy" ? "int64 class ids in [0, classes)"
                                                     : "float32, shaped like the output",
                     ")"));
  }
  if (absl::Status s = CheckTensorSpec(model.target(), "torchscript.target"); !s.ok()) return s;
  const std::string& dtype = model.target().dtype().empty() ? "float32" : model.target().dtype();
  const char* want = model.loss() == "cross_entropy" ? "int64" : "float32";
  if (dtype != want) {
    return absl::InvalidArgumentError(absl::StrCat("torchscript.target.dtype: ", Quote(dtype),
                                                   "; loss ", model.loss(), " needs ", want));
  }
  return absl::OkStatus();
}

// ---- text ------------------------------------------------------------------------

absl::Status NotUtf8(const std::string& field, absl::string_view text, size_t offset) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": byte ", offset, " of ", Quote(text),
                                                 " is not UTF-8; use UTF-8 text"));
}

absl::Status CheckUtf8(const std::string& field, absl::string_view text) {
  const size_t offset = FirstNonUtf8Byte(text);
  if (offset == absl::string_view::npos) return absl::OkStatus();
  return NotUtf8(field, text, offset);
}

absl::Status CheckUtf8List(const std::string& field,
                           const google::protobuf::RepeatedPtrField<std::string>& list) {
  for (int i = 0; i < list.size(); ++i) {
    if (absl::Status s = CheckUtf8(absl::StrCat(field, "[", i, "]"), list[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckTensorUtf8(const v1::TensorSpec& tensor, const std::string& path) {
  if (absl::Status s = CheckUtf8(path + ".name", tensor.name()); !s.ok()) return s;
  return CheckUtf8(path + ".dtype", tensor.dtype());
}

// Every string field of `spec` (torchscript.content is bytes).
absl::Status CheckUtf8Fields(const v1::SweepSpec& spec) {
  for (const auto& [field, text] :
       {std::pair<const char*, const std::string*>{"name", &spec.name()},
        {"family", &spec.family()},
        {"device", &spec.device()},
        {"source_text", &spec.source_text()},
        {"torchscript.sha256", &spec.torchscript().sha256()},
        {"torchscript.file_name", &spec.torchscript().file_name()},
        {"torchscript.loss", &spec.torchscript().loss()}}) {
    if (absl::Status s = CheckUtf8(field, *text); !s.ok()) return s;
  }
  for (const auto& entry : spec.params()) {
    if (const size_t offset = FirstNonUtf8Byte(entry.first); offset != absl::string_view::npos) {
      return NotUtf8("params", entry.first, offset);
    }
  }
  for (const auto& entry : spec.options()) {
    if (const size_t offset = FirstNonUtf8Byte(entry.first); offset != absl::string_view::npos) {
      return NotUtf8("options", entry.first, offset);
    }
    if (absl::Status s =
            CheckUtf8List(absl::StrCat("options.", EchoKey(entry.first)), entry.second.values());
        !s.ok()) {
      return s;
    }
  }
  for (const auto& entry : spec.stack()) {
    if (const size_t offset = FirstNonUtf8Byte(entry.first); offset != absl::string_view::npos) {
      return NotUtf8("stack", entry.first, offset);
    }
    if (absl::Status s =
            CheckUtf8List(absl::StrCat("stack.", EchoKey(entry.first)), entry.second.values());
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckUtf8List("precision", spec.precision()); !s.ok()) return s;
  if (absl::Status s = CheckUtf8List("optimizer", spec.optimizer()); !s.ok()) return s;
  for (int i = 0; i < spec.torchscript().inputs_size(); ++i) {
    if (absl::Status s = CheckTensorUtf8(spec.torchscript().inputs(i),
                                         absl::StrCat("torchscript.inputs[", i, "]"));
        !s.ok()) {
      return s;
    }
  }
  return CheckTensorUtf8(spec.torchscript().target(), "torchscript.target");
}

// ---- expansion ------------------------------------------------------------------

std::vector<std::string> SortedKeys(const v1::SweepSpec& spec) {
  std::vector<std::string> keys;
  keys.reserve(spec.params().size());
  for (const auto& [key, unused] : spec.params()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> SortedOptionKeys(const v1::SweepSpec& spec) {
  std::vector<std::string> keys;
  keys.reserve(spec.options().size());
  for (const auto& [key, unused] : spec.options()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> SortedStackKeys(const v1::SweepSpec& spec) {
  std::vector<std::string> keys;
  keys.reserve(spec.stack().size());
  for (const auto& [key, unused] : spec.stack()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// One stack axis: a known setting, on a CPU sweep, with distinct valid
// values. Returns how many.
absl::StatusOr<int64_t> CheckStack(const v1::SweepSpec& spec, const std::string& key) {
  const std::string path = absl::StrCat("stack.", EchoKey(key));
  const StackSettingInfo* info = FindStackSettingInfo(key);
  if (info == nullptr) {
    std::vector<std::string> names;
    for (const StackSettingInfo& i : StackSettingInfos()) names.push_back(i.component);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a stack setting; allowed: ",
                                                   absl::StrJoin(names, ", ")));
  }
  const std::string device = spec.device().empty() ? kDefaultDevice : spec.device();
  if (device != "cpu") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": stack settings choose CPU libraries' kernels; this sweep's device is ", device));
  }
  const v1::StringValues& list = spec.stack().at(key);
  if (list.values().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": empty list; give at least one of auto, as-installed or ", info->names_help));
  }
  std::set<std::string> seen;
  for (int i = 0; i < list.values_size(); ++i) {
    const std::string item = absl::StrCat(path, "[", i, "]");
    if (absl::Status s = ValidateStackValue(*info, list.values(i), item); !s.ok()) return s;
    if (!seen.insert(list.values(i)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(item, ": '", list.values(i), "' is listed twice"));
    }
  }
  return list.values_size();
}

std::vector<std::string> OrDefault(const google::protobuf::RepeatedPtrField<std::string>& list,
                                   const char* default_value) {
  if (list.empty()) return {default_value};
  return {list.begin(), list.end()};
}

}  // namespace

size_t FirstNonUtf8Byte(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The length of the sequence and the range of its second byte (which
    // rules out overlong forms, surrogates and code points above U+10FFFF).
    size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      length = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      if (c == 0xe0) low = 0xa0;
      if (c == 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      if (c == 0xf0) low = 0x90;
      if (c == 0xf4) high = 0x8f;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    if (byte(i + 1) < low || byte(i + 1) > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return i;
    }
    i += length;
  }
  return absl::string_view::npos;
}

std::string EchoKey(absl::string_view key) {
  constexpr size_t kMaxEcho = 64;
  if (key.size() > kMaxEcho) return absl::StrCat(absl::CHexEscape(key.substr(0, kMaxEcho)), "...");
  return absl::CHexEscape(key);
}

const FamilySchema* FindFamily(absl::string_view family) {
  for (const FamilySchema& f : Families()) {
    if (family == f.name) return &f;
  }
  return nullptr;
}

const ParamSchema* FindParam(const FamilySchema& family, absl::string_view param) {
  for (const ParamSchema& p : family.params) {
    if (param == p.name) return &p;
  }
  return nullptr;
}

const OptionSchema* FindOption(const FamilySchema& family, absl::string_view option) {
  for (const OptionSchema& o : family.options) {
    if (option == o.name) return &o;
  }
  return nullptr;
}

std::string AllowedFamilies() {
  std::vector<absl::string_view> names;
  for (const FamilySchema& f : Families()) names.push_back(f.name);
  return absl::StrJoin(names, "|");
}
std::string AllowedDevices() { return JoinNames(kDevices, "|"); }
std::string AllowedPrecisions() { return JoinNames(kPrecisions, "|"); }
std::string AllowedOptimizers() { return JoinNames(kOptimizers, "|"); }
std::string AllowedTorchScriptLosses() { return JoinNames(kTorchScriptLosses, "|"); }
std::string AllowedTensorDtypes() { return JoinNames(kTensorDtypes, "|"); }

std::string AllowedOptionValues(const OptionSchema& option) {
  if (!option.allowed.empty()) return absl::StrJoin(option.allowed, "|");
  return option.description;
}

absl::StatusOr<std::vector<int64_t>> ParamValues(const v1::ParamSpec& spec,
                                                 const ParamSchema& schema,
                                                 const std::string& path) {
  std::vector<int64_t> values;
  absl::StatusOr<int64_t> count = CheckParam(spec, schema, path, &values);
  if (!count.ok()) return count.status();
  return values;
}

absl::Status ValidateSweep(const v1::SweepSpec& spec, int64_t max_jobs) {
  if (max_jobs <= 0) max_jobs = kDefaultMaxJobs;
  if (absl::Status s = CheckUtf8Fields(spec); !s.ok()) return s;
  if (absl::Status s = CheckName(spec.name()); !s.ok()) return s;

  if (spec.family().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("family: missing; one of ", AllowedFamilies()));
  }
  const FamilySchema* family = FindFamily(spec.family());
  if (family == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "family: ", Quote(spec.family()), " is not a known family; one of ", AllowedFamilies()));
  }
  // An empty device means kDefaultDevice, as everywhere else.
  if (!spec.device().empty() && !Contains(kDevices, spec.device())) {
    return absl::InvalidArgumentError(
        absl::StrCat("device: ", Quote(spec.device()), " is not one of ", AllowedDevices()));
  }

  int64_t configurations = 1;
  for (const std::string& key : SortedKeys(spec)) {
    const ParamSchema* schema = FindParam(*family, key);
    if (schema == nullptr) {
      std::string allowed = absl::StrCat("allowed: ", ParamNames(*family, false));
      if (!family->options.empty()) {
        absl::StrAppend(&allowed, "; options: ", OptionNames(*family));
      }
      return absl::InvalidArgumentError(absl::StrCat("params.", EchoKey(key),
                                                     ": unknown parameter of family ", family->name,
                                                     "; ", allowed));
    }
    absl::StatusOr<int64_t> count =
        CheckParam(spec.params().at(key), *schema, absl::StrCat("params.", key), nullptr);
    if (!count.ok()) return count.status();
    configurations = SaturatingMultiply(configurations, *count);
  }
  for (const ParamSchema& p : family->params) {
    if (p.required && spec.params().count(p.name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("params.", p.name, ": missing; family ",
                                                     family->name, " requires ",
                                                     ParamNames(*family, true)));
    }
  }

  for (const std::string& key : SortedOptionKeys(spec)) {
    const std::string path = absl::StrCat("options.", EchoKey(key));
    const OptionSchema* schema = FindOption(*family, key);
    if (schema == nullptr) {
      if (family->options.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": family ", family->name, " takes no options"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": unknown option of family ", family->name, "; allowed: ", OptionNames(*family)));
    }
    absl::StatusOr<int64_t> count = CheckOption(spec.options().at(key), *schema, path);
    if (!count.ok()) return count.status();
    configurations = SaturatingMultiply(configurations, *count);
  }
  for (const OptionSchema& o : family->options) {
    if (o.default_value == nullptr && spec.options().count(o.name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("options.", o.name, ": missing; family ",
                                                     family->name, " requires ", o.name,
                                                     ", one of ", AllowedOptionValues(o)));
    }
  }

  for (const std::string& key : SortedStackKeys(spec)) {
    absl::StatusOr<int64_t> count = CheckStack(spec, key);
    if (!count.ok()) return count.status();
    configurations = SaturatingMultiply(configurations, *count);
  }

  // A thread count in both places would leave the record ambiguous about
  // which one a job ran with.
  if (spec.params().count("intra_op_threads") != 0 && spec.run().intra_op_threads() != 0) {
    return absl::InvalidArgumentError(
        "params.intra_op_threads: also given as run.intra_op_threads; give it in one place "
        "(params to sweep it)");
  }
  if (spec.params().count("inter_op_threads") != 0 && spec.run().inter_op_threads() != 0) {
    return absl::InvalidArgumentError(
        "params.inter_op_threads: also given as run.inter_op_threads; give it in one place "
        "(params to sweep it)");
  }

  if (absl::Status s = CheckTorchScript(spec); !s.ok()) return s;
  if (absl::Status s = CheckNameList("precision", spec.precision(), kPrecisions); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckNameList("optimizer", spec.optimizer(), kOptimizers); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateRunSettings(spec.run()); !s.ok()) return s;
  if (spec.source_text().size() > kMaxSourceTextBytes) {
    return absl::InvalidArgumentError(absl::StrCat("source_text: ", spec.source_text().size(),
                                                   " bytes; at most ", kMaxSourceTextBytes));
  }

  if (spec.repeats() < 0 || spec.repeats() > kMaxRepeats) {
    return absl::InvalidArgumentError(absl::StrCat("repeats: ", spec.repeats(),
                                                   " is out of range; allowed 1..", kMaxRepeats));
  }
  configurations = SaturatingMultiply(configurations, std::max(1, spec.precision_size()));
  configurations = SaturatingMultiply(configurations, std::max(1, spec.optimizer_size()));
  const int64_t jobs = SaturatingMultiply(configurations, std::max(1, spec.repeats()));
  if (jobs > max_jobs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sweep expands to ", jobs == kSaturated ? "at least " : "", jobs,
        spec.repeats() > 1 ? absl::StrCat(" jobs (", spec.repeats(), " repeats)") : " configurations",
        "; the limit is ", max_jobs, " (--max-jobs)"));
  }
  return absl::OkStatus();
}

int64_t CountConfigurations(const v1::SweepSpec& spec) {
  int64_t configurations = 1;
  const FamilySchema* family = FindFamily(spec.family());
  if (family != nullptr) {
    for (const auto& [key, param] : spec.params()) {
      const ParamSchema* schema = FindParam(*family, key);
      if (schema == nullptr) continue;
      absl::StatusOr<int64_t> count = CheckParam(param, *schema, key, nullptr);
      if (count.ok()) configurations = SaturatingMultiply(configurations, *count);
    }
    for (const auto& [key, list] : spec.options()) {
      const OptionSchema* schema = FindOption(*family, key);
      if (schema == nullptr) continue;
      absl::StatusOr<int64_t> count = CheckOption(list, *schema, key);
      if (count.ok()) configurations = SaturatingMultiply(configurations, *count);
    }
    for (const std::string& key : SortedStackKeys(spec)) {
      absl::StatusOr<int64_t> count = CheckStack(spec, key);
      if (count.ok()) configurations = SaturatingMultiply(configurations, *count);
    }
  }
  configurations = SaturatingMultiply(configurations, std::max(1, spec.precision_size()));
  return SaturatingMultiply(configurations, std::max(1, spec.optimizer_size()));
}

absl::StatusOr<std::vector<v1::ModelConfig>> ExpandSweep(const v1::SweepSpec& spec,
                                                         int64_t max_jobs) {
  if (absl::Status s = ValidateSweep(spec, max_jobs); !s.ok()) return s;
  const FamilySchema& family = *FindFamily(spec.family());

  // Every config starts from this template: the family, the defaults of
  // what the sweep leaves out, and the TorchScript model without its bytes.
  v1::ModelConfig base;
  base.set_family(spec.family());
  for (const ParamSchema& p : family.params) {
    if (p.default_value != 0 && spec.params().count(p.name) == 0) {
      (*base.mutable_params())[p.name] = p.default_value;
    }
  }
  for (const OptionSchema& o : family.options) {
    if (o.default_value != nullptr && *o.default_value != '\0' &&
        spec.options().count(o.name) == 0) {
      (*base.mutable_options())[o.name] = o.default_value;
    }
  }
  if (spec.has_torchscript()) {
    v1::TorchScriptModel* model = base.mutable_torchscript();
    model->set_sha256(spec.torchscript().sha256());
    model->set_file_name(spec.torchscript().file_name());
    *model->mutable_inputs() = spec.torchscript().inputs();
    model->set_loss(spec.torchscript().loss());
    if (spec.torchscript().has_target()) *model->mutable_target() = spec.torchscript().target();
  }

  // The axes of the cross product, outermost first: parameters, then
  // options, then stack settings, each in sorted key order.
  const std::vector<std::string> keys = SortedKeys(spec);
  const std::vector<std::string> option_keys = SortedOptionKeys(spec);
  const std::vector<std::string> stack_keys = SortedStackKeys(spec);
  std::vector<std::vector<int64_t>> values;
  values.reserve(keys.size());
  for (const std::string& key : keys) {
    absl::StatusOr<std::vector<int64_t>> v =
        ParamValues(spec.params().at(key), *FindParam(family, key), absl::StrCat("params.", key));
    if (!v.ok()) return v.status();  // unreachable after ValidateSweep; kept for safety
    values.push_back(*std::move(v));
  }
  std::vector<size_t> sizes;
  for (const auto& v : values) sizes.push_back(v.size());
  for (const std::string& key : option_keys) {
    sizes.push_back(static_cast<size_t>(spec.options().at(key).values_size()));
  }
  for (const std::string& key : stack_keys) {
    sizes.push_back(static_cast<size_t>(spec.stack().at(key).values_size()));
  }
  const std::vector<std::string> precisions = OrDefault(spec.precision(), kDefaultPrecision);
  const std::vector<std::string> optimizers = OrDefault(spec.optimizer(), kDefaultOptimizer);

  std::vector<v1::ModelConfig> configs;
  configs.reserve(static_cast<size_t>(CountConfigurations(spec)));
  // An odometer over the axes: the last one turns fastest, then the inner
  // precision/optimizer loops.
  std::vector<size_t> index(sizes.size(), 0);
  while (true) {
    v1::ModelConfig config = base;
    for (size_t k = 0; k < keys.size(); ++k) {
      (*config.mutable_params())[keys[k]] = values[k][index[k]];
    }
    for (size_t k = 0; k < option_keys.size(); ++k) {
      (*config.mutable_options())[option_keys[k]] =
          spec.options().at(option_keys[k]).values(static_cast<int>(index[keys.size() + k]));
    }
    for (size_t k = 0; k < stack_keys.size(); ++k) {
      const size_t axis = keys.size() + option_keys.size() + k;
      (*config.mutable_stack())[stack_keys[k]] =
          spec.stack().at(stack_keys[k]).values(static_cast<int>(index[axis]));
    }
    for (const std::string& precision : precisions) {
      for (const std::string& optimizer : optimizers) {
        v1::ModelConfig& out = configs.emplace_back(config);
        out.set_precision(precision);
        out.set_optimizer(optimizer);
      }
    }
    size_t digit = sizes.size();
    while (true) {
      if (digit == 0) return configs;
      --digit;
      if (++index[digit] < sizes[digit]) break;
      index[digit] = 0;
    }
  }
}

std::vector<int32_t> ShuffledOrder(size_t n, uint64_t seed) {
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    std::fprintf(stderr, "ShuffledOrder: n = %zu does not fit in int32_t\n", n);
    std::abort();
  }
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) {
    // Uniform in [0, i): reject the low 2^64 mod i draws so every residue is
    // equally likely.
    const uint64_t bound = i;
    const uint64_t threshold = (0 - bound) % bound;
    uint64_t draw = rng();
    while (draw < threshold) draw = rng();
    std::swap(order[i - 1], order[static_cast<size_t>(draw % bound)]);
  }
  return order;
}

}  // namespace paradnn::common
