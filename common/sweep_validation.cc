#include "common/sweep_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/run_settings.h"

namespace paradnn::common {
namespace {

// ---- the family table -------------------------------------------------------
// Sorted by name within a family; families sorted by name.

constexpr ParamSchema kFcParams[] = {
    {"batch", 1, int64_t{1} << 22, true, "examples per training step"},
    {"input", 1, int64_t{1} << 20, true, "input features per example"},
    {"layer", 1, 4096, true, "hidden Linear+ReLU layers"},
    {"node", 1, int64_t{1} << 20, true, "units per hidden layer"},
    {"output", 1, int64_t{1} << 20, true, "classes (width of the last Linear)"},
};

constexpr FamilySchema kFamilies[] = {
    {"fc", kFcParams},
};

constexpr const char* kDevices[] = {"cpu", "cuda", "tpu"};
constexpr const char* kPrecisions[] = {"float32", "bfloat16", "float16", "mixed_bf16",
                                       "mixed_fp16"};
constexpr const char* kOptimizers[] = {"rmsprop", "sgd", "momentum"};

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

absl::Status OutOfRange(const std::string& field, int64_t value, const ParamSchema& schema) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is out of range; allowed ",
                                                 schema.min_value, "..", schema.max_value));
}

absl::Status CheckInRange(const std::string& field, int64_t value, const ParamSchema& schema) {
  if (value < schema.min_value || value > schema.max_value) {
    return OutOfRange(field, value, schema);
  }
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
      if (absl::Status s = CheckInRange(path, spec.value(), schema); !s.ok()) return s;
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
        if (absl::Status s = CheckInRange(item_path, list[i], schema); !s.ok()) return s;
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
      if (absl::Status s = CheckInRange(range_path + ".min", r.min(), schema); !s.ok()) return s;
      if (absl::Status s = CheckInRange(range_path + ".max", r.max(), schema); !s.ok()) return s;
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
      }
      return count;
    }
    case v1::ParamSpec::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": no value given; write a number, a list [a, b] or {min, max, mul|add}"));
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

std::vector<std::string> SortedParamKeys(const v1::SweepSpec& spec) {
  std::vector<std::string> keys;
  keys.reserve(spec.params().size());
  for (const auto& [key, unused] : spec.params()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> OrDefault(const google::protobuf::RepeatedPtrField<std::string>& list,
                                   const char* default_value) {
  if (list.empty()) return {default_value};
  return {list.begin(), list.end()};
}

}  // namespace

absl::Span<const FamilySchema> Families() { return kFamilies; }

const FamilySchema* FindFamily(absl::string_view family) {
  for (const FamilySchema& f : kFamilies) {
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

std::string AllowedFamilies() {
  std::vector<absl::string_view> names;
  for (const FamilySchema& f : kFamilies) names.push_back(f.name);
  return absl::StrJoin(names, "|");
}
std::string AllowedDevices() { return JoinNames(kDevices, "|"); }
std::string AllowedPrecisions() { return JoinNames(kPrecisions, "|"); }
std::string AllowedOptimizers() { return JoinNames(kOptimizers, "|"); }

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
  for (const std::string& key : SortedParamKeys(spec)) {
    const ParamSchema* schema = FindParam(*family, key);
    if (schema == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("params.", absl::CHexEscape(key),
                                                     ": unknown parameter of family ", family->name,
                                                     "; allowed: ", ParamNames(*family, false)));
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

  configurations = SaturatingMultiply(configurations, std::max(1, spec.precision_size()));
  configurations = SaturatingMultiply(configurations, std::max(1, spec.optimizer_size()));
  if (configurations > max_jobs) {
    return absl::InvalidArgumentError(
        absl::StrCat("sweep expands to ", configurations == kSaturated ? "at least " : "",
                     configurations, " configurations; the limit is ", max_jobs, " (--max-jobs)"));
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
  }
  configurations = SaturatingMultiply(configurations, std::max(1, spec.precision_size()));
  return SaturatingMultiply(configurations, std::max(1, spec.optimizer_size()));
}

absl::StatusOr<std::vector<v1::ModelConfig>> ExpandSweep(const v1::SweepSpec& spec,
                                                         int64_t max_jobs) {
  if (absl::Status s = ValidateSweep(spec, max_jobs); !s.ok()) return s;
  const FamilySchema& family = *FindFamily(spec.family());

  const std::vector<std::string> keys = SortedParamKeys(spec);
  std::vector<std::vector<int64_t>> values;
  values.reserve(keys.size());
  for (const std::string& key : keys) {
    absl::StatusOr<std::vector<int64_t>> v =
        ParamValues(spec.params().at(key), *FindParam(family, key), absl::StrCat("params.", key));
    if (!v.ok()) return v.status();  // unreachable after ValidateSweep; kept for safety
    values.push_back(*std::move(v));
  }
  const std::vector<std::string> precisions = OrDefault(spec.precision(), kDefaultPrecision);
  const std::vector<std::string> optimizers = OrDefault(spec.optimizer(), kDefaultOptimizer);

  std::vector<v1::ModelConfig> configs;
  configs.reserve(static_cast<size_t>(CountConfigurations(spec)));
  // An odometer over the parameters: the last key turns fastest, then the
  // inner precision/optimizer loops.
  std::vector<size_t> index(keys.size(), 0);
  while (true) {
    for (const std::string& precision : precisions) {
      for (const std::string& optimizer : optimizers) {
        v1::ModelConfig& config = configs.emplace_back();
        config.set_family(spec.family());
        for (size_t k = 0; k < keys.size(); ++k) {
          (*config.mutable_params())[keys[k]] = values[k][index[k]];
        }
        config.set_precision(precision);
        config.set_optimizer(optimizer);
      }
    }
    size_t digit = keys.size();
    while (digit > 0) {
      --digit;
      if (++index[digit] < values[digit].size()) break;
      index[digit] = 0;
      if (digit == 0) return configs;
    }
    if (keys.empty()) return configs;
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
