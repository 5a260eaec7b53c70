// Sweep validation and expansion, shared by the CLI (which checks a sweep
// file before sending it) and the coordinator (which must not trust clients
// and checks again). No LibTorch, no SQLite.
//
// A sweep is the cross product of every hyper-parameter's values, every
// precision and every optimizer. Each family declares its integer
// hyper-parameters in a schema table (name, allowed range, required); adding
// a family is adding a table entry in sweep_validation.cc.
//
// Every error is InvalidArgument and its message starts with the path of the
// offending field, e.g. "params.node.range: min 512 > max 32",
// "precision[1]: 'fp8' is not one of float32|bfloat16|...". Callers that know
// where a field came from (the CLI knows YAML lines) may prefix a location.
//
// All functions are pure and thread-safe.
#ifndef PARADNN_COMMON_SWEEP_VALIDATION_H_
#define PARADNN_COMMON_SWEEP_VALIDATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::common {

// The coordinator's default cap on the jobs one sweep may expand to
// (paradnn-coordinator --max-jobs, paradnn submit --max-jobs).
inline constexpr int64_t kDefaultMaxJobs = 100000;

// Longest accepted sweep name, in bytes.
inline constexpr size_t kMaxSweepNameBytes = 128;

// One integer hyper-parameter of a family: every value a sweep gives for it
// must lie in [min_value, max_value].
struct ParamSchema {
  const char* name;
  int64_t min_value;
  int64_t max_value;
  bool required;
  const char* description;  // one line, for help and docs
};

// A model family and its hyper-parameters, sorted by name.
struct FamilySchema {
  const char* name;
  absl::Span<const ParamSchema> params;
};

// Every registered family, in name order.
absl::Span<const FamilySchema> Families();

// The schema of `family`, or nullptr when it is not registered.
const FamilySchema* FindFamily(absl::string_view family);

// The schema entry of `param` within `family`, or nullptr.
const ParamSchema* FindParam(const FamilySchema& family, absl::string_view param);

// Allowed names joined with '|', for error messages and help texts.
std::string AllowedFamilies();    // "fc"
std::string AllowedDevices();     // "cpu|cuda|tpu"
std::string AllowedPrecisions();  // "float32|bfloat16|float16|mixed_bf16|mixed_fp16"
std::string AllowedOptimizers();  // "rmsprop|sgd|momentum"

// What an empty device, precision list or optimizer list means.
inline constexpr const char* kDefaultDevice = "cpu";
inline constexpr const char* kDefaultPrecision = "float32";
inline constexpr const char* kDefaultOptimizer = "rmsprop";

// Returns OK when `spec` is a well-formed sweep of at most `max_jobs`
// configurations (max_jobs <= 0 means kDefaultMaxJobs), else InvalidArgument
// naming the first bad field and what is allowed. Checks, in order: name,
// family, device (empty = cpu), every parameter (known, in range, ranges that advance,
// non-empty and duplicate-free value lists), every required parameter,
// precision, optimizer, run settings (ValidateRunSettings), and the number
// of configurations (computed without materializing them).
absl::Status ValidateSweep(const v1::SweepSpec& spec, int64_t max_jobs);

// The values one parameter takes, in sweep order, after the same checks
// ValidateSweep applies to it. `path` names the field in errors
// ("params.node"). A range walks v = min, then v*mul rounded to the nearest
// integer (or v+add) while v <= max.
absl::StatusOr<std::vector<int64_t>> ParamValues(const v1::ParamSpec& spec,
                                                 const ParamSchema& schema,
                                                 const std::string& path);

// The number of configurations `spec` expands to, saturating at INT64_MAX.
// Parameters that do not validate count as one value; call ValidateSweep
// first when the answer matters.
int64_t CountConfigurations(const v1::SweepSpec& spec);

// Validates `spec` (as ValidateSweep) and returns its configurations in a
// deterministic order: the cross product over the parameters in sorted key
// order (first key outermost), then precision (empty = float32), then
// optimizer (empty = rmsprop, innermost).
absl::StatusOr<std::vector<v1::ModelConfig>> ExpandSweep(const v1::SweepSpec& spec,
                                                         int64_t max_jobs);

// A permutation of 0..n-1 determined by `seed` alone: Fisher-Yates driven by
// std::mt19937_64 with its own unbiased bounded draw (std distributions are
// implementation-defined), so every platform and build yields the same order.
// The coordinator runs a sweep's jobs in this order so that machine drift
// does not masquerade as a hyper-parameter effect. n must fit in int32_t.
std::vector<int32_t> ShuffledOrder(size_t n, uint64_t seed);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_SWEEP_VALIDATION_H_
