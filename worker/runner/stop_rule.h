// When warm-up ends and when timing stops. Torch-free and clock-free: both
// rules are fed step durations, so tests drive them with synthetic streams.
#ifndef PARADNN_WORKER_RUNNER_STOP_RULE_H_
#define PARADNN_WORKER_RUNNER_STOP_RULE_H_

#include <string>
#include <vector>

namespace paradnn::runner {

// Warm-up: at least `warmup_steps` steps; after those, warm-up continues while
// the last step is slower than kSettleRatio x the median of all warm-up steps
// so far (caches, allocator pools and oneDNN primitives still settling), up
// to max_steps() = 3 * warmup_steps + kExtraSteps steps, and never past
// `max_seconds` of warm-up once the required steps are done.
class WarmupRule {
 public:
  static constexpr double kSettleRatio = 1.5;
  static constexpr int kExtraSteps = 3;

  WarmupRule(int warmup_steps, double max_seconds);

  // Records one warm-up step; returns true when warm-up is over (the step
  // just recorded is the last warm-up step).
  bool Add(double step_seconds);

  int steps() const { return static_cast<int>(seconds_.size()); }
  int max_steps() const { return max_steps_; }
  double elapsed_seconds() const { return elapsed_; }
  // The median warm-up step (0 before the first): what the timed steps are
  // expected to take.
  double median_seconds() const;
  // The fastest warm-up step (0 before the first): what sizes timing blocks
  // (TimingBlockSteps). Not the median: where a few steps stall (an idle
  // vCPU that halts wakes up to a tick late), a warm-up of three steps with
  // two stalls had a median of 1 ms or more, so the job timed single steps
  // and reported their median, which leaves the stalls out; the next run of
  // the same job, warmed up without stalls, timed blocks, whose means keep
  // them in. 4 KiB all-reduces read 0.15 ms one way and 1.2 ms the other.
  double fastest_seconds() const;

 private:
  int warmup_steps_;
  int max_steps_;
  double max_seconds_;
  double elapsed_ = 0;
  std::vector<double> seconds_;
};

// Steps shorter than kBlockBelowSeconds are timed in blocks of consecutive
// steps lasting about kBlockTargetSeconds (at most kMaxBlockSteps steps), so
// that reading the clock and syncing the device once per sample stay
// negligible against what is measured.
inline constexpr double kBlockBelowSeconds = 1e-3;
inline constexpr double kBlockTargetSeconds = 5e-3;
inline constexpr int kMaxBlockSteps = 256;

// Steps per timed sample for steps of `step_seconds` (the fastest warm-up
// step): 1 at or above kBlockBelowSeconds (and for 0 or NaN), else
// ceil(kBlockTargetSeconds / step_seconds) within [2, kMaxBlockSteps].
int TimingBlockSteps(double step_seconds);

// A gang's ranks learn rank 0's stopping decision through a collective, and
// a collective between two samples disturbs the sample after it: on a
// 2-vCPU host whose vCPUs were kept from halting, a 1 MiB Gloo all-reduce
// that follows a one-element one took 2.3-3.8 ms (median of 50) instead of
// 0.5-0.8 ms (docs/measurement.md, "Data parallelism"). So a gang votes only
// every VoteEverySamples samples, about every kVoteIntervalSeconds of
// timing, and the samples right after a vote stay a small minority.
inline constexpr double kVoteIntervalSeconds = 0.05;
inline constexpr int kMaxVoteEverySamples = 32;

// Samples between a gang's votes for samples of `sample_seconds` (the
// warm-up median times the block): floor(kVoteIntervalSeconds / it) within
// [1, kMaxVoteEverySamples]; kMaxVoteEverySamples for 0 or NaN.
int VoteEverySamples(double sample_seconds);

// Why timing stopped.
enum class StopReason {
  kNone,        // still running
  kCi,          // 95 % CI half-width / mean <= target after min_steps
  kMaxSeconds,  // the timed steps used the time budget
  kMaxSteps,    // max_steps timed steps
};

// "ci", "max_seconds", "max_steps" ("" for kNone), as StepStats.stop_reason.
const char* StopReasonName(StopReason reason);

// Timing stops at the first step after which
//   1. steps >= max(min_steps, 2) and ci95_half_width / mean <= ci  -> "ci";
//   2. steps >= max(min_steps, 2) and the seconds the timed samples took
//      (blocks whole) >= max_seconds                                -> "max_seconds";
//   3. steps >= max_steps                                           -> "max_steps".
// Checked in that order, so a step that meets several bounds reports the
// first. min_steps (at least two: a single sample has no spread) are always
// taken, even past max_seconds: a median of fewer is no measurement.
// Mean and variance are kept incrementally (Welford), so each Add is O(1).
class TimingStopRule {
 public:
  // Arguments as in effective RunSettings (defaults applied, validated).
  TimingStopRule(double ci, double max_seconds, int min_steps, int max_steps);

  // Records one timed sample of `block` steps, `step_seconds` each (its
  // time / block); returns true when timing should stop. The CI is over
  // samples; max_seconds and the hard limit count the block's every step,
  // so that they bound the time timing takes.
  bool Add(double step_seconds, int block = 1);

  // A bound above every other: once the timed steps have used this many
  // seconds (after two), timing stops ("max_seconds") even short of
  // min_steps, so that a job of very long steps ends before the worker's
  // deadline kills it. Infinite by default.
  void set_hard_limit_seconds(double seconds) { hard_limit_seconds_ = seconds; }

  StopReason reason() const { return reason_; }
  int steps() const { return n_; }
  double elapsed_seconds() const { return elapsed_; }
  double mean() const { return mean_; }
  // Relative half-width of the 95 % CI of the mean so far, allowing for
  // correlated samples (Ci95HalfWidthCorrelated; 0 below 2 steps).
  double ci_rel() const;
  // Lag-1 autocorrelation of the samples so far (as ComputeStepStats).
  double lag1() const;

 private:
  double ci_;
  double max_seconds_;
  double hard_limit_seconds_ = 1e300;
  int min_steps_;
  int max_steps_;
  int n_ = 0;
  double mean_ = 0;
  double m2_ = 0;
  // For the lag-1 autocorrelation in O(1) per step, over samples shifted by
  // the first (less cancellation): sums of y, of y[i] * y[i-1], and the
  // first and last y (y = x - x[0], so the first is 0).
  double first_ = 0;
  double shifted_sum_ = 0;
  double shifted_lagged_products_ = 0;
  double last_shifted_ = 0;
  double elapsed_ = 0;
  StopReason reason_ = StopReason::kNone;
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_STOP_RULE_H_
