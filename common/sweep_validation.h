// Sweep validation and expansion, shared by the CLI (which checks a sweep
// file before sending it) and the coordinator (which must not trust clients
// and checks again). No LibTorch, no SQLite.
//
// A sweep is the cross product of every hyper-parameter's values, every
// categorical option's values, every precision and every optimizer. Each
// family declares its integer hyper-parameters (name, allowed range,
// required or default) and its categorical options (allowed values, default)
// in a schema table; adding a family is adding a table entry in
// sweep_validation.cc. The runner's family registry (model/family.h)
// declares the same keys.
//
// Every error is InvalidArgument and its message starts with the path of the
// offending field, e.g. "params.node.range: min 512 > max 32",
// "options.block_fn[1]: 'dense' is not one of residual|bottleneck",
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
// must lie in [min_value, max_value] (and be a multiple of `multiple_of`
// when that is set). A parameter the sweep leaves out takes default_value
// (written into every expanded ModelConfig); without a default it is either
// required or simply absent from the configs (the runner then uses its run
// settings, as for the thread counts).
struct ParamSchema {
  const char* name;
  int64_t min_value;
  int64_t max_value;
  bool required;
  const char* description;           // one line, for help and docs
  int64_t default_value = 0;         // 0 = none
  int64_t multiple_of = 0;           // 0 = any value in range
  const char* constraint = nullptr;  // why min_value/multiple_of, appended to errors
};

// One categorical hyper-parameter of a family (ModelConfig.options). Values
// are one of `allowed`, or, when `allowed` is empty, free text accepted by
// `check`. default_value nullptr means required; "" means optional with no
// default (nothing is written into the configs when the sweep omits it).
struct OptionSchema {
  const char* name;
  absl::Span<const char* const> allowed;
  const char* default_value;
  const char* description;
  // For free-text options: OK, or what is wrong with `value` (without the
  // field path, which the caller prefixes).
  absl::Status (*check)(absl::string_view value) = nullptr;
};

// A model family, its integer hyper-parameters and its categorical options,
// each sorted by name. Every family also takes the framework settings
// intra_op_threads and inter_op_threads as optional parameters (listed in
// its params).
struct FamilySchema {
  const char* name;
  const char* summary;  // one line, for help and docs
  absl::Span<const ParamSchema> params;
  absl::Span<const OptionSchema> options = {};
  // The calibrated roof its utilization is measured against: "matmul"
  // (GEMM-bound: FC, RNN, Transformer) or "conv" (convolutional networks).
  const char* roof_kernel = "matmul";
};

// Every registered family, in name order.
absl::Span<const FamilySchema> Families();

// The schema of `family`, or nullptr when it is not registered.
const FamilySchema* FindFamily(absl::string_view family);

// The schema entry of `param` within `family`, or nullptr.
const ParamSchema* FindParam(const FamilySchema& family, absl::string_view param);

// The schema entry of option `option` within `family`, or nullptr.
const OptionSchema* FindOption(const FamilySchema& family, absl::string_view option);

// Allowed names joined with '|', for error messages and help texts.
std::string AllowedFamilies();    // "cnn|densenet121|fc|..."
std::string AllowedDevices();     // "cpu|cuda|tpu"
std::string AllowedPrecisions();  // "float32|bfloat16|float16|mixed_bf16|mixed_fp16"
std::string AllowedOptimizers();  // "rmsprop|sgd|momentum"

// `option`'s allowed values joined with '|' ("residual|bottleneck"), or a
// description of its free-text format.
std::string AllowedOptionValues(const OptionSchema& option);

// Family "torchscript": the largest model file accepted at submit, the
// accepted loss rules and input dtypes.
inline constexpr int64_t kMaxTorchScriptBytes = int64_t{256} << 20;
inline constexpr const char* kTorchScriptFamily = "torchscript";
std::string AllowedTorchScriptLosses();  // "cross_entropy|mse|sum|output"
std::string AllowedTensorDtypes();       // "float32|int64"

// What an empty device, precision list or optimizer list means.
inline constexpr const char* kDefaultDevice = "cpu";
inline constexpr const char* kDefaultPrecision = "float32";
inline constexpr const char* kDefaultOptimizer = "rmsprop";

// Returns OK when `spec` is a well-formed sweep of at most `max_jobs`
// configurations (max_jobs <= 0 means kDefaultMaxJobs), else InvalidArgument
// naming the first bad field and what is allowed. Checks, in order: every
// string field is UTF-8 (what protobuf can send; a spec read from a file was
// never on the wire), name,
// family, device (empty = cpu), every parameter (known, in range, ranges that
// advance, non-empty and duplicate-free value lists), every required
// parameter, every option (known, allowed values, no repeats, not also a
// parameter), every required option, the thread counts not given both as
// parameters and in run, the TorchScript model (family torchscript only:
// inputs, loss and target, content of 1..kMaxTorchScriptBytes or a sha256 of
// a stored model), precision, optimizer, run settings (ValidateRunSettings),
// and the number of configurations (computed without materializing them).
absl::Status ValidateSweep(const v1::SweepSpec& spec, int64_t max_jobs);

// The values one parameter takes, in sweep order, after the same checks
// ValidateSweep applies to it. `path` names the field in errors
// ("params.node"). A range walks v = min, then v*mul rounded to the nearest
// integer (or v+add) while v <= max.
absl::StatusOr<std::vector<int64_t>> ParamValues(const v1::ParamSpec& spec,
                                                 const ParamSchema& schema,
                                                 const std::string& path);

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (overlong forms, surrogates and code points above U+10FFFF are not),
// or absl::string_view::npos when there is none. Protobuf refuses a string
// field that is not UTF-8 on the wire, so ValidateSweep refuses it first.
size_t FirstNonUtf8Byte(absl::string_view text);

// A user-given key (a parameter or option name) as error messages name it:
// escaped, and cut after 64 bytes ("params.<key>..." stays short whatever
// the key).
std::string EchoKey(absl::string_view key);

// Most times one sweep may measure each configuration (SweepSpec.repeats).
inline constexpr int kMaxRepeats = 100;

// The number of configurations `spec` expands to, saturating at INT64_MAX.
// Parameters and options that do not validate count as one value; call
// ValidateSweep first when the answer matters.
int64_t CountConfigurations(const v1::SweepSpec& spec);

// Validates `spec` (as ValidateSweep) and returns its configurations in a
// deterministic order: the cross product over the parameters in sorted key
// order (first key outermost), then the options in sorted key order, then
// precision (empty = float32), then optimizer (empty = rmsprop, innermost).
// Every config carries the defaults of the parameters and options the sweep
// left out, so stored configs are explicit; family torchscript configs carry
// spec.torchscript without its content.
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
