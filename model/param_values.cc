#include "model/param_values.h"

#include <cmath>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace paradnn::model {
namespace {

bool IsMultiple(int64_t value, const ParamRule& rule) {
  return rule.multiple_of <= 1 || value % rule.multiple_of == 0;
}

// A list of values: each valid, none repeated.
absl::StatusOr<int64_t> CheckValueList(const v1::IntValues& list_spec, const ParamRule& rule,
                                       const std::string& path, std::vector<int64_t>* values) {
  const std::string list_path = absl::StrCat(path, ".values");
  const auto& list = list_spec.values();
  if (list.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(list_path, ": empty list; give at least one value"));
  }
  std::unordered_map<int64_t, int> first_index;
  for (int i = 0; i < list.size(); ++i) {
    const std::string item_path = absl::StrCat(list_path, "[", i, "]");
    if (absl::Status s = CheckParamValue(item_path, list[i], rule); !s.ok()) return s;
    const auto [it, inserted] = first_index.emplace(list[i], i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          item_path, ": ", list[i], " is repeated (also at [", it->second, "]); each value once"));
    }
  }
  if (values != nullptr) values->insert(values->end(), list.begin(), list.end());
  return static_cast<int64_t>(list.size());
}

// A range {min, max, mul|add}: both ends valid, a step that advances and
// stays on the rule's grid.
absl::StatusOr<int64_t> CheckRange(const v1::IntRange& r, const ParamRule& rule,
                                   const std::string& path, std::vector<int64_t>* values) {
  const std::string range_path = absl::StrCat(path, ".range");
  if (absl::Status s = CheckParamValue(range_path + ".min", r.min(), rule); !s.ok()) return s;
  if (absl::Status s = CheckParamValue(range_path + ".max", r.max(), rule, /*on_grid=*/false);
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
    if (!IsMultiple(r.add(), rule)) {
      return absl::InvalidArgumentError(absl::StrCat(range_path, ".add: ", r.add(),
                                                     " is not a multiple of ", rule.multiple_of,
                                                     "; ", AllowedRange(rule)));
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
    // max <= the rule's maximum, far below 2^53: the double is exact.
    const double next = std::round(static_cast<double>(v) * mul);
    if (next > static_cast<double>(r.max())) break;
    if (next <= static_cast<double>(v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(range_path, ".mul: ", mul, " does not advance from ", v, " (", v, " x ", mul,
                       " rounds to ", v, "); use a larger mul or add"));
    }
    v = static_cast<int64_t>(next);
    if (!IsMultiple(v, rule)) {
      return absl::InvalidArgumentError(absl::StrCat(range_path, ".mul: ", mul, " reaches ", v,
                                                     ", not a multiple of ", rule.multiple_of, "; ",
                                                     AllowedRange(rule)));
    }
  }
  return count;
}

}  // namespace

// Validates one parameter and returns how many values it takes; appends them
// to `values` when it is not null. Walks ranges without storing them so that
// a hostile range costs time proportional to its length only once, bounded
// by the rule's maximum.
absl::StatusOr<int64_t> CheckParam(const v1::ParamSpec& spec, const ParamRule& rule,
                                   const std::string& path, std::vector<int64_t>* values) {
  switch (spec.kind_case()) {
    case v1::ParamSpec::kValue: {
      if (absl::Status s = CheckParamValue(path, spec.value(), rule); !s.ok()) return s;
      if (values != nullptr) values->push_back(spec.value());
      return 1;
    }
    case v1::ParamSpec::kValues:
      return CheckValueList(spec.values(), rule, path, values);
    case v1::ParamSpec::kRange:
      return CheckRange(spec.range(), rule, path, values);
    case v1::ParamSpec::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": no value given; write a number, a list [a, b] or {min, max, mul|add}"));
}

absl::StatusOr<std::vector<int64_t>> ParamValues(const v1::ParamSpec& spec, const ParamRule& rule,
                                                 const std::string& path) {
  std::vector<int64_t> values;
  absl::StatusOr<int64_t> count = CheckParam(spec, rule, path, &values);
  if (!count.ok()) return count.status();
  return values;
}

}  // namespace paradnn::model
