#include "server/analysis/speedup_verdicts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "boost/math/distributions/students_t.hpp"
#include "server/analysis/comparison_stats.h"

namespace paradnn::server::analysis {
namespace {

// The runs of one configuration, by round, both sides.
struct ConfigRuns {
  std::map<std::string, ComparisonRound> rounds;
  double rerun_rel_sd = 0;
  bool predicted = false;
};

// The configurations' runs, with time-like values (lower is better) so that
// EstimateRatio's "B's step time over A's" is the candidate over the
// baseline of a time: a rate enters as its reciprocal.
std::map<std::string, ConfigRuns> CollectRuns(const std::vector<SpeedupRow>& rows,
                                              const std::string& baseline,
                                              const std::string& candidate, bool lower_is_better) {
  std::map<std::string, ConfigRuns> configs;
  for (const SpeedupRow& row : rows) {
    const bool is_baseline = row.side == baseline;
    if (!is_baseline && row.side != candidate) continue;
    ConfigRuns& runs = configs[row.config];
    runs.rerun_rel_sd = std::max(runs.rerun_rel_sd, row.rerun_rel_sd);
    runs.predicted = runs.predicted || row.predicted;
    for (const SpeedupRun& run : row.runs) {
      if (!(run.value > 0)) continue;
      ComparisonRound& round = runs.rounds[run.round];
      (is_baseline ? round.a : round.b).push_back(lower_is_better ? run.value : 1 / run.value);
    }
  }
  return configs;
}

// The geometric mean's interval: a t interval over the points' log
// speedups; one point keeps its own interval.
void FillGeomeanInterval(v1::SpeedupResponse* response) {
  const int n = response->points_size();
  double log_sum = 0, lo = response->points(0).speedup(), hi = lo;
  for (const v1::SpeedupPoint& point : response->points()) {
    log_sum += std::log(point.speedup());
    lo = std::min(lo, point.speedup());
    hi = std::max(hi, point.speedup());
  }
  response->set_geomean_speedup(std::exp(log_sum / n));
  response->set_min_speedup(lo);
  response->set_max_speedup(hi);
  if (n == 1) {
    response->set_geomean_low(response->points(0).speedup_low());
    response->set_geomean_high(response->points(0).speedup_high());
    return;
  }
  double mean = 0;
  for (const v1::SpeedupPoint& point : response->points()) mean += std::log(point.speedup());
  mean /= n;
  double squares = 0;
  for (const v1::SpeedupPoint& point : response->points()) {
    squares += (std::log(point.speedup()) - mean) * (std::log(point.speedup()) - mean);
  }
  const double standard_error = std::sqrt(squares / (n - 1) / n);
  const boost::math::students_t t(n - 1);
  const double quantile = boost::math::quantile(boost::math::complement(t, 0.025));
  response->set_geomean_low(std::exp(mean - quantile * standard_error));
  response->set_geomean_high(std::exp(mean + quantile * standard_error));
}

}  // namespace

void AddSpeedupVerdicts(const std::vector<SpeedupRow>& rows, bool lower_is_better, double fdr,
                        v1::SpeedupResponse* response) {
  std::map<std::string, ConfigRuns> configs =
      CollectRuns(rows, response->baseline(), response->candidate(), lower_is_better);
  std::vector<PairRounds> pairs;
  pairs.reserve(static_cast<size_t>(response->points_size()));
  for (const v1::SpeedupPoint& point : response->points()) {
    const ConfigRuns& runs = configs[point.config()];
    PairRounds& pair = pairs.emplace_back();
    pair.rounds.reserve(runs.rounds.size());
    for (const auto& [key, round] : runs.rounds) pair.rounds.push_back(round);
    pair.rerun_rel_sd = runs.rerun_rel_sd;
    pair.predicted = runs.predicted;
  }
  const std::vector<JudgedPair> judged = JudgePairs(pairs, fdr);
  response->set_fdr(fdr);
  for (int i = 0; i < response->points_size(); ++i) {
    v1::SpeedupPoint* point = response->mutable_points(i);
    const JudgedPair& pair = judged[static_cast<size_t>(i)];
    const RatioEstimate& estimate = pair.estimate;
    // The estimate is of the candidate's time over the baseline's: a
    // speedup is its reciprocal, the interval's ends swapped. Where it has a
    // basis, the point is the estimate's (the mean of log ratios the
    // interval is built around), not the ratio of medians, so that the two
    // always agree.
    if (!estimate.basis.empty() && estimate.ratio > 0) point->set_speedup(1 / estimate.ratio);
    point->set_speedup_low(estimate.high > 0 ? 1 / estimate.high : 0);
    point->set_speedup_high(estimate.low > 0 ? 1 / estimate.low : 0);
    point->set_p_value(pair.p_value);
    point->set_q_value(pair.q_value);
    point->set_interval_basis(estimate.basis);
    point->set_baseline_runs(static_cast<int32_t>(estimate.runs_a));
    point->set_candidate_runs(static_cast<int32_t>(estimate.runs_b));
    point->set_verdict(VerdictName(pair.verdict));
    switch (pair.verdict) {
      case Verdict::kFaster:
        response->set_faster(response->faster() + 1);
        break;
      case Verdict::kSlower:
        response->set_slower(response->slower() + 1);
        break;
      case Verdict::kNoDifference:
        response->set_no_difference(response->no_difference() + 1);
        break;
      case Verdict::kNotEnoughData:
        response->set_not_enough_data(response->not_enough_data() + 1);
        break;
    }
  }
  if (response->points_size() > 0) FillGeomeanInterval(response);
}

}  // namespace paradnn::server::analysis
