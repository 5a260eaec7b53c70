#include "server/analysis/comparison_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "boost/math/distributions/normal.hpp"
#include "boost/math/distributions/students_t.hpp"

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

}  // namespace

RatioEstimate EstimateRatio(const std::vector<ComparisonRound>& rounds, double rerun_rel_sd,
                            double level) {
  RatioEstimate out;
  std::vector<double> per_round, all_a, all_b;
  for (const ComparisonRound& round : rounds) {
    const std::vector<double> a = Logs(round.a), b = Logs(round.b);
    all_a.insert(all_a.end(), a.begin(), a.end());
    all_b.insert(all_b.end(), b.begin(), b.end());
    if (!a.empty() && !b.empty()) per_round.push_back(Mean(b) - Mean(a));
  }
  out.runs_a = all_a.size();
  out.runs_b = all_b.size();
  out.paired_rounds = per_round.size();
  if (per_round.size() >= 2) {
    const double n = static_cast<double>(per_round.size());
    out.basis = "paired rounds";
    FillInterval(Mean(per_round), std::sqrt(Variance(per_round) / n), n - 1, level, &out);
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

}  // namespace paradnn::server::analysis
