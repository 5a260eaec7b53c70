"""Warm-up, timing-block and stopping rules and step statistics: a faithful
port of worker/runner/stop_rule.{h,cc} and step_stats.{h,cc} (docs/
measurement.md). Clock-free: both rules are fed step durations."""
import math

# t_{0.975, df} for df = 1..30 (step_stats.cc kTSmall).
_T_SMALL = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
            2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
            2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423)
_T_LARGE = ((30, 2.0423), (40, 2.0211), (50, 2.0086), (60, 2.0003), (80, 1.9901),
            (100, 1.9840), (120, 1.9799), (1000, 1.9623))
_NORMAL_975 = 1.959964

SETTLE_RATIO = 1.5
EXTRA_WARMUP_STEPS = 3
BLOCK_BELOW_SECONDS = 1e-3
BLOCK_TARGET_SECONDS = 5e-3
MAX_BLOCK_STEPS = 256


def quantile_sorted(values, q):
    """numpy's default (type 7) quantile of an ascending, non-empty list."""
    if not values:
        return 0.0
    q = min(max(q, 0.0), 1.0)
    pos = q * (len(values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def student_t95(df):
    if df < 1:
        df = 1
    if df <= 30:
        return _T_SMALL[df - 1]
    for i in range(1, len(_T_LARGE)):
        if df <= _T_LARGE[i][0]:
            df0, t0 = _T_LARGE[i - 1]
            df1, t1 = _T_LARGE[i]
            x, x0, x1 = 1.0 / df, 1.0 / df0, 1.0 / df1
            return t0 + (t1 - t0) * (x - x0) / (x1 - x0)
    df0, t0 = _T_LARGE[-1]
    x, x0 = 1.0 / df, 1.0 / df0
    return _NORMAL_975 + (t0 - _NORMAL_975) * x / x0


def ci95_half_width(stddev, n):
    if n < 2:
        return 0.0
    return student_t95(n - 1) * stddev / math.sqrt(n)


def compute_step_stats(seconds):
    """The StepStats fields (except warmup_steps, stop_reason, block_steps) as
    a dict, from the timed samples."""
    n = len(seconds)
    out = dict(steps=n, median_s=0.0, mean_s=0.0, stddev_s=0.0, p10_s=0.0, p90_s=0.0,
               min_s=0.0, max_s=0.0, cv=0.0, ci95_half_width_s=0.0, ci95_rel=0.0)
    if n == 0:
        return out
    s = sorted(seconds)
    total = 0.0
    for x in seconds:
        total += x
    mean = total / n
    m2 = 0.0
    for x in seconds:
        m2 += (x - mean) * (x - mean)
    stddev = math.sqrt(m2 / (n - 1)) if n > 1 else 0.0
    half = ci95_half_width(stddev, n)
    out.update(median_s=quantile_sorted(s, 0.5), mean_s=mean, stddev_s=stddev,
               p10_s=quantile_sorted(s, 0.1), p90_s=quantile_sorted(s, 0.9),
               min_s=s[0], max_s=s[-1], cv=stddev / mean if mean > 0 else 0.0,
               ci95_half_width_s=half, ci95_rel=half / mean if mean > 0 else 0.0)
    return out


class WarmupRule:
    """At least `warmup_steps` steps; then warm-up continues while the last
    step is slower than SETTLE_RATIO x the median of all warm-up steps so
    far, up to 3 * warmup_steps + EXTRA_WARMUP_STEPS steps, and never past
    `max_seconds` of warm-up once the required steps are done."""

    def __init__(self, warmup_steps, max_seconds):
        self.warmup_steps = max(1, warmup_steps)
        self.max_steps = 3 * self.warmup_steps + EXTRA_WARMUP_STEPS
        self.max_seconds = max_seconds
        self.elapsed_seconds = 0.0
        self.seconds = []

    @property
    def steps(self):
        return len(self.seconds)

    def add(self, step_seconds):
        """Records one warm-up step; True when warm-up is over."""
        self.seconds.append(step_seconds)
        self.elapsed_seconds += step_seconds
        n = self.steps
        if n < self.warmup_steps:
            return False
        if n >= self.max_steps:
            return True
        if self.max_seconds > 0 and self.elapsed_seconds >= self.max_seconds:
            return True
        return step_seconds <= SETTLE_RATIO * self.median_seconds()

    def median_seconds(self):
        if not self.seconds:
            return 0.0
        return quantile_sorted(sorted(self.seconds), 0.5)

    def fastest_seconds(self):
        """The fastest warm-up step: what sizes timing blocks (stall-free,
        so that a warm-up with stalls does not switch a job from block means
        to single-step medians; stop_rule.h)."""
        return min(self.seconds) if self.seconds else 0.0


def timing_block_steps(step_seconds):
    """Steps per timed sample for steps of the fastest warm-up step."""
    if not (step_seconds > 0) or step_seconds >= BLOCK_BELOW_SECONDS:
        return 1
    return min(max(int(math.ceil(BLOCK_TARGET_SECONDS / step_seconds)), 2),
               MAX_BLOCK_STEPS)


def block_steps_for(warmup_fastest, max_steps, min_steps):
    """The block size trainer.cc uses: blocks shrink so that max_steps bounds
    the steps executed and min_steps samples still fit."""
    return max(1, min(timing_block_steps(warmup_fastest), max_steps // max(2, min_steps)))


class TimingStopRule:
    """Timing stops at the first step after which
      1. steps >= max(min_steps, 2) and ci95_half_width / mean <= ci -> "ci";
      2. steps >= 2 and the seconds the samples took (blocks whole) >= max_seconds
                                                                       -> "max_seconds";
      3. steps >= max_steps                                           -> "max_steps".
    Mean and variance kept incrementally (Welford), as stop_rule.cc."""

    def __init__(self, ci, max_seconds, min_steps, max_steps):
        self.ci = ci
        self.max_seconds = max_seconds
        self.min_steps = max(2, min_steps)
        self.max_steps = max(2, max_steps)
        self.steps = 0
        self.mean = 0.0
        self._m2 = 0.0
        self.elapsed_seconds = 0.0
        self.reason = ""

    def ci_rel(self):
        if self.steps < 2 or self.mean <= 0:
            return 0.0
        stddev = math.sqrt(self._m2 / (self.steps - 1))
        return ci95_half_width(stddev, self.steps) / self.mean

    def add(self, step_seconds, block=1):
        """Records one timed sample of `block` steps of `step_seconds` each;
        True when timing should stop. max_seconds counts the block's every
        step, so that it bounds the time timing takes."""
        if self.reason:
            return True
        self.steps += 1
        self.elapsed_seconds += step_seconds * max(1, block)
        delta = step_seconds - self.mean
        self.mean += delta / self.steps
        self._m2 += delta * (step_seconds - self.mean)
        if self.steps >= self.min_steps and self.ci_rel() <= self.ci:
            self.reason = "ci"
        elif self.steps >= 2 and self.elapsed_seconds >= self.max_seconds:
            self.reason = "max_seconds"
        elif self.steps >= self.max_steps:
            self.reason = "max_steps"
        return bool(self.reason)
