#include "worker/runner/stop_rule.h"

#include <algorithm>
#include <cmath>

#include "worker/runner/step_stats.h"

namespace paradnn::runner {

WarmupRule::WarmupRule(int warmup_steps, double max_seconds)
    : warmup_steps_(std::max(1, warmup_steps)),
      max_steps_(3 * std::max(1, warmup_steps) + kExtraSteps),
      max_seconds_(max_seconds) {}

bool WarmupRule::Add(double step_seconds) {
  seconds_.push_back(step_seconds);
  elapsed_ += step_seconds;
  const int n = steps();
  if (n < warmup_steps_) return false;
  if (n >= max_steps_) return true;
  if (max_seconds_ > 0 && elapsed_ >= max_seconds_) return true;
  return step_seconds <= kSettleRatio * median_seconds();
}

double WarmupRule::median_seconds() const {
  if (seconds_.empty()) return 0;
  std::vector<double> sorted = seconds_;
  std::sort(sorted.begin(), sorted.end());
  return QuantileSorted(sorted, 0.5);
}

double WarmupRule::fastest_seconds() const {
  return seconds_.empty() ? 0 : *std::min_element(seconds_.begin(), seconds_.end());
}

int TimingBlockSteps(double step_seconds) {
  if (!(step_seconds > 0) || step_seconds >= kBlockBelowSeconds) return 1;
  return std::clamp(static_cast<int>(std::ceil(kBlockTargetSeconds / step_seconds)), 2,
                    kMaxBlockSteps);
}

int VoteEverySamples(double sample_seconds) {
  if (!(sample_seconds > 0)) return kMaxVoteEverySamples;
  const double samples = std::floor(kVoteIntervalSeconds / sample_seconds);
  return samples >= kMaxVoteEverySamples ? kMaxVoteEverySamples
                                         : std::max(1, static_cast<int>(samples));
}

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kNone:
      return "";
    case StopReason::kCi:
      return "ci";
    case StopReason::kMaxSeconds:
      return "max_seconds";
    case StopReason::kMaxSteps:
      return "max_steps";
  }
  return "";
}

TimingStopRule::TimingStopRule(double ci, double max_seconds, int min_steps, int max_steps)
    : ci_(ci),
      max_seconds_(max_seconds),
      min_steps_(std::max(2, min_steps)),
      max_steps_(std::max(2, max_steps)) {}

double TimingStopRule::lag1() const {
  // sum_{i>=1} (y[i] - c)(y[i-1] - c) with c the mean of y, expanded: as
  // y[0] = 0, sum_{i>=1} y[i] = S and sum_{i<n-1} y[i] = S - y[n-1].
  const double c = mean_ - first_;
  const double lagged_sum =
      shifted_lagged_products_ - c * (2 * shifted_sum_ - last_shifted_) + (n_ - 1) * c * c;
  return Lag1Autocorrelation(lagged_sum, m2_, n_);
}

double TimingStopRule::ci_rel() const {
  if (n_ < 2 || mean_ <= 0) return 0;
  const double stddev = std::sqrt(m2_ / (n_ - 1));
  return Ci95HalfWidthCorrelated(stddev, n_, lag1()) / mean_;
}

bool TimingStopRule::Add(double step_seconds, int block) {
  if (reason_ != StopReason::kNone) return true;
  if (n_ == 0) first_ = step_seconds;
  const double shifted = step_seconds - first_;
  if (n_ > 0) shifted_lagged_products_ += shifted * last_shifted_;
  shifted_sum_ += shifted;
  last_shifted_ = shifted;
  ++n_;
  elapsed_ += step_seconds * std::max(1, block);
  const double delta = step_seconds - mean_;
  mean_ += delta / n_;
  m2_ += delta * (step_seconds - mean_);
  if (n_ >= min_steps_ && ci_rel() <= ci_) {
    reason_ = StopReason::kCi;
  } else if ((n_ >= min_steps_ && elapsed_ >= max_seconds_) ||
             (n_ >= 2 && elapsed_ >= hard_limit_seconds_)) {
    reason_ = StopReason::kMaxSeconds;
  } else if (n_ >= max_steps_) {
    reason_ = StopReason::kMaxSteps;
  }
  return reason_ != StopReason::kNone;
}

}  // namespace paradnn::runner
