#include "server/sweep_predictor.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "model/family.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "server/analysis/communication_roofs.h"
#include "server/prediction/prediction_inputs.h"
#include "server/utilization.h"

namespace paradnn::server {
namespace {

namespace pr = prediction;

bool MeasuredOk(const v1::ResultRow& row) {
  return row.state() == v1::JOB_DONE && row.has_measurement() &&
         row.measurement().outcome() == v1::OK && row.measurement().stats().median_s() > 0;
}

std::string GroupKeyOf(const v1::ModelConfig& config) { return pr::PredictionGroupKey(config, ""); }

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The fingerprint that measured most of `group`'s rows (the first by name
// on a tie), "" when none did.
std::string MajorityFingerprint(const std::vector<v1::ResultRow>& rows,
                                const std::vector<size_t>& group_rows) {
  std::map<std::string, int> counts;
  for (size_t i : group_rows) {
    if (MeasuredOk(rows[i])) ++counts[rows[i].platform_fingerprint()];
  }
  std::string best;
  int best_count = 0;
  for (const auto& [fingerprint, count] : counts) {
    if (count > best_count) best = fingerprint, best_count = count;
  }
  return best;
}

double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t d = 0; d < a.size() && d < b.size(); ++d) sum += (a[d] - b[d]) * (a[d] - b[d]);
  return std::sqrt(sum);
}

// The platform's all-reduce roofs (its latest allreduce sweep, fitted) of
// the backend its device's gangs use, by rank count, into `roofs`: the
// prior of a data-parallel configuration adds its gradients' all-reduce.
absl::Status AddAllreduceRoofs(const db::Database& database, const v1::Platform& platform,
                               pr::PriorRoofs* roofs) {
  const std::string backend = platform.device_kind() == "cuda" ? "nccl" : "gloo";
  absl::StatusOr<std::map<analysis::RoofKey, v1::AllreduceRoof>> fitted =
      analysis::LoadLatestRoofs(database, platform.fingerprint());
  if (!fitted.ok()) return fitted.status();
  for (const auto& [key, roof] : *fitted) {
    if (key.first != backend || !roof.fitted() || !(roof.beta_bytes_per_sec() > 0)) continue;
    roofs->allreduce_by_ranks[key.second] = {roof.alpha_s(), roof.beta_bytes_per_sec()};
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SweepPredictor> SweepPredictor::Of(const db::Database& database,
                                                  std::vector<v1::ResultRow> rows,
                                                  bool calibrate_intervals) {
  SweepPredictor out;
  out.rows_ = std::move(rows);
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < out.rows_.size(); ++i) {
    const std::string key = GroupKeyOf(out.rows_[i].config());
    auto [it, added] = index_of.emplace(key, out.groups_.size());
    if (added) out.groups_.emplace_back().key = key;
    out.groups_[it->second].rows.push_back(i);
  }
  for (Group& group : out.groups_) {
    std::vector<const v1::ModelConfig*> grid;
    grid.reserve(group.rows.size());
    for (size_t i : group.rows) grid.push_back(&out.rows_[i].config());
    group.space = pr::FeatureSpace::Of(grid);
    group.fingerprint = MajorityFingerprint(out.rows_, group.rows);
    if (!group.fingerprint.empty()) {
      absl::StatusOr<v1::Platform> platform =
          db::ReadPlatformByFingerprint(database, group.fingerprint);
      if (!platform.ok()) return platform.status();
      const v1::ModelConfig& first = out.rows_[group.rows.front()].config();
      group.roofs = pr::PriorRoofsOf(*platform, ComputeDtype(first.precision()),
                                     RoofKernelOf(first.family()));
      if (absl::Status s = AddAllreduceRoofs(database, *platform, &group.roofs); !s.ok()) return s;
    }
    std::vector<pr::Observation> data;
    std::vector<double> fixed, steps;
    for (size_t i : group.rows) {
      const v1::ResultRow& row = out.rows_[i];
      pr::PredictorInput input{
          group.space.Encode(row.config()),
          group.fingerprint.empty() ? 0 : pr::PriorOf(row.config(), group.roofs)};
      const bool measured = MeasuredOk(row) && row.platform_fingerprint() == group.fingerprint;
      if (measured) {
        const v1::Measurement& m = row.measurement();
        data.push_back({input, m.stats().median_s()});
        fixed.push_back(m.build_seconds() + m.warmup_seconds());
        steps.push_back(m.timed_seconds() / m.stats().median_s());
      }
      group.inputs.push_back(std::move(input));
      group.measured.push_back(measured);
    }
    // The runner's start (process, LibTorch) is not in the measurement's
    // own phases; a second is what it costs on the hosts we know.
    if (!fixed.empty()) group.fixed_seconds = 1.0 + Median(fixed);
    group.timed_steps = Median(steps);
    if (data.size() >= kMinMeasurementsToPredict) {
      pr::FitOptions options;
      options.calibrate = calibrate_intervals;
      absl::StatusOr<pr::StepTimeModel> model = pr::StepTimeModel::Fit(data, options);
      if (!model.ok()) return model.status();
      group.model = *std::move(model);
    }
  }
  return out;
}

const SweepPredictor::Group* SweepPredictor::GroupOf(const v1::ModelConfig& config) const {
  const std::string key = GroupKeyOf(config);
  for (const Group& group : groups_) {
    if (group.key == key) return &group;
  }
  return nullptr;
}

v1::PredictedStep SweepPredictor::ToPredictedStep(const Group& group, const v1::ModelConfig& config,
                                                  const pr::StepTimePrediction& p) const {
  v1::PredictedStep step;
  step.set_step_seconds(p.seconds);
  step.set_step_seconds_low(p.low);
  step.set_step_seconds_high(p.high);
  step.set_interval(pr::FitOptions{}.interval);
  step.set_measurements(static_cast<int32_t>(group.model->measurements_given()));
  step.set_model(kPredictionModelVersion);
  step.set_platform_fingerprint(group.fingerprint);
  auto batch = config.params().find("batch");
  if (batch != config.params().end() && p.seconds > 0) {
    // batch is per replica; the job's throughput counts every replica.
    step.set_examples_per_sec(
        static_cast<double>(batch->second * model::DataParallelRanks(config)) / p.seconds);
  }
  if (absl::StatusOr<model::ModelSpec> spec =
          model::ParseModelSpec(config, model::FieldStyle::kProto);
      spec.ok() && p.seconds > 0) {
    step.set_model_flops_per_sec(model::CountModel(*spec).model_flops() / p.seconds);
  }
  return step;
}

absl::StatusOr<v1::PredictedStep> SweepPredictor::Predict(const v1::ModelConfig& config) const {
  const Group* group = GroupOf(config);
  if (group == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("the sweep has no configuration of ", GroupKeyOf(config),
                     " (family|fingerprint|precision|stack): nothing to predict it from"));
  }
  if (!group->model) {
    size_t measured = std::count(group->measured.begin(), group->measured.end(), true);
    return absl::FailedPreconditionError(absl::StrCat(
        "the sweep has ", measured, " measured configuration", measured == 1 ? "" : "s", " of ",
        group->key, "; a prediction needs ", kMinMeasurementsToPredict));
  }
  const pr::PredictorInput input{group->space.Encode(config), pr::PriorOf(config, group->roofs)};
  return ToPredictedStep(*group, config, group->model->Predict(input));
}

std::vector<v1::ResultRow> SweepPredictor::NearestMeasured(const v1::ModelConfig& config,
                                                           size_t count) const {
  const Group* group = GroupOf(config);
  if (group == nullptr) return {};
  const std::vector<double> target = group->space.Encode(config);
  std::vector<std::pair<double, size_t>> by_distance;
  for (size_t k = 0; k < group->rows.size(); ++k) {
    if (group->measured[k]) {
      by_distance.push_back({Distance(target, group->inputs[k].coordinates), group->rows[k]});
    }
  }
  std::sort(by_distance.begin(), by_distance.end());
  std::vector<v1::ResultRow> nearest;
  for (size_t k = 0; k < by_distance.size() && k < count; ++k) {
    nearest.push_back(rows_[by_distance[k].second]);
  }
  return nearest;
}

std::string SweepPredictor::Describe(const v1::ModelConfig& config) const {
  const Group* group = GroupOf(config);
  if (group == nullptr || !group->model) return "";
  std::vector<std::string> names;
  names.reserve(group->space.axes().size());
  for (const pr::FeatureAxis& axis : group->space.axes()) names.push_back(axis.name);
  return group->model->Describe(names);
}

namespace {

// `config` with what the request left out filled in from `rows` (one sweep).
absl::StatusOr<v1::ModelConfig> CompletedConfig(const std::vector<v1::ResultRow>& rows,
                                                v1::ModelConfig config) {
  const v1::ModelConfig& first = rows.front().config();
  if (config.family().empty()) config.set_family(first.family());
  if (config.precision().empty()) config.set_precision(first.precision());
  if (config.optimizer().empty()) config.set_optimizer(first.optimizer());
  if (config.stack().empty()) *config.mutable_stack() = first.stack();
  std::map<std::string, std::set<int64_t>> values;
  std::map<std::string, std::set<std::string>> option_values;
  for (const v1::ResultRow& row : rows) {
    for (const auto& [key, value] : row.config().params()) values[key].insert(value);
    for (const auto& [key, value] : row.config().options()) option_values[key].insert(value);
  }
  for (const auto& [key, value] : config.params()) {
    if (values.count(key) == 0) {
      std::vector<std::string> known;
      known.reserve(values.size());
      for (const auto& [name, unused] : values) known.push_back(name);
      return absl::InvalidArgumentError(absl::StrCat("config: the sweep's configurations have no '",
                                                     key, "' (they have ",
                                                     absl::StrJoin(known, ", "), ")"));
    }
  }
  for (const auto& [key, set] : values) {
    if (config.params().count(key) > 0) continue;
    if (set.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: missing '", key, "', which the sweep varies over ", *set.begin(),
                       "..", *set.rbegin(), " (", set.size(), " values)"));
    }
    (*config.mutable_params())[key] = *set.begin();
  }
  for (const auto& [key, set] : option_values) {
    if (config.options().count(key) > 0) continue;
    if (set.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "config: missing '", key, "', which the sweep varies over ", absl::StrJoin(set, ", ")));
    }
    (*config.mutable_options())[key] = *set.begin();
  }
  return config;
}

// A line for every hyper-parameter of `config` outside the range `rows`
// (of `config`'s group) measured it over.
std::vector<std::string> ExtrapolationWarnings(const std::vector<v1::ResultRow>& rows,
                                               const v1::ModelConfig& config) {
  std::map<std::string, std::pair<int64_t, int64_t>> measured;
  for (const v1::ResultRow& row : rows) {
    if (!MeasuredOk(row)) continue;
    for (const auto& [key, value] : row.config().params()) {
      auto [it, added] = measured.emplace(key, std::make_pair(value, value));
      if (!added) {
        it->second.first = std::min(it->second.first, value);
        it->second.second = std::max(it->second.second, value);
      }
    }
  }
  std::vector<std::string> warnings;
  for (const auto& [key, value] : config.params()) {
    auto it = measured.find(key);
    if (it == measured.end() || (value >= it->second.first && value <= it->second.second)) continue;
    warnings.push_back(absl::StrCat(key, " ", value, " is outside the measured ", it->second.first,
                                    "..", it->second.second,
                                    ": an extrapolation, which the interval does not cover"));
  }
  return warnings;
}

}  // namespace

absl::StatusOr<v1::PredictResponse> PredictFromSweep(db::Database* database,
                                                     const v1::PredictRequest& request) {
  absl::StatusOr<std::vector<v1::ResultRow>> rows =
      db::ResultStore(database).Query(request.sweep_id(), /*include_samples=*/false);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sweep ", request.sweep_id(), " has no configurations"));
  }
  absl::StatusOr<v1::ModelConfig> config = CompletedConfig(*rows, request.config());
  if (!config.ok()) return config.status();
  // Only the configuration's own group is fitted.
  const std::string key = GroupKeyOf(*config);
  rows->erase(
      std::remove_if(rows->begin(), rows->end(),
                     [&](const v1::ResultRow& row) { return GroupKeyOf(row.config()) != key; }),
      rows->end());
  const std::vector<std::string> warnings = ExtrapolationWarnings(*rows, *config);
  absl::StatusOr<SweepPredictor> predictor = SweepPredictor::Of(*database, *std::move(rows));
  if (!predictor.ok()) return predictor.status();
  absl::StatusOr<v1::PredictedStep> step = predictor->Predict(*config);
  if (!step.ok()) return step.status();
  v1::PredictResponse response;
  *response.mutable_prediction() = *std::move(step);
  *response.mutable_config() = *config;
  const int neighbours = request.neighbours() > 0 ? request.neighbours() : 3;
  for (v1::ResultRow& row : predictor->NearestMeasured(*config, neighbours)) {
    *response.add_nearest() = std::move(row);
  }
  response.set_description(predictor->Describe(*config));
  for (const std::string& warning : warnings) response.add_warnings(warning);
  return response;
}

}  // namespace paradnn::server
