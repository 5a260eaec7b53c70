// The statistics of a comparison (issue 37, "a verdict on every
// comparison"): how much slower or faster B is than A for one
// configuration, with a 95 % interval that holds when the host drifts
// between runs, a p-value for "no difference", and the verdict across many
// configurations with the false discovery rate controlled
// (Benjamini-Hochberg). Pure functions; thread-compatible.
//
// Step times are compared as logs: a ratio's interval is symmetric there,
// and a host that is 20 % slower for a while slows every step time by the
// same factor, whatever its size.
#ifndef PARADNN_SERVER_ANALYSIS_COMPARISON_STATS_H_
#define PARADNN_SERVER_ANALYSIS_COMPARISON_STATS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace paradnn::server::analysis {

// One repeat round of one configuration: the step times (medians of runs)
// of A and of B measured in it, close in time. Drift the two sides of a
// round share cancels in their ratio; drift between rounds shows in the
// spread of the per-round ratios.
struct ComparisonRound {
  std::vector<double> a;
  std::vector<double> b;
};

// B's step time over A's (> 1: B is slower), with its interval.
struct RatioEstimate {
  double ratio = 0;
  double low = 0;
  double high = 0;
  double p_value = 1;  // for "the ratio is 1"; 1 without data
  // The rounds with both sides measured (paired), or the runs of each side
  // (unpaired), the interval rests on.
  size_t paired_rounds = 0;
  size_t runs_a = 0;
  size_t runs_b = 0;
  // How the interval was made: "paired rounds" (or "paired rounds, pooled
  // spread", with a SpreadPrior), "unpaired runs",
  // "re-run model" (one run a side: the host's re-run spread stands in for
  // the missing repeats), or "" (not enough data).
  std::string basis;
};

// The spread of one configuration's per-round log ratios (each round's mean
// log B minus mean log A): their sample variance and its degrees of freedom
// (paired rounds - 1, 0 with fewer than 2), and the configuration's level
// (the mean log step time of A), what the spread may depend on.
struct RoundSpread {
  double variance = 0;
  double degrees_of_freedom = 0;
  double log_level = 0;
};

RoundSpread PairedRoundSpread(const std::vector<ComparisonRound>& rounds);

// The same of one sample, e.g. one configuration's repeats: the variance of
// the logs of its positive values (n - 1 degrees of freedom, 0 with fewer
// than 2) and their mean as the level (0 without any).
RoundSpread LogSpread(const std::vector<double>& values);

// What many configurations' spreads say about any one's: an empirical-Bayes
// prior (Smyth 2004, "Linear models and empirical Bayes methods for
// assessing differential expression", limma's eBayes with trend = TRUE).
// The configurations' true variances are taken as scaled inverse chi-square
// around a prior variance that may trend with the level; the prior's
// degrees of freedom say how closely they agree. A sweep affords 3-5
// rounds, so one configuration's own spread rests on 2-4 degrees of
// freedom (a t quantile of 4.3 at 2) and a 1.3x change goes unseen half
// the time; the moderated spread borrows the others' as far as they agree.
struct SpreadPrior {
  // The prior variance at a level: exp(intercept + slope x log_level).
  double intercept = 0;
  double slope = 0;
  // 0: no prior (too few spreads); infinite: the spreads differ no more
  // than their sampling noise, so they are pooled.
  double degrees_of_freedom = 0;
  // The spreads' degrees of freedom together: no configuration's
  // moderated spread claims more.
  double total_degrees_of_freedom = 0;
  // How many spreads the prior was fitted from.
  size_t spreads = 0;

  bool empty() const { return degrees_of_freedom == 0; }
  double VarianceAt(double log_level) const;
};

// The prior from `spreads` (those with degrees of freedom > 0 count): none
// from fewer than kMinSpreadsForPrior; a trend in the level from at least
// kMinSpreadsForTrend whose levels span a factor of 2 or more.
inline constexpr size_t kMinSpreadsForPrior = 3;
inline constexpr size_t kMinSpreadsForTrend = 8;
SpreadPrior FitSpreadPrior(const std::vector<RoundSpread>& spreads);

// `spread` moderated by `prior`: variance (d0 s0^2 + d s^2) / (d0 + d) at
// its level, on d0 + d degrees of freedom (at most the prior's total, never
// fewer than its own); `spread` itself when the prior is empty or it has
// no degrees of freedom.
RoundSpread Moderate(const SpreadPrior& prior, const RoundSpread& spread);

// The ratio from repeat rounds. With at least 2 rounds holding both sides:
// a t interval on the per-round log ratios (each round's mean log B minus
// mean log A), blocked by round so that drift cannot fake significance;
// with a non-empty `prior`, on the moderated spread, (d0 s0^2 + d s^2) /
// (d0 + d) with d0 + d degrees of freedom (at most the prior's total), and
// basis "paired rounds, pooled spread".
// A t interval rather than a bootstrap: with the 3-5 rounds a sweep can
// afford, a percentile bootstrap of so few blocks covers well under its
// nominal 95 % (the simulation in comparison_stats_test.cc prints both),
// while the t interval is exact for normal log ratios and close for the
// skewed ones step times give. Otherwise, with at least 2 runs a side
// overall: Welch's t on the log step times (unpaired). Otherwise, with a
// run a side and `rerun_rel_sd` > 0 (the host's re-run spread of one step
// time, as a relative standard deviation): a normal interval of width
// sqrt(2) x rerun_rel_sd in log terms. Otherwise basis "" and p-value 1.
// Non-positive step times are ignored.
RatioEstimate EstimateRatio(const std::vector<ComparisonRound>& rounds, double rerun_rel_sd,
                            double level = 0.95, const SpreadPrior& prior = {});

// Benjamini-Hochberg adjusted p-values (q-values) of `p_values`, same
// order: a configuration is a discovery at false discovery rate q when its
// adjusted p-value is at most q.
std::vector<double> BenjaminiHochberg(const std::vector<double>& p_values);

enum class Verdict { kFaster, kSlower, kNoDifference, kNotEnoughData };

// "faster", "slower", "no difference detected", "not enough data".
const char* VerdictName(Verdict verdict);

// B against A for one configuration: not enough data without a basis; a
// difference when its adjusted p-value is at most `fdr` and its interval
// excludes 1 (faster when B's step time is lower); else no difference
// detected.
Verdict Judge(const RatioEstimate& estimate, double adjusted_p_value, double fdr = 0.05);

// One comparison (B against A, time-like values) among several judged
// together: its runs by round, the re-run spread standing in for a side
// measured once (EstimateRatio), and whether a side is a prediction.
struct PairRounds {
  std::vector<ComparisonRound> rounds;
  double rerun_rel_sd = 0;
  bool predicted = false;
};

struct JudgedPair {
  RatioEstimate estimate;  // empty (no basis) for a predicted pair
  double p_value = 1;
  double q_value = 1;
  Verdict verdict = Verdict::kNotEnoughData;
};

// Each pair's 95 % ratio estimate, its spread moderated by the measured
// pairs' (FitSpreadPrior: one configuration's 2-4 rounds say little about
// its spread, the others' say more), Benjamini-Hochberg across the pairs
// and the verdict at `fdr`; same order. What `paradnn compare` and the
// tuning analysis judge by.
std::vector<JudgedPair> JudgePairs(const std::vector<PairRounds>& pairs, double fdr);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_COMPARISON_STATS_H_
