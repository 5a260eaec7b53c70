// Sweeps: validated once against the family table (model/family.h),
// expanded and shuffled. The CLI checks a sweep file before sending it; the
// coordinator, which must not trust clients, checks what arrives with the
// same code. No LibTorch, no SQLite.
//
// A sweep is the cross product of every hyper-parameter's values, every
// categorical option's values, every stack setting, every precision and
// every optimizer.
//
// Every error is InvalidArgument and its message starts with the path of the
// offending field, e.g. "params.node.range: min 512 > max 32",
// "options.block_fn[1]: 'dense' is not one of residual|bottleneck",
// "precision[1]: 'fp8' is not one of float32|bfloat16|...". Callers that know
// where a field came from (the CLI knows YAML lines) may prefix a location.
//
// All functions are pure and thread-safe.
#ifndef PARADNN_MODEL_SWEEP_H_
#define PARADNN_MODEL_SWEEP_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/family.h"
#include "model/param_values.h"  // ParamValues, for callers of the sweep API
#include "model/sweep_text.h"    // FirstNonUtf8Byte, EchoKey
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::model {

// The coordinator's default cap on the jobs one sweep may expand to
// (paradnn-coordinator --max-jobs, paradnn submit --max-jobs).
inline constexpr int64_t kDefaultMaxJobs = 100000;

// Longest accepted sweep name, in bytes.
inline constexpr size_t kMaxSweepNameBytes = 128;

// What an empty device, precision list or optimizer list means.
inline constexpr const char* kDefaultDevice = "cpu";
inline constexpr const char* kDefaultPrecision = "float32";
inline constexpr const char* kDefaultOptimizer = "rmsprop";

// Returns OK when `spec` is a well-formed sweep of at most `max_jobs`
// configurations (max_jobs <= 0 means kDefaultMaxJobs), else InvalidArgument
// naming the first bad field and what is allowed. Checks, in order: every
// string field is UTF-8 (CheckSweepUtf8), name, family, device (empty =
// cpu), every parameter (known, in range, ranges that advance, non-empty and
// duplicate-free value lists), every required parameter, every option
// (known, allowed values, no repeats, not also a parameter), every required
// option, the stack settings, the thread counts not given both as parameters
// and in run, the fields only one family reads (FamilyDef.check_sweep:
// family torchscript's model), precision, optimizer, run settings
// (ValidateRunSettings), and the number of configurations (computed without
// materializing them).
absl::Status ValidateSweep(const v1::SweepSpec& spec, int64_t max_jobs);

// The most data-parallel replicas (params.devices) any job of `spec` asks
// for: 1 without params.devices; the values' error when they do not parse.
absl::StatusOr<int64_t> MostDataParallelDevices(const v1::SweepSpec& spec);
// The most data-parallel processes (params.hosts, a gang of workers) any job
// of `spec` asks for: 1 without params.hosts.
absl::StatusOr<int64_t> MostDataParallelHosts(const v1::SweepSpec& spec);

// Most times one sweep may measure each configuration (SweepSpec.repeats).
inline constexpr int kMaxRepeats = 100;

// With run.target_interval: the rounds every configuration runs before its
// interval is judged (each one's spread then rests on 2 degrees of freedom,
// and on the others' through the moderation), and the most repeats when the
// sweep gives no `repeats`.
inline constexpr int kTargetFirstRounds = 3;
inline constexpr int kDefaultTargetRepeats = 10;

// The most times `spec` measures each configuration: its repeats (at least
// 1), or kDefaultTargetRepeats for a target interval without repeats.
int MaxRepeats(const v1::SweepSpec& spec);

// "fc layer=4 node=32 batch=64" for tables and reports: the family, its
// parameters, then its options, each sorted by name.
std::string ConfigName(const v1::ModelConfig& config);

// Equal for equal configurations (family, precision, optimizer, model,
// parameters, options, stack) whatever the map order protobuf serializes.
std::string ConfigKey(const v1::ModelConfig& config);

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

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_SWEEP_H_
