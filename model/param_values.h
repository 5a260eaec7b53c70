// One sweep parameter's values (a number, a list or a range), checked
// against its family's rule (model/family.h) and walked in sweep order.
// Pure; thread-safe.
#ifndef PARADNN_MODEL_PARAM_VALUES_H_
#define PARADNN_MODEL_PARAM_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/family.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::model {

// Validates one parameter and returns how many values it takes; appends them
// to `values` when it is not null. Walks ranges without storing them so that
// a hostile range costs time proportional to its length only once, bounded
// by the rule's maximum. `path` names the field in errors ("params.node").
absl::StatusOr<int64_t> CheckParam(const v1::ParamSpec& spec, const ParamRule& rule,
                                   const std::string& path, std::vector<int64_t>* values);

// The values one parameter takes, in sweep order, after the same checks
// ValidateSweep applies to it. A range walks v = min, then v*mul rounded to
// the nearest integer (or v+add) while v <= max.
absl::StatusOr<std::vector<int64_t>> ParamValues(const v1::ParamSpec& spec, const ParamRule& rule,
                                                 const std::string& path);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_PARAM_VALUES_H_
