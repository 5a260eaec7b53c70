#include "server/analysis/scale_out_series.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/analysis/analysis_math.h"

namespace paradnn::server::analysis {
namespace {

constexpr double kHalfShare = 0.5;

// The median of `part` over `runs`.
template <typename Part>
double MedianOverRuns(const std::vector<const ScaleOutRun*>& runs, Part part) {
  std::vector<double> values;
  values.reserve(runs.size());
  for (const ScaleOutRun* run : runs) values.push_back(part(*run));
  return Median(std::move(values));
}

// One (N, batch) of a configuration: its repeats' medians, value by value.
v1::ScaleOutPoint CombineRepeats(const std::vector<const ScaleOutRun*>& runs) {
  const ScaleOutRun& first = *runs.front();
  v1::ScaleOutPoint point;
  point.set_n(first.n);
  point.set_ranks(first.ranks);
  point.set_batch(first.batch);
  point.set_global_batch(first.batch * first.ranks);
  point.set_runs(static_cast<int32_t>(runs.size()));
  point.set_step_s(MedianOverRuns(runs, [](const ScaleOutRun& r) { return r.step_s; }));
  point.set_examples_per_sec(point.step_s() > 0 ? point.global_batch() / point.step_s() : 0);
  for (const ScaleOutRun* run : runs) {
    point.set_data_parallel(point.data_parallel() || run->data_parallel);
    point.set_predicted(point.predicted() || run->predicted);
    if (point.backend().empty()) point.set_backend(run->backend);
  }
  // A run without a DataParallelStep spent its whole step computing.
  point.set_compute_s(MedianOverRuns(
      runs, [](const ScaleOutRun& r) { return r.data_parallel ? r.compute_s : r.step_s; }));
  point.set_exposed_communication_s(
      MedianOverRuns(runs, [](const ScaleOutRun& r) { return r.exposed_communication_s; }));
  point.set_optimizer_s(MedianOverRuns(runs, [](const ScaleOutRun& r) { return r.optimizer_s; }));
  point.set_allreduce_s(MedianOverRuns(runs, [](const ScaleOutRun& r) { return r.allreduce_s; }));
  point.set_bus_bytes_per_sec(
      MedianOverRuns(runs, [](const ScaleOutRun& r) { return r.bus_bytes_per_sec; }));
  point.set_allreduce_bytes(static_cast<int64_t>(MedianOverRuns(
      runs, [](const ScaleOutRun& r) { return static_cast<double>(r.allreduce_bytes); })));
  point.set_buckets(first.buckets);
  std::vector<const ScaleOutRun*> roofed;
  for (const ScaleOutRun* run : runs) {
    if (run->roof_allreduce_s > 0) roofed.push_back(run);
  }
  if (!roofed.empty()) {
    point.set_roof_allreduce_s(
        MedianOverRuns(roofed, [](const ScaleOutRun& r) { return r.roof_allreduce_s; }));
    if (point.allreduce_s() > 0) {
      point.set_roof_fraction(point.roof_allreduce_s() / point.allreduce_s());
    }
  }
  const double parts = point.compute_s() + point.exposed_communication_s() + point.optimizer_s();
  point.set_other_s(std::max(0.0, point.step_s() - parts));
  point.set_communication_share(
      point.step_s() > 0 ? point.exposed_communication_s() / point.step_s() : 0);
  return point;
}

// Every configuration's points, by configuration, then N, then batch.
std::map<std::string, std::vector<v1::ScaleOutPoint>> PointsByConfig(
    const std::vector<ScaleOutRun>& runs) {
  std::map<std::tuple<std::string, int32_t, int64_t>, std::vector<const ScaleOutRun*>> repeats;
  for (const ScaleOutRun& run : runs) repeats[{run.config, run.n, run.batch}].push_back(&run);
  std::map<std::string, std::vector<v1::ScaleOutPoint>> by_config;
  for (const auto& [key, members] : repeats) {
    by_config[std::get<0>(key)].push_back(CombineRepeats(members));
  }
  return by_config;
}

std::string FieldAt(const std::string& field, int32_t n) { return absl::StrCat(field, "=", n); }

// What the baseline was, for the reader: a 1-replica run on the same
// communication path is what the efficiencies should be measured against.
void DescribeBaseline(const std::string& field, const std::vector<ScaleOutGap>& earlier,
                      v1::ScaleOutSeries* series) {
  const v1::ScaleOutPoint& base = series->points(0);
  std::string backends;
  for (const v1::ScaleOutPoint& point : series->points()) {
    if (!point.backend().empty() && point.backend() != base.backend()) backends = point.backend();
  }
  const std::string at = FieldAt(field, base.n());
  if (base.data_parallel() && base.ranks() == 1) {
    series->set_baseline_kind("data-parallel 1 rank");
    series->set_baseline(
        absl::StrCat(at, ": a 1-replica run on the same communication path (", base.backend(), ")",
                     backends.empty() ? "" : absl::StrCat(", though other N ran on ", backends)));
  } else if (base.data_parallel()) {
    series->set_baseline_kind(absl::StrCat("data-parallel ", base.ranks(), " ranks"));
    series->set_baseline(absl::StrCat(
        at, ": ", base.ranks(), " ranks (", base.backend(),
        "), already communicating: the efficiencies are relative to it, not to one replica"));
  } else {
    series->set_baseline_kind("plain");
    series->set_baseline(
        absl::StrCat(at, ": a plain run without data-parallel wrapping (", base.ranks(),
                     base.ranks() == 1 ? " replica" : " replicas",
                     "); the wrapping's own cost counts against the efficiencies"));
  }
  std::vector<std::string> missing;
  missing.reserve(earlier.size());
  for (const ScaleOutGap& gap : earlier) {
    missing.push_back(absl::StrCat(FieldAt(field, gap.n), " (", gap.outcome, ")"));
  }
  if (!missing.empty()) {
    series->set_note(
        absl::StrCat("no OK result at ", absl::StrJoin(missing, ", "), ": the baseline is ", at));
  }
}

// Speedup, efficiency and the ideal line of a weak or strong series.
void ScoreAgainstBaseline(v1::ScaleOutSeries* series) {
  const v1::ScaleOutPoint base = series->points(0);
  series->set_baseline_n(base.n());
  const bool weak = series->mode() == "weak";
  for (v1::ScaleOutPoint& point : *series->mutable_points()) {
    const double ratio = static_cast<double>(point.n()) / base.n();
    point.set_ideal_examples_per_sec(base.examples_per_sec() * ratio);
    const double speedup =
        weak ? point.examples_per_sec() / base.examples_per_sec() : base.step_s() / point.step_s();
    if (!std::isfinite(speedup)) continue;
    point.set_speedup(speedup);
    point.set_efficiency(speedup / ratio);
  }
}

// Where the series' communication share crosses 50 %, in words too.
void FindCrossover(const std::string& field, v1::ScaleOutSeries* series) {
  std::vector<int32_t> n;
  std::vector<double> share;
  for (const v1::ScaleOutPoint& point : series->points()) {
    n.push_back(point.n());
    share.push_back(point.communication_share());
  }
  const std::optional<double> crossing = ShareCrossing(n, share);
  if (!crossing.has_value()) {
    const double most = *std::max_element(share.begin(), share.end());
    series->set_crossover(
        absl::StrFormat("not within the measured range (%s %d-%d; at most %.0f%%)", field,
                        n.front(), n.back(), 100 * most));
    return;
  }
  series->set_crossover_n(*crossing);
  if (share.front() >= kHalfShare) {
    series->set_crossover(absl::StrFormat("from the smallest N on (%s=%d: %.0f%%)", field,
                                          n.front(), 100 * share.front()));
    return;
  }
  const size_t after = static_cast<size_t>(
      std::find_if(share.begin(), share.end(), [](double s) { return s >= kHalfShare; }) -
      share.begin());
  series->set_crossover(absl::StrFormat("at %s ~ %.3g (between %d and %d)", field, *crossing,
                                        n[after - 1], n[after]));
}

// The gaps of `config` before `base_n` that `keep` says belong to a series.
template <typename Keep>
std::vector<ScaleOutGap> EarlierGaps(const std::vector<ScaleOutGap>& gaps,
                                     const std::string& config, int32_t base_n, Keep keep) {
  std::vector<ScaleOutGap> earlier;
  for (const ScaleOutGap& gap : gaps) {
    if (gap.config == config && gap.n < base_n && keep(gap)) earlier.push_back(gap);
  }
  return earlier;
}

// A weak or strong series of `points` (one per N, ascending).
v1::ScaleOutSeries ScoredSeries(const std::string& config, const std::string& mode,
                                std::vector<v1::ScaleOutPoint> points, const std::string& field,
                                const std::vector<ScaleOutGap>& gaps) {
  v1::ScaleOutSeries series;
  series.set_config(config);
  series.set_mode(mode);
  for (v1::ScaleOutPoint& point : points) *series.add_points() = std::move(point);
  const v1::ScaleOutPoint& base = series.points(0);
  const int64_t batch = base.batch();
  const int64_t per_n = base.batch() * base.n();
  if (mode == "weak") {
    series.set_batch(batch);
  } else {
    series.set_global_batch(base.global_batch());
  }
  DescribeBaseline(field,
                   EarlierGaps(gaps, config, base.n(),
                               [&](const ScaleOutGap& gap) {
                                 return mode == "weak" ? gap.batch == batch
                                                       : gap.batch * gap.n == per_n;
                               }),
                   &series);
  ScoreAgainstBaseline(&series);
  FindCrossover(field, &series);
  return series;
}

// The series of one configuration's points (ascending N, then batch).
void SeriesOfConfig(const std::string& config, const std::vector<v1::ScaleOutPoint>& points,
                    const std::vector<ScaleOutGap>& gaps, const std::string& field,
                    std::vector<v1::ScaleOutSeries>* out) {
  std::map<int64_t, std::vector<v1::ScaleOutPoint>> weak;    // by batch
  std::map<int64_t, std::vector<v1::ScaleOutPoint>> strong;  // by batch x N
  std::set<int32_t> distinct_n;
  for (const v1::ScaleOutPoint& point : points) {
    weak[point.batch()].push_back(point);
    strong[point.batch() * point.n()].push_back(point);
    distinct_n.insert(point.n());
  }
  if (distinct_n.size() < 2) return;
  const size_t before = out->size();
  for (auto& [batch, series] : weak) {
    if (series.size() >= 2) out->push_back(ScoredSeries(config, "weak", series, field, gaps));
  }
  for (auto& [global, series] : strong) {
    if (series.size() >= 2) out->push_back(ScoredSeries(config, "strong", series, field, gaps));
  }
  if (out->size() > before) return;
  v1::ScaleOutSeries& neither = out->emplace_back();
  neither.set_config(config);
  neither.set_mode("neither");
  for (const v1::ScaleOutPoint& point : points) *neither.add_points() = point;
  neither.set_note(absl::StrCat("batch is neither constant (weak scaling) nor inversely ",
                                "proportional to ", field,
                                " (strong scaling) across its values: no efficiency"));
}

int ModeOrder(const std::string& mode) {
  if (mode == "weak") return 0;
  return mode == "strong" ? 1 : 2;
}

}  // namespace

std::optional<double> ShareCrossing(const std::vector<int32_t>& n,
                                    const std::vector<double>& share) {
  for (size_t i = 0; i < n.size() && i < share.size(); ++i) {
    if (share[i] < kHalfShare) continue;
    if (i == 0) return n[0];
    // Linear in log N between the last measured N below half and this one.
    const double fraction = (kHalfShare - share[i - 1]) / (share[i] - share[i - 1]);
    const double log_n = std::log(n[i - 1]) + fraction * (std::log(n[i]) - std::log(n[i - 1]));
    return std::exp(log_n);
  }
  return std::nullopt;
}

absl::StatusOr<v1::ScaleOutResponse> BuildScaleOut(const std::vector<ScaleOutRun>& runs,
                                                   const std::vector<ScaleOutGap>& gaps,
                                                   const std::string& field) {
  std::vector<v1::ScaleOutSeries> series;
  std::set<int32_t> all_n;
  for (const auto& [config, points] : PointsByConfig(runs)) {
    SeriesOfConfig(config, points, gaps, field, &series);
    for (const v1::ScaleOutPoint& point : points) all_n.insert(point.n());
  }
  if (series.empty()) {
    std::vector<std::string> values;
    values.reserve(all_n.size());
    for (int32_t n : all_n) values.push_back(absl::StrCat(n));
    return absl::InvalidArgumentError(absl::StrCat(
        "scale_out needs OK results of one configuration at two or more values of ", field,
        " (the selected results have ", runs.size(), " OK runs at ", field, " ",
        values.empty() ? "none" : absl::StrJoin(values, ", "),
        ", never two for one configuration); sweep params.", field, ", e.g. [1, 2, 4]"));
  }
  std::stable_sort(series.begin(), series.end(),
                   [](const v1::ScaleOutSeries& a, const v1::ScaleOutSeries& b) {
                     return std::make_tuple(ModeOrder(a.mode()), a.config()) <
                            std::make_tuple(ModeOrder(b.mode()), b.config());
                   });
  v1::ScaleOutResponse response;
  response.set_field(field);
  for (v1::ScaleOutSeries& one : series) {
    if (one.mode() == "weak") response.set_weak_series(response.weak_series() + 1);
    if (one.mode() == "strong") response.set_strong_series(response.strong_series() + 1);
    if (one.mode() == "neither") response.set_neither_series(response.neither_series() + 1);
    *response.add_series() = std::move(one);
  }
  return response;
}

}  // namespace paradnn::server::analysis
