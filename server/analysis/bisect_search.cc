#include "server/analysis/bisect_search.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/math/distributions/students_t.hpp"

namespace paradnn::server::analysis {
namespace {

using KeySet = std::vector<std::string>;  // sorted setting names

KeySet UnionOf(const KeySet& a, const KeySet& b) {
  KeySet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The median log of the usable step times of one measurement; nullopt
// without any. A median, so that one repeat caught by a hiccup of a shared
// host moves nothing.
std::optional<double> MedianLog(const std::vector<double>& step_times) {
  std::vector<double> logs;
  for (double t : step_times) {
    if (t > 0 && std::isfinite(t)) logs.push_back(std::log(t));
  }
  if (logs.empty()) return std::nullopt;
  std::sort(logs.begin(), logs.end());
  const size_t n = logs.size();
  return n % 2 == 1 ? logs[n / 2] : (logs[n / 2 - 1] + logs[n / 2]) / 2;
}

// The two-sided t quantile for `level` (e.g. 0.95).
double TwoSidedTQuantile(double degrees_of_freedom, double level) {
  const boost::math::students_t t(degrees_of_freedom);
  return boost::math::quantile(boost::math::complement(t, (1 - level) / 2));
}

// QuickXplain (Junker 2004) replayed against the probes decided so far:
// the same answers give the same path, so the search needs no stack of its
// own between batches; it runs until the first probe not yet decided.
class QuickXplainReplay {
 public:
  explicit QuickXplainReplay(const std::map<KeySet, bool>& decided) : decided_(decided) {}

  // The smallest subset X of `candidates` such that background + X
  // carries the effect, given that background + candidates does; tests
  // the background alone when `test_background` (it grew since the caller
  // last knew it to carry).
  KeySet Run(const KeySet& background, bool test_background, const KeySet& candidates) {
    if (needed_) return {};
    if (test_background) {
      const auto it = decided_.find(background);
      if (it == decided_.end()) {
        needed_ = background;
        return {};
      }
      if (it->second) return {};
    }
    if (candidates.size() == 1) return candidates;
    const auto middle = candidates.begin() + static_cast<std::ptrdiff_t>(candidates.size() / 2);
    const KeySet first(candidates.begin(), middle), second(middle, candidates.end());
    const KeySet from_second = Run(UnionOf(background, first), true, second);
    if (needed_) return {};
    const KeySet from_first = Run(UnionOf(background, from_second), !from_second.empty(), first);
    return UnionOf(from_first, from_second);
  }

  // The probe to measure before the replay can go on.
  const std::optional<KeySet>& needed() const { return needed_; }

 private:
  const std::map<KeySet, bool>& decided_;
  std::optional<KeySet> needed_;
};

std::string SignedPercent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f %%", 100 * (ratio - 1));
  return text;
}

std::string DescribeRatio(const RatioEstimate& estimate) {
  if (estimate.basis.empty()) return "not estimated";
  return absl::StrCat(SignedPercent(estimate.ratio), " [", SignedPercent(estimate.low), ", ",
                      SignedPercent(estimate.high), "]");
}

}  // namespace

// Log step times fitted as round effect + mix effect (A's fixed at 0) by
// least squares; `valid` when A is in it and the residual spread has at
// least one degree of freedom.
struct BisectSearch::Fit {
  bool valid = false;
  std::vector<int> column;  // per mix: its column, -1 for A or a mix not in the fit
  std::vector<bool> present;
  Eigen::VectorXd coefficients;
  Eigen::MatrixXd covariance;  // of the coefficients, residual variance included
  double degrees_of_freedom = 0;
  std::vector<size_t> measurements;      // per mix, in the fit
  std::vector<std::set<size_t>> rounds;  // per mix: the rounds it is in, in the fit

  double Effect(size_t mix) const { return column[mix] < 0 ? 0 : coefficients(column[mix]); }
  // Covariance of the effects of mixes i and j (A's is 0).
  double Covariance(size_t i, size_t j) const {
    return column[i] < 0 || column[j] < 0 ? 0 : covariance(column[i], column[j]);
  }
};

namespace {

// The round-and-mix fit of `observations` over `mix_count` mixes. Rounds
// with a single observation say nothing about a mix (their round effect
// takes it all) and are left out. A template only so that it can take
// BisectSearch's private Observation and Fit without being a member.
template <typename Observation, typename Fit>
Fit FitRounds(const std::vector<Observation>& observations, size_t mix_count) {
  Fit fit;
  std::map<size_t, int> per_round;
  for (const Observation& o : observations) ++per_round[o.round];
  std::vector<const Observation*> used;
  std::map<size_t, int> round_column;
  fit.present.assign(mix_count, false);
  fit.measurements.assign(mix_count, 0);
  fit.rounds.assign(mix_count, {});
  for (const Observation& o : observations) {
    if (per_round[o.round] < 2) continue;
    used.push_back(&o);
    round_column.emplace(o.round, static_cast<int>(round_column.size()));
    fit.present[o.mix] = true;
    ++fit.measurements[o.mix];
    fit.rounds[o.mix].insert(o.round);
  }
  fit.column.assign(mix_count, -1);
  int columns = static_cast<int>(round_column.size());
  for (size_t mix = 1; mix < mix_count; ++mix) {
    if (fit.present[mix]) fit.column[mix] = columns++;
  }
  const double degrees_of_freedom = static_cast<double>(used.size()) - columns;
  if (!fit.present[0] || degrees_of_freedom < 1) return fit;
  Eigen::MatrixXd design = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(used.size()), columns);
  Eigen::VectorXd y(static_cast<Eigen::Index>(used.size()));
  for (size_t i = 0; i < used.size(); ++i) {
    const auto row = static_cast<Eigen::Index>(i);
    design(row, round_column[used[i]->round]) = 1;
    if (fit.column[used[i]->mix] >= 0) design(row, fit.column[used[i]->mix]) = 1;
    y(row) = used[i]->log_step_time;
  }
  const Eigen::MatrixXd normal = design.transpose() * design;
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(normal);
  // Not invertible: a mix measured only in rounds not linked to A's.
  if (!lu.isInvertible()) return fit;
  const Eigen::MatrixXd inverse = lu.inverse();
  fit.coefficients = inverse * design.transpose() * y;
  const double residual_variance =
      (y - design * fit.coefficients).squaredNorm() / degrees_of_freedom;
  fit.covariance = residual_variance * inverse;
  fit.degrees_of_freedom = degrees_of_freedom;
  fit.valid = true;
  return fit;
}

}  // namespace

const char* BisectOutcomeName(BisectOutcome outcome) {
  switch (outcome) {
    case BisectOutcome::kSearching:
      return "searching";
    case BisectOutcome::kCulpritsFound:
      return "culprits found";
    case BisectOutcome::kNoDifference:
      return "no difference detected between the stacks";
    case BisectOutcome::kNotReproduced:
      return "not reproduced by the settings";
    case BisectOutcome::kBudgetExhausted:
      break;
  }
  return "measurement budget exhausted";
}

absl::StatusOr<BisectSearch> BisectSearch::Create(StackSettings good, StackSettings bad,
                                                  BisectOptions options) {
  if (options.reference_rounds < 2) {
    return absl::InvalidArgumentError("bisect reference_rounds must be at least 2");
  }
  if (options.max_rounds_per_probe < 1) {
    return absl::InvalidArgumentError("bisect max_rounds_per_probe must be at least 1");
  }
  if (!(options.significance > 0 && options.significance < 1)) {
    return absl::InvalidArgumentError("bisect significance must lie in (0, 1)");
  }
  if (!(options.interval_level > 0 && options.interval_level < 1)) {
    return absl::InvalidArgumentError("bisect interval_level must lie in (0, 1)");
  }
  std::set<std::string> names;
  for (const auto& [name, value] : good) names.insert(name);
  for (const auto& [name, value] : bad) names.insert(name);
  std::vector<std::string> differing;
  for (const std::string& name : names) {
    const auto in_good = good.find(name), in_bad = bad.find(name);
    if (in_good == good.end() || in_bad == bad.end() || in_good->second != in_bad->second) {
      differing.push_back(name);
    }
  }
  if (differing.empty()) {
    return absl::InvalidArgumentError("the two stacks do not differ in any setting");
  }
  return BisectSearch(std::move(good), std::move(bad), std::move(options), std::move(differing));
}

BisectSearch::BisectSearch(StackSettings good, StackSettings bad, BisectOptions options,
                           std::vector<std::string> differing)
    : good_(std::move(good)),
      bad_(std::move(bad)),
      options_(std::move(options)),
      differing_(std::move(differing)) {
  for (const std::string& name : differing_) {
    if (options_.unmixable.count(name) == 0) mixable_.push_back(name);
  }
  MixId({});
  MixId(differing_);
  for (int r = 0; r < options_.reference_rounds; ++r) ScheduleReferenceRound();
  if (pending_.size() > options_.max_measurements) Finish(BisectOutcome::kBudgetExhausted);
}

size_t BisectSearch::MixId(const std::vector<std::string>& from_bad) {
  const auto it = std::find(mixes_.begin(), mixes_.end(), from_bad);
  if (it != mixes_.end()) return static_cast<size_t>(it - mixes_.begin());
  mixes_.push_back(from_bad);
  return mixes_.size() - 1;
}

void BisectSearch::Schedule(std::vector<std::vector<std::string>> mixes_in_order) {
  for (std::vector<std::string>& from_bad : mixes_in_order) {
    MixRequest& request = pending_.emplace_back();
    request.round = rounds_;
    request.settings = good_;
    for (const std::string& name : from_bad) {
      const auto in_bad = bad_.find(name);
      if (in_bad == bad_.end()) {
        request.settings.erase(name);
      } else {
        request.settings[name] = in_bad->second;
      }
    }
    request.from_bad = std::move(from_bad);
  }
  ++rounds_;
  pending_results_.resize(pending_.size());
  pending_recorded_.resize(pending_.size(), false);
}

void BisectSearch::ScheduleReferenceRound() {
  // A B, then B A: a host drifting steadily within a round cancels over
  // two rounds. With unmixable settings, A with every mixable setting of B
  // sits between them.
  const bool good_first = rounds_ % 2 == 0;
  std::vector<std::vector<std::string>> order = {good_first ? KeySet{} : differing_};
  if (mixable_ != differing_ && !mixable_.empty()) order.push_back(mixable_);
  order.push_back(good_first ? differing_ : KeySet{});
  Schedule(std::move(order));
}

void BisectSearch::ScheduleProbeRound() {
  // The reference alternates between A and B so that the probe's distance
  // to each is measured in some round; the order alternates by round.
  const KeySet reference = probe_rounds_ % 2 == 0 ? KeySet{} : differing_;
  if (rounds_ % 2 == 0) {
    Schedule({reference, probe_});
  } else {
    Schedule({probe_, reference});
  }
  ++probe_rounds_;
  if (result_.measurements.size() + pending_.size() > options_.max_measurements) {
    Finish(BisectOutcome::kBudgetExhausted);
  }
}

absl::Status BisectSearch::Record(size_t index, std::vector<double> step_times) {
  if (Done()) return absl::FailedPreconditionError("the bisect search is done");
  if (index >= pending_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("bisect measurement index ", index,
                                                   " is out of range [0, ", pending_.size(), ")"));
  }
  if (pending_recorded_[index]) {
    return absl::FailedPreconditionError(
        absl::StrCat("bisect measurement ", index, " was recorded already"));
  }
  pending_recorded_[index] = true;
  pending_results_[index] = std::move(step_times);
  if (std::find(pending_recorded_.begin(), pending_recorded_.end(), false) !=
      pending_recorded_.end()) {
    return absl::OkStatus();
  }
  for (size_t i = 0; i < pending_.size(); ++i) {
    const std::optional<double> log_step_time = MedianLog(pending_results_[i]);
    if (log_step_time) {
      observations_.push_back({pending_[i].round, MixId(pending_[i].from_bad), *log_step_time});
    }
    result_.measurements.push_back({std::move(pending_[i]), std::move(pending_results_[i])});
  }
  pending_.clear();
  pending_results_.clear();
  pending_recorded_.clear();
  Advance();
  return absl::OkStatus();
}

void BisectSearch::Advance() {
  const Fit fit = FitRounds<Observation, Fit>(observations_, mixes_.size());
  if (in_reference_) {
    AfterReference(fit);
  } else if (DecideProbe(fit)) {
    NextProbe();
  } else {
    ScheduleProbeRound();
  }
}

void BisectSearch::AfterReference(const Fit& fit) {
  if (!fit.valid || !fit.present[1]) {
    // Failed measurements left too little to judge: one more round.
    ScheduleReferenceRound();
    if (result_.measurements.size() + pending_.size() > options_.max_measurements) {
      Finish(BisectOutcome::kBudgetExhausted);
    }
    return;
  }
  const double se = std::sqrt(fit.Covariance(1, 1));
  const double t = std::fabs(fit.Effect(1)) / se;
  if (!(t > TwoSidedTQuantile(fit.degrees_of_freedom, 1 - options_.significance))) {
    Finish(BisectOutcome::kNoDifference);
    return;
  }
  in_reference_ = false;
  carries_[{}] = false;
  if (mixable_.empty()) {
    Finish(BisectOutcome::kNotReproduced);
  } else if (mixable_ == differing_) {
    carries_[mixable_] = true;
    NextProbe();
  } else {
    // A with every mixable setting of B, measured in the reference rounds.
    probe_ = mixable_;
    probe_rounds_ = 0;
    if (DecideProbe(fit)) {
      NextProbe();
    } else {
      ScheduleProbeRound();
    }
  }
}

bool BisectSearch::DecideProbe(const Fit& fit) {
  const size_t mix = MixId(probe_);
  ProbeDecision decision;
  decision.from_bad = probe_;
  decision.rounds = probe_rounds_;
  const bool at_limit = probe_rounds_ >= options_.max_rounds_per_probe;
  if (!fit.valid || !fit.present[mix]) {
    if (!at_limit) return false;
    decision.clear = false;  // never measured: it cannot be shown to carry anything
  } else {
    // Past the midpoint between A and B, in the direction of B's effect.
    const double direction = fit.Effect(1) >= 0 ? 1 : -1;
    const double beyond_midpoint = direction * (fit.Effect(mix) - fit.Effect(1) / 2);
    const double variance =
        fit.Covariance(mix, mix) - fit.Covariance(mix, 1) + fit.Covariance(1, 1) / 4;
    const double t = beyond_midpoint / std::sqrt(std::max(variance, 1e-300));
    const double critical = TwoSidedTQuantile(fit.degrees_of_freedom, 1 - options_.significance);
    decision.share = fit.Effect(1) != 0 ? fit.Effect(mix) / fit.Effect(1) : 0;
    if (std::fabs(t) <= critical && !at_limit) return false;
    decision.carries = t > 0;
    decision.clear = std::fabs(t) > critical;
  }
  carries_[probe_] = decision.carries;
  result_.decisions.push_back(std::move(decision));
  return true;
}

void BisectSearch::NextProbe() {
  if (!carries_[mixable_]) {
    Finish(BisectOutcome::kNotReproduced);
    return;
  }
  QuickXplainReplay replay(carries_);
  const KeySet found = replay.Run({}, false, mixable_);
  if (replay.needed()) {
    probe_ = *replay.needed();
  } else if (const auto it = carries_.find(found); it != carries_.end()) {
    result_.culprits = found;
    Finish(it->second ? BisectOutcome::kCulpritsFound : BisectOutcome::kNotReproduced);
    return;
  } else {
    probe_ = found;  // confirm the set found: under noise a path can mislead
  }
  probe_rounds_ = 0;
  ScheduleProbeRound();
}

void BisectSearch::Finish(BisectOutcome outcome) {
  result_.outcome = outcome;
  pending_.clear();
  pending_results_.clear();
  pending_recorded_.clear();
  const Fit fit = FitRounds<Observation, Fit>(observations_, mixes_.size());
  result_.stack_effect = Estimate(fit, 1);
  if (outcome == BisectOutcome::kCulpritsFound) {
    const size_t mix = MixId(result_.culprits);
    result_.culprit_effect = Estimate(fit, mix);
    result_.culprit_share = fit.Effect(1) != 0 ? fit.Effect(mix) / fit.Effect(1) : 0;
  } else {
    result_.culprits.clear();
  }
  Summarize();
}

RatioEstimate BisectSearch::Estimate(const Fit& fit, size_t mix) const {
  RatioEstimate out;
  out.runs_a = fit.measurements.empty() ? 0 : fit.measurements[0];
  out.runs_b = mix < fit.measurements.size() ? fit.measurements[mix] : 0;
  if (!fit.valid || !fit.present[mix]) return out;
  out.paired_rounds = static_cast<size_t>(
      std::count_if(fit.rounds[mix].begin(), fit.rounds[mix].end(),
                    [&](size_t round) { return fit.rounds[0].count(round) > 0; }));
  const double log_ratio = fit.Effect(mix), se = std::sqrt(fit.Covariance(mix, mix));
  const double half_width = TwoSidedTQuantile(fit.degrees_of_freedom, options_.interval_level) * se;
  out.ratio = std::exp(log_ratio);
  out.low = std::exp(log_ratio - half_width);
  out.high = std::exp(log_ratio + half_width);
  const boost::math::students_t t(fit.degrees_of_freedom);
  out.p_value = se > 0 ? 2 * boost::math::cdf(boost::math::complement(t, std::fabs(log_ratio) / se))
                       : (log_ratio == 0 ? 1 : 0);
  out.basis = "rounds (pooled)";
  return out;
}

void BisectSearch::Summarize() {
  const std::string stacks = absl::StrCat("B over A: ", DescribeRatio(result_.stack_effect));
  const std::string count = absl::StrCat(result_.measurements.size(), " measurements");
  switch (result_.outcome) {
    case BisectOutcome::kCulpritsFound:
      result_.summary = absl::StrCat(
          absl::StrJoin(result_.culprits, " and "),
          result_.culprits.size() > 1 ? " together carry" : " carries", " the effect: step time ",
          DescribeRatio(result_.culprit_effect), " (", stacks, "); ", count);
      return;
    case BisectOutcome::kNoDifference:
      result_.summary =
          absl::StrCat("no difference detected between the stacks (", stacks, "); ", count);
      return;
    case BisectOutcome::kNotReproduced:
      result_.summary =
          absl::StrCat("no mix of the settings ", absl::StrJoin(mixable_, ", "),
                       " reproduces the effect (", stacks, "): the cause lies elsewhere; ", count);
      return;
    default:
      result_.summary =
          absl::StrCat(BisectOutcomeName(result_.outcome), " (", stacks, "); ", count);
  }
}

absl::StatusOr<BisectResult> RunBisect(StackSettings good, StackSettings bad,
                                       const StepTimeMeasurer& measure, BisectOptions options) {
  absl::StatusOr<BisectSearch> search =
      BisectSearch::Create(std::move(good), std::move(bad), std::move(options));
  if (!search.ok()) return search.status();
  while (!search->Done()) {
    const std::vector<MixRequest> batch = search->Pending();
    for (size_t i = 0; i < batch.size(); ++i) {
      if (absl::Status recorded = search->Record(i, measure(batch[i].settings)); !recorded.ok()) {
        return recorded;
      }
    }
  }
  return search->result();
}

}  // namespace paradnn::server::analysis
