// Summary statistics of timed step durations. Torch-free.
#ifndef PARADNN_WORKER_RUNNER_STEP_STATS_H_
#define PARADNN_WORKER_RUNNER_STEP_STATS_H_

#include <vector>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// The q-quantile (0 <= q <= 1) of `sorted` (ascending, non-empty) by linear
// interpolation between closest ranks: position q*(n-1) (numpy's default,
// Hyndman-Fan type 7).
double QuantileSorted(const std::vector<double>& sorted, double q);

// Two-sided 95 % critical value of Student's t with `df` >= 1 degrees of
// freedom (t_{0.975, df}). Exact table values for df <= 30 and at 40, 50, 60,
// 80, 100, 120, 1000; between table points interpolated linearly in 1/df;
// 1.959964 (the normal quantile) beyond.
double StudentT95(int df);

// Half-width of the 95 % confidence interval of the mean of n samples with
// sample standard deviation `stddev`: t_{0.975,n-1} * stddev / sqrt(n).
// 0 when n < 2 (undefined).
double Ci95HalfWidth(double stddev, int n);

// Lag-1 autocorrelation of a series with n values, mean m and sum of
// squared deviations m2, given the sum over consecutive pairs of
// (x[i] - m) * (x[i-1] - m): that sum / m2. 0 for n < 3 or m2 = 0.
double Lag1Autocorrelation(double lagged_sum, double m2, int n);

// Step times drift in phases (other work on the host, frequency), so
// consecutive samples are correlated and n of them carry less information
// than n independent ones. As for an AR(1) series, the effective number of
// samples is n * (1 - r) / (1 + r) for a lag-1 autocorrelation r > 0 (r is
// capped at kMaxLag1); n for r <= 0 (a negative estimate never narrows the
// interval).
inline constexpr double kMaxLag1 = 0.99;
double EffectiveSamples(int n, double lag1);

// Half-width of the 95 % confidence interval of the mean of n samples with
// sample standard deviation `stddev` and lag-1 autocorrelation `lag1`:
// t_{0.975, df} * stddev / sqrt(n_eff), n_eff = EffectiveSamples(n, lag1),
// df = max(1, round(n_eff) - 1). With lag1 <= 0 this is Ci95HalfWidth.
// 0 when n < 2.
double Ci95HalfWidthCorrelated(double stddev, int n, double lag1);

// A sample longer than this many times the median is a stall.
inline constexpr double kStallFactor = 3.0;

// Fills steps, median, mean, stddev (sample, n-1), p10, p90, min, max, cv,
// lag1_autocorrelation, effective_samples, the CI fields (by
// Ci95HalfWidthCorrelated), stalled_samples and stall_share from `seconds`. warmup_steps and
// stop_reason are left for the caller. All statistics are 0 for an empty input; with one sample
// stddev, cv and the CI are 0.
v1::StepStats ComputeStepStats(const std::vector<double>& seconds);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_STEP_STATS_H_
