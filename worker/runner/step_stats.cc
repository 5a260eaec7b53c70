#include "worker/runner/step_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace paradnn::runner {
namespace {

// t_{0.975, df} for df = 1..30.
constexpr std::array<double, 30> kTSmall = {
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};

// (df, t_{0.975, df}) beyond 30.
constexpr std::array<std::pair<int, double>, 8> kTLarge = {{{30, 2.0423},
                                                            {40, 2.0211},
                                                            {50, 2.0086},
                                                            {60, 2.0003},
                                                            {80, 1.9901},
                                                            {100, 1.9840},
                                                            {120, 1.9799},
                                                            {1000, 1.9623}}};

constexpr double kNormal975 = 1.959964;

}  // namespace

double QuantileSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double StudentT95(int df) {
  if (df < 1) df = 1;
  if (df <= 30) return kTSmall[static_cast<size_t>(df - 1)];
  for (size_t i = 1; i < kTLarge.size(); ++i) {
    if (df <= kTLarge[i].first) {
      const auto [df0, t0] = kTLarge[i - 1];
      const auto [df1, t1] = kTLarge[i];
      // Critical values are close to linear in 1/df.
      const double x = 1.0 / df, x0 = 1.0 / df0, x1 = 1.0 / df1;
      return t0 + (t1 - t0) * (x - x0) / (x1 - x0);
    }
  }
  const auto [df0, t0] = kTLarge.back();
  const double x = 1.0 / df, x0 = 1.0 / df0;
  return kNormal975 + (t0 - kNormal975) * x / x0;
}

double Ci95HalfWidth(double stddev, int n) {
  if (n < 2) return 0;
  return StudentT95(n - 1) * stddev / std::sqrt(static_cast<double>(n));
}

double Lag1Autocorrelation(double lagged_sum, double m2, int n) {
  if (n < 3 || !(m2 > 0)) return 0;
  return lagged_sum / m2;
}

double EffectiveSamples(int n, double lag1) {
  if (!(lag1 > 0)) return n;
  const double r = std::min(lag1, kMaxLag1);
  return n * (1 - r) / (1 + r);
}

double Ci95HalfWidthCorrelated(double stddev, int n, double lag1) {
  if (n < 2) return 0;
  const double effective = EffectiveSamples(n, lag1);
  const int df = std::max(1, static_cast<int>(std::lround(effective)) - 1);
  return StudentT95(df) * stddev / std::sqrt(effective);
}

v1::StepStats ComputeStepStats(const std::vector<double>& seconds) {
  v1::StepStats stats;
  const int n = static_cast<int>(seconds.size());
  stats.set_steps(n);
  if (n == 0) return stats;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double s : seconds) sum += s;
  const double mean = sum / n;
  double m2 = 0;
  for (double s : seconds) m2 += (s - mean) * (s - mean);
  const double stddev = n > 1 ? std::sqrt(m2 / (n - 1)) : 0.0;
  double lagged_sum = 0;
  for (int i = 1; i < n; ++i) lagged_sum += (seconds[i] - mean) * (seconds[i - 1] - mean);
  const double lag1 = Lag1Autocorrelation(lagged_sum, m2, n);
  const double half = Ci95HalfWidthCorrelated(stddev, n, lag1);
  stats.set_lag1_autocorrelation(lag1);
  stats.set_effective_samples(EffectiveSamples(n, lag1));
  stats.set_median_s(QuantileSorted(sorted, 0.5));
  stats.set_mean_s(mean);
  stats.set_stddev_s(stddev);
  stats.set_p10_s(QuantileSorted(sorted, 0.1));
  stats.set_p90_s(QuantileSorted(sorted, 0.9));
  stats.set_min_s(sorted.front());
  stats.set_max_s(sorted.back());
  stats.set_cv(mean > 0 ? stddev / mean : 0);
  stats.set_ci95_half_width_s(half);
  stats.set_ci95_rel(mean > 0 ? half / mean : 0);
  const double stall_above = kStallFactor * stats.median_s();
  double stalled_sum = 0;
  int stalled = 0;
  for (double s : seconds) {
    if (s <= stall_above) continue;
    stalled_sum += s;
    ++stalled;
  }
  stats.set_stalled_samples(stalled);
  stats.set_stall_share(sum > 0 ? stalled_sum / sum : 0);
  return stats;
}

}  // namespace paradnn::runner
