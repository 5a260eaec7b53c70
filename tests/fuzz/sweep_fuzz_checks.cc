#include "tests/fuzz/sweep_fuzz_checks.h"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/sweep_file.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "model/sweep.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::fuzz {
namespace {

constexpr const char* kSource = "fuzz.yaml";

// Protobuf logs every invalid UTF-8 string it parses or serializes; the
// checks look at the return values instead.
void SilenceProtobufLogs() {
  static const bool once = [] {
    google::protobuf::SetLogHandler(
        [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
    return true;
  }();
  (void)once;
}

absl::Status Broken(absl::string_view what, const absl::Status& status) {
  std::string message(status.message().substr(0, 2 * kMaxErrorBytes));
  return absl::InternalError(absl::StrCat(what, " [", absl::StatusCodeToString(status.code()), ": ",
                                          absl::CHexEscape(message), "]"));
}

// A refusal is InvalidArgument with a non-empty message of bounded size.
absl::Status CheckRefusal(absl::string_view who, const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    return Broken(absl::StrCat(who, " refused with a code other than INVALID_ARGUMENT"), status);
  }
  if (status.message().empty()) return Broken(absl::StrCat(who, ": empty error message"), status);
  if (status.message().size() > kMaxErrorBytes) {
    return Broken(absl::StrCat(who, ": error message of ", status.message().size(),
                               " bytes; at most ", kMaxErrorBytes),
                  status);
  }
  return absl::OkStatus();
}

// What the coordinator does with a spec that ValidateSweep accepted
// (server::PlanSweep): expand it, describe every configuration with the
// runner's torch-free model code, and order the jobs.
absl::Status CheckPlannedSweep(const v1::SweepSpec& spec) {
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = model::ExpandSweep(spec, kFuzzMaxJobs);
  if (!configs.ok()) return Broken("ExpandSweep refused a valid sweep", configs.status());
  const int64_t count = model::CountConfigurations(spec);
  if (static_cast<int64_t>(configs->size()) != count) {
    return absl::InternalError(absl::StrCat("ExpandSweep made ", configs->size(),
                                            " configurations, CountConfigurations says ", count));
  }
  const int64_t jobs = count * std::max(1, spec.repeats());
  if (configs->empty() || jobs > kFuzzMaxJobs) {
    return absl::InternalError(
        absl::StrCat("a valid sweep expands to ", jobs, " jobs; allowed 1..", kFuzzMaxJobs));
  }
  for (const v1::ModelConfig& config : *configs) {
    absl::StatusOr<model::ModelSpec> model =
        model::ParseModelSpec(config, model::FieldStyle::kProto);
    // One family table: what the sweep validation accepts, the job parser
    // accepts.
    if (!model.ok())
      return Broken("ParseModelSpec refused a config of a valid sweep", model.status());
    const v1::ModelCounts counts = model::CountModel(*model);
    if (counts.params() < 0 || !std::isfinite(counts.model_flops()) || counts.model_flops() < 0 ||
        !std::isfinite(counts.peak_memory_estimate_bytes()) ||
        counts.peak_memory_estimate_bytes() < 0) {
      return absl::InternalError(absl::StrCat("CountModel gave negative or non-finite counts: ",
                                              counts.ShortDebugString()));
    }
  }
  const std::vector<int32_t> order =
      model::ShuffledOrder(configs->size(), spec.run().seed() != 0 ? spec.run().seed() : 1);
  std::vector<bool> seen(order.size(), false);
  for (int32_t i : order) {
    if (i < 0 || static_cast<size_t>(i) >= order.size() || seen[static_cast<size_t>(i)]) {
      return absl::InternalError("ShuffledOrder is not a permutation");
    }
    seen[static_cast<size_t>(i)] = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSweepFile(absl::string_view bytes) {
  SilenceProtobufLogs();
  absl::StatusOr<v1::SweepSpec> spec = client::ParseSweepText(bytes, kSource, kFuzzMaxJobs);
  if (!spec.ok()) {
    if (absl::Status s = CheckRefusal("ParseSweepText", spec.status()); !s.ok()) return s;
    if (!absl::StartsWith(spec.status().message(), absl::StrCat(kSource, ":"))) {
      return Broken("ParseSweepText's error does not start with the file's name", spec.status());
    }
    return absl::OkStatus();
  }
  if (spec->source_text() != bytes) return absl::InternalError("source_text is not the file");
  if (spec->device().empty()) return absl::InternalError("an accepted sweep has no device");
  if (absl::Status s = model::ValidateSweep(*spec, kFuzzMaxJobs); !s.ok()) {
    return Broken("ValidateSweep refused what ParseSweepText accepted", s);
  }
  // What the coordinator receives: the spec after the wire.
  std::string wire;
  if (!spec->SerializeToString(&wire)) return absl::InternalError("the spec does not serialize");
  v1::SweepSpec received;
  if (!received.ParseFromString(wire)) {
    return absl::InternalError(
        "an accepted sweep does not parse on the coordinator's side (invalid UTF-8 in a string?)");
  }
  if (absl::Status s = model::ValidateSweep(received, kFuzzMaxJobs); !s.ok()) {
    return Broken("ValidateSweep refused the spec after the wire", s);
  }
  return CheckPlannedSweep(received);
}

absl::Status CheckSweepSpec(absl::string_view bytes) {
  SilenceProtobufLogs();
  v1::SweepSpec spec;
  if (!spec.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return absl::OkStatus();
  if (absl::Status s = model::ValidateSweep(spec, kFuzzMaxJobs); !s.ok()) {
    return CheckRefusal("ValidateSweep", s);
  }
  return CheckPlannedSweep(spec);
}

void AbortOnBrokenContract(const absl::Status& status) {
  if (status.ok()) return;
  std::fprintf(stderr, "broken contract: %s\n", std::string(status.message()).c_str());
  std::abort();
}

}  // namespace paradnn::fuzz
