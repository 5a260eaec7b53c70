#include "server/analysis/comparison_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "boost/math/distributions/normal.hpp"
#include "boost/math/distributions/students_t.hpp"
#include "boost/math/special_functions/digamma.hpp"
#include "boost/math/special_functions/polygamma.hpp"
#include "boost/math/special_functions/trigamma.hpp"

namespace paradnn::server::analysis {
namespace {

// The logs of the positive values of `values`.
std::vector<double> Logs(const std::vector<double>& values) {
  std::vector<double> logs;
  for (double v : values) {
    if (v > 0 && std::isfinite(v)) logs.push_back(std::log(v));
  }
  return logs;
}

double Mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// The sample variance (n - 1); 0 for fewer than 2 values.
double Variance(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double mean = Mean(values);
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return sum / static_cast<double>(values.size() - 1);
}

// Fills `out`'s ratio, interval and p-value from a log ratio `mean`, its
// standard error and the degrees of freedom of a t interval (0: normal).
void FillInterval(double mean, double standard_error, double degrees_of_freedom, double level,
                  RatioEstimate* out) {
  out->ratio = std::exp(mean);
  if (!(standard_error > 0)) {
    // Every repeat gave the same ratio: no spread to build an interval from.
    out->low = out->high = out->ratio;
    out->p_value = mean == 0 ? 1 : 0;
    return;
  }
  const double tail = (1 - level) / 2;
  const double statistic = std::fabs(mean) / standard_error;
  double quantile = 0;
  if (degrees_of_freedom > 0) {
    const boost::math::students_t t(degrees_of_freedom);
    quantile = boost::math::quantile(boost::math::complement(t, tail));
    out->p_value = 2 * boost::math::cdf(boost::math::complement(t, statistic));
  } else {
    const boost::math::normal z;
    quantile = boost::math::quantile(boost::math::complement(z, tail));
    out->p_value = 2 * boost::math::cdf(boost::math::complement(z, statistic));
  }
  out->low = std::exp(mean - quantile * standard_error);
  out->high = std::exp(mean + quantile * standard_error);
}

// The y with trigamma(y) = x, by Newton's method from limma's
// trigammaInverse (Smyth 2004): Boost.Math has trigamma but not its inverse.
double TrigammaInverse(double x) {
  if (x > 1e7) return 1 / std::sqrt(x);
  if (x < 1e-6) return 1 / x;
  double y = 0.5 + 1 / x;
  for (int iteration = 0; iteration < 50; ++iteration) {
    const double tri = boost::math::trigamma(y);
    const double step = tri * (1 - tri / x) / boost::math::polygamma(2, y);
    y += step;
    if (-step / y < 1e-8) break;
  }
  return y;
}

// The per-round log ratios of `rounds` and the logs of A's runs.
void PerRoundLogRatios(const std::vector<ComparisonRound>& rounds, std::vector<double>* per_round,
                       std::vector<double>* all_a, std::vector<double>* all_b) {
  for (const ComparisonRound& round : rounds) {
    const std::vector<double> a = Logs(round.a), b = Logs(round.b);
    all_a->insert(all_a->end(), a.begin(), a.end());
    all_b->insert(all_b->end(), b.begin(), b.end());
    if (!a.empty() && !b.empty()) per_round->push_back(Mean(b) - Mean(a));
  }
}

// The least-squares line of `y` on `x`: {intercept, slope}.
std::pair<double, double> FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const double mx = Mean(x), my = Mean(y);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  const double slope = sxx > 0 ? sxy / sxx : 0;
  return {my - slope * mx, slope};
}

}  // namespace

double SpreadPrior::VarianceAt(double log_level) const {
  return std::exp(intercept + slope * log_level);
}

RoundSpread PairedRoundSpread(const std::vector<ComparisonRound>& rounds) {
  std::vector<double> per_round, all_a, all_b;
  PerRoundLogRatios(rounds, &per_round, &all_a, &all_b);
  RoundSpread spread;
  if (per_round.size() < 2) return spread;
  spread.variance = Variance(per_round);
  spread.degrees_of_freedom = static_cast<double>(per_round.size() - 1);
  spread.log_level = Mean(all_a);
  return spread;
}

RoundSpread LogSpread(const std::vector<double>& values) {
  const std::vector<double> logs = Logs(values);
  RoundSpread spread;
  if (logs.empty()) return spread;
  spread.log_level = Mean(logs);
  if (logs.size() < 2) return spread;
  spread.variance = Variance(logs);
  spread.degrees_of_freedom = static_cast<double>(logs.size() - 1);
  return spread;
}

// limma's fitFDist: each log variance, less its expected log chi-square
// offset, scatters around the prior's log variance (or its trend) by the
// sampling noise (trigamma(d / 2)) plus the true variances' own spread; the
// excess over the sampling noise is trigamma(d0 / 2).
SpreadPrior FitSpreadPrior(const std::vector<RoundSpread>& spreads) {
  std::vector<RoundSpread> used;
  for (const RoundSpread& spread : spreads) {
    if (spread.degrees_of_freedom > 0 && std::isfinite(spread.variance)) used.push_back(spread);
  }
  SpreadPrior prior;
  if (used.size() < kMinSpreadsForPrior) return prior;
  // As limma does: a zero variance (every round the same ratio) would be a
  // log of minus infinity; it is floored at a small fraction of the median.
  std::vector<double> variances;
  variances.reserve(used.size());
  for (const RoundSpread& spread : used) variances.push_back(std::max(spread.variance, 0.0));
  std::nth_element(variances.begin(), variances.begin() + variances.size() / 2, variances.end());
  const double median = variances[variances.size() / 2] > 0 ? variances[variances.size() / 2] : 1;
  std::vector<double> e, levels;
  double sampling_noise = 0;
  for (const RoundSpread& spread : used) {
    const double half_df = spread.degrees_of_freedom / 2;
    e.push_back(std::log(std::max(spread.variance, 1e-5 * median)) - boost::math::digamma(half_df) +
                std::log(half_df));
    levels.push_back(spread.log_level);
    sampling_noise += boost::math::trigamma(half_df);
    prior.total_degrees_of_freedom += spread.degrees_of_freedom;
  }
  const size_t n = used.size();
  sampling_noise /= static_cast<double>(n);
  const auto [lowest, highest] = std::minmax_element(levels.begin(), levels.end());
  const bool trend = n >= kMinSpreadsForTrend && *highest - *lowest >= std::log(2.0);
  const auto [intercept, slope] = trend ? FitLine(levels, e) : std::make_pair(Mean(e), 0.0);
  double squares = 0;
  for (size_t i = 0; i < n; ++i) {
    const double residual = e[i] - intercept - slope * levels[i];
    squares += residual * residual;
  }
  const double excess = squares / static_cast<double>(n - (trend ? 2 : 1)) - sampling_noise;
  prior.spreads = n;
  prior.slope = slope;
  if (excess > 0) {
    prior.degrees_of_freedom = 2 * TrigammaInverse(excess);
    const double half = prior.degrees_of_freedom / 2;
    prior.intercept = intercept + boost::math::digamma(half) - std::log(half);
  } else {
    prior.degrees_of_freedom = std::numeric_limits<double>::infinity();
    prior.intercept = intercept;
  }
  return prior;
}

RoundSpread Moderate(const SpreadPrior& prior, const RoundSpread& spread) {
  if (prior.empty() || !(spread.degrees_of_freedom > 0)) return spread;
  RoundSpread out = spread;
  const double prior_variance = prior.VarianceAt(spread.log_level);
  const double d0 = prior.degrees_of_freedom, d = spread.degrees_of_freedom;
  out.variance =
      std::isinf(d0) ? prior_variance : (d0 * prior_variance + d * spread.variance) / (d0 + d);
  out.degrees_of_freedom = std::max(d, std::min(d0 + d, prior.total_degrees_of_freedom));
  return out;
}

RatioEstimate EstimateRatio(const std::vector<ComparisonRound>& rounds, double rerun_rel_sd,
                            double level, const SpreadPrior& prior) {
  RatioEstimate out;
  std::vector<double> per_round, all_a, all_b;
  PerRoundLogRatios(rounds, &per_round, &all_a, &all_b);
  out.runs_a = all_a.size();
  out.runs_b = all_b.size();
  out.paired_rounds = per_round.size();
  if (per_round.size() >= 2) {
    const double n = static_cast<double>(per_round.size());
    const RoundSpread spread =
        Moderate(prior, RoundSpread{Variance(per_round), n - 1, Mean(all_a)});
    out.basis = prior.empty() ? "paired rounds" : "paired rounds, pooled spread";
    FillInterval(Mean(per_round), std::sqrt(spread.variance / n), spread.degrees_of_freedom, level,
                 &out);
    return out;
  }
  if (all_a.size() >= 2 && all_b.size() >= 2) {
    const double na = static_cast<double>(all_a.size()), nb = static_cast<double>(all_b.size());
    const double va = Variance(all_a) / na, vb = Variance(all_b) / nb;
    // Welch-Satterthwaite degrees of freedom; at least 1.
    const double df =
        va + vb > 0
            ? std::max(1.0, (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1)))
            : 1.0;
    out.basis = "unpaired runs";
    FillInterval(Mean(all_b) - Mean(all_a), std::sqrt(va + vb), df, level, &out);
    return out;
  }
  if (!all_a.empty() && !all_b.empty() && rerun_rel_sd > 0) {
    // The log-normal whose relative standard deviation is rerun_rel_sd.
    const double sigma = std::sqrt(std::log1p(rerun_rel_sd * rerun_rel_sd));
    const double se = sigma * std::sqrt(1 / static_cast<double>(all_a.size()) +
                                        1 / static_cast<double>(all_b.size()));
    out.basis = "re-run model";
    FillInterval(Mean(all_b) - Mean(all_a), se, /*degrees_of_freedom=*/0, level, &out);
    return out;
  }
  if (!all_a.empty() && !all_b.empty()) out.ratio = std::exp(Mean(all_b) - Mean(all_a));
  return out;
}

std::vector<double> BenjaminiHochberg(const std::vector<double>& p_values) {
  const size_t m = p_values.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t i, size_t j) { return p_values[i] < p_values[j]; });
  std::vector<double> adjusted(m, 1.0);
  double running = 1.0;  // the smallest p(k) m / k over the ranks k above
  for (size_t rank = m; rank >= 1; --rank) {
    const size_t i = order[rank - 1];
    const double p = std::clamp(p_values[i], 0.0, 1.0);
    running = std::min(running, p * static_cast<double>(m) / static_cast<double>(rank));
    adjusted[i] = running;
  }
  return adjusted;
}

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSlower:
      return "slower";
    case Verdict::kNoDifference:
      return "no difference detected";
    case Verdict::kNotEnoughData:
      break;
  }
  return "not enough data";
}

Verdict Judge(const RatioEstimate& estimate, double adjusted_p_value, double fdr) {
  if (estimate.basis.empty()) return Verdict::kNotEnoughData;
  const bool excludes_one = estimate.low > 1 || estimate.high < 1;
  if (adjusted_p_value <= fdr && excludes_one) {
    return estimate.ratio > 1 ? Verdict::kSlower : Verdict::kFaster;
  }
  return Verdict::kNoDifference;
}

std::vector<JudgedPair> JudgePairs(const std::vector<PairRounds>& pairs, double fdr) {
  std::vector<RoundSpread> spreads;
  for (const PairRounds& pair : pairs) {
    if (!pair.predicted) spreads.push_back(PairedRoundSpread(pair.rounds));
  }
  const SpreadPrior prior = FitSpreadPrior(spreads);
  std::vector<JudgedPair> judged(pairs.size());
  std::vector<double> p_values;
  p_values.reserve(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!pairs[i].predicted) {
      judged[i].estimate = EstimateRatio(pairs[i].rounds, pairs[i].rerun_rel_sd, 0.95, prior);
    }
    judged[i].p_value = judged[i].estimate.basis.empty() ? 1.0 : judged[i].estimate.p_value;
    p_values.push_back(judged[i].p_value);
  }
  const std::vector<double> q_values = BenjaminiHochberg(p_values);
  for (size_t i = 0; i < pairs.size(); ++i) {
    judged[i].q_value = q_values[i];
    judged[i].verdict = Judge(judged[i].estimate, q_values[i], fdr);
  }
  return judged;
}

}  // namespace paradnn::server::analysis
