// Family allreduce (model/families/allreduce.h): its parameters, its rule
// (float32 only) and its counts.
#include "model/families/allreduce.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "model/families/torchscript.h"
#include "model/family.h"

namespace paradnn::model {
namespace {

// devices and overlap keep the names every family shares, so that a sweep
// reads the same, but accept only the one value that means something here:
// a rank per process, and no backward to overlap with.
constexpr ParamRule kAllReduceParams[] = {
    {"bytes", 4, kMaxAllReduceBytes, true, "the message: bytes all-reduced (summed) per step", 0, 4,
     "float32 elements of 4 bytes, at most 1 GiB"},
    {"devices", 1, 1, false, "1 only", 0, 0,
     "the allreduce family runs one rank per process; for N GPUs of one host run N workers "
     "pinned to one GPU each (--device cuda:N) and set hosts N"},
    kHostsRule,
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"overlap", 1, 1, false, "1 only", 0, 0,
     "a step of the allreduce family is one all-reduce, with no backward to overlap it with"},
};

// The message is float32 elements: other precisions would measure the same
// bytes under another name, or a different message.
absl::Status CheckAllReduce(const ModelSpec& spec, FieldStyle style) {
  if (spec.precision == Precision::kFloat32) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      FieldName(style, "", "precision"), ": '", PrecisionName(spec.precision),
      "' is not allowed for family allreduce; allowed: float32 (the message is float32 elements; "
      "set bytes for its size)"));
}

// The sweep's precisions, before any job is planned: each must be float32.
absl::Status CheckAllReduceSweep(const v1::SweepSpec& spec) {
  if (spec.has_torchscript()) {
    return absl::InvalidArgumentError(
        absl::StrCat("torchscript: only family ", kTorchScriptFamilyName,
                     " takes a model; this sweep's family is allreduce"));
  }
  for (int i = 0; i < spec.precision_size(); ++i) {
    if (absl::AsciiStrToLower(spec.precision(i)) == "float32") continue;
    return absl::InvalidArgumentError(
        absl::StrCat("precision[", i, "]: ", Quote(spec.precision(i)),
                     " is not allowed for family allreduce; allowed: float32 (the message is "
                     "float32 elements; set bytes for its size)"));
  }
  return absl::OkStatus();
}

int64_t ParamOr(const ModelSpec& spec, const char* key, int64_t otherwise) {
  const auto it = spec.params.find(key);
  return it == spec.params.end() ? otherwise : it->second;
}

// No FLOPs and no activations. params: the elements all-reduced, as a
// model's gradients (4 x params bytes) are in a data-parallel job.
WorkCounts CountAllReduce(const ModelSpec& spec) {
  WorkCounts work;
  const int64_t bytes = AllReduceBytes(spec);
  const int64_t ranks = ParamOr(spec, "hosts", 1) * ParamOr(spec, "devices", 1);
  v1::ModelCounts& c = work.counts;
  c.set_params(bytes / 4);
  c.set_bytes_per_step(static_cast<double>(bytes) * AllReduceBusFactor(ranks));
  c.set_peak_memory_estimate_bytes(2 * static_cast<double>(bytes));
  return work;
}

}  // namespace

int64_t AllReduceBytes(const ModelSpec& spec) { return spec.Param("bytes"); }

extern const FamilyDef kAllReduceFamily = {
    kAllReduceFamilyName,
    "communication roof: each step one float32 sum all-reduce of `bytes` over hosts ranks",
    kAllReduceParams,
    {},
    kMatmulRoof,
    CheckAllReduce,
    CountAllReduce,
    CheckAllReduceSweep};

}  // namespace paradnn::model
