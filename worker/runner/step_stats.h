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

// Fills steps, median, mean, stddev (sample, n-1), p10, p90, min, max, cv and
// the CI fields from `seconds`. warmup_steps and stop_reason are left for the
// caller. All statistics are 0 for an empty input; with one sample stddev, cv
// and the CI are 0.
v1::StepStats ComputeStepStats(const std::vector<double>& seconds);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_STEP_STATS_H_
