// The model families, torch-free: for each, the hyper-parameters it takes
// (with ranges and defaults), a check for cross-field rules, and its
// analytic work counts (model/families/<family>.cc). The runner's LibTorch
// side (worker/runner/model_builder.h) registers the matching builders.
//
// Adding a family: write model/families/<family>.cc defining a FamilyDef,
// add one line to the table in family.cc, and a builder line in
// worker/runner/model_builder.cc. The sweep schema the CLI and coordinator
// validate sweeps with (common/family_schemas.cc) is still a second table
// of the same keys, and no test holds the two together yet (issue 18: one
// table).
#ifndef PARADNN_MODEL_FAMILY_H_
#define PARADNN_MODEL_FAMILY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::model {

// One integer hyper-parameter. default_value 0 means "required".
struct ParamRule {
  const char* name;
  int64_t min_value;
  int64_t max_value;
  int64_t default_value;
  const char* description;
};

// One categorical hyper-parameter; `allowed` is '|'-separated, or empty for
// free text checked by the family's `check`. default_value nullptr means
// "required".
struct OptionRule {
  const char* name;
  const char* allowed;
  const char* default_value;
  const char* description;
};

struct FamilyDef {
  const char* name;
  const char* summary;  // one line for --help
  absl::Span<const ParamRule> params;
  absl::Span<const OptionRule> options;
  // Rules across fields (e.g. CNN image >= 193), after every param and option
  // passed its own rule and defaults were filled. May be null.
  absl::Status (*check)(const ModelSpec& spec, FieldStyle style);
  // Analytic work and memory of one training step (PARADNN_MODELS.md
  // "Counting work"); spec is valid.
  WorkCounts (*count)(const ModelSpec& spec);
};

// Every family, in name order.
absl::Span<const FamilyDef* const> AllFamilies();
const FamilyDef* FindFamilyDef(const std::string& name);
// "cnn|fc|rnn|..." for messages.
std::string AllowedFamilyNames();

// Framework settings every family accepts as sweep variables; they override
// RunSettings.intra_op_threads / inter_op_threads for the job.
extern const ParamRule kIntraOpThreadsRule;
extern const ParamRule kInterOpThreadsRule;

// The memory_format option of the convolutional families (cnn and the
// vision models): channels_last (default: what a tuned user runs on CPU with
// oneDNN and on CUDA) or contiguous.
inline constexpr OptionRule kMemoryFormatRule = {
    "memory_format", "channels_last|contiguous", "channels_last",
    "layout of images, activations and conv weights: channels_last (NHWC) or contiguous (NCHW)"};

// How a field is named in messages: "config.params.layer" or "--layer".
std::string FieldName(FieldStyle style, const std::string& group, const std::string& key);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILY_H_
