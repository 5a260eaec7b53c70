#include "server/analysis/bisect_step.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/analysis/bisect_search.h"

namespace paradnn::server::analysis {
namespace {

absl::StatusOr<StackSettings> BisectStackOf(
    const google::protobuf::Map<std::string, std::string>& map, const char* field) {
  if (map.size() > static_cast<size_t>(kMaxBisectSettings)) {
    return absl::InvalidArgumentError(absl::StrCat("bisect.", field, ": ", map.size(),
                                                   " settings; at most ", kMaxBisectSettings));
  }
  return StackSettings(map.begin(), map.end());
}

absl::StatusOr<BisectOptions> BisectOptionsOf(const v1::BisectRequest& request) {
  BisectOptions options;
  if (request.reference_rounds() != 0) options.reference_rounds = request.reference_rounds();
  if (request.max_rounds_per_probe() != 0) {
    options.max_rounds_per_probe = request.max_rounds_per_probe();
  }
  if (request.significance() != 0) options.significance = request.significance();
  if (request.max_measurements() != 0) {
    if (request.max_measurements() < 0 || request.max_measurements() > kMaxBisectMeasurements) {
      return absl::InvalidArgumentError(
          absl::StrCat("bisect.max_measurements: ", request.max_measurements(), "; allowed 1..",
                       kMaxBisectMeasurements));
    }
    options.max_measurements = static_cast<size_t>(request.max_measurements());
  }
  options.unmixable.insert(request.unmixable().begin(), request.unmixable().end());
  return options;
}

void SetEffect(const RatioEstimate& estimate, v1::BisectEffect* out) {
  out->set_ratio(estimate.ratio);
  out->set_low(estimate.low);
  out->set_high(estimate.high);
  out->set_p_value(estimate.p_value);
  out->set_basis(estimate.basis);
}

// The search's state after the replay: the rest of its current batch
// (from `first_unrecorded` on) and what it has found.
v1::BisectResponse DescribeSearch(const BisectSearch& search, size_t first_unrecorded,
                                  int measurements) {
  v1::BisectResponse response;
  for (const std::string& name : search.differing()) response.add_differing(name);
  const std::vector<MixRequest>& pending = search.Pending();
  for (size_t i = first_unrecorded; i < pending.size(); ++i) {
    v1::BisectMix* mix = response.add_pending();
    mix->set_index(measurements + static_cast<int>(i - first_unrecorded));
    mix->set_round(static_cast<int>(pending[i].round));
    for (const std::string& name : pending[i].from_bad) mix->add_from_bad(name);
    mix->mutable_settings()->insert(pending[i].settings.begin(), pending[i].settings.end());
  }
  const BisectResult& result = search.result();
  response.set_done(search.Done());
  response.set_outcome(BisectOutcomeName(result.outcome));
  for (const std::string& name : result.culprits) response.add_culprits(name);
  SetEffect(result.stack_effect, response.mutable_stack_effect());
  SetEffect(result.culprit_effect, response.mutable_culprit_effect());
  response.set_culprit_share(result.culprit_share);
  for (const ProbeDecision& decision : result.decisions) {
    v1::BisectDecision* out = response.add_decisions();
    for (const std::string& name : decision.from_bad) out->add_from_bad(name);
    out->set_carries(decision.carries);
    out->set_clear(decision.clear);
    out->set_share(decision.share);
    out->set_rounds(decision.rounds);
  }
  response.set_measurements(measurements);
  response.set_summary(result.summary);
  return response;
}

std::string MixText(const std::vector<std::string>& from_bad) {
  return from_bad.empty() ? std::string("A (nothing from B)")
                          : absl::StrCat("A with ", absl::StrJoin(from_bad, ", "), " from B");
}

}  // namespace

absl::StatusOr<v1::BisectResponse> BisectStep(const v1::BisectRequest& request) {
  absl::StatusOr<StackSettings> good = BisectStackOf(request.good(), "good");
  if (!good.ok()) return good.status();
  absl::StatusOr<StackSettings> bad = BisectStackOf(request.bad(), "bad");
  if (!bad.ok()) return bad.status();
  absl::StatusOr<BisectOptions> options = BisectOptionsOf(request);
  if (!options.ok()) return options.status();
  if (request.measurements_size() > kMaxBisectMeasurements) {
    return absl::InvalidArgumentError(
        absl::StrCat("bisect.measurements: ", request.measurements_size(), "; at most ",
                     kMaxBisectMeasurements));
  }
  absl::StatusOr<BisectSearch> search =
      BisectSearch::Create(*std::move(good), *std::move(bad), *std::move(options));
  if (!search.ok()) {
    const absl::string_view message = search.status().message();
    return absl::InvalidArgumentError(
        absl::StrCat(absl::StartsWith(message, "bisect") ? "" : "bisect: ", message));
  }
  // Replayed batch by batch: `recorded` of the current batch are in.
  size_t recorded = 0;
  for (int i = 0; i < request.measurements_size(); ++i) {
    const v1::BisectMeasurement& measured = request.measurements(i);
    const std::string field = absl::StrCat("bisect.measurements[", i, "]");
    if (search->Done()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": the search was done after ", i, " measurements"));
    }
    const MixRequest& asked = search->Pending()[recorded];
    const std::vector<std::string> from_bad(measured.from_bad().begin(), measured.from_bad().end());
    if (from_bad != asked.from_bad) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": measured ", MixText(from_bad),
                                                     "; the search asked for ",
                                                     MixText(asked.from_bad)));
    }
    if (measured.step_seconds_size() > kMaxBisectStepTimes) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".step_seconds: ", measured.step_seconds_size(), " values; at most ",
                       kMaxBisectStepTimes));
    }
    const size_t batch = search->Pending().size();
    absl::Status status =
        search->Record(recorded, {measured.step_seconds().begin(), measured.step_seconds().end()});
    if (!status.ok()) return status;
    recorded = recorded + 1 == batch ? 0 : recorded + 1;
  }
  return DescribeSearch(*search, recorded, request.measurements_size());
}

}  // namespace paradnn::server::analysis
