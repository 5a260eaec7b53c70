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
  // How the interval was made: "paired rounds", "unpaired runs",
  // "re-run model" (one run a side: the host's re-run spread stands in for
  // the missing repeats), or "" (not enough data).
  std::string basis;
};

// The ratio from repeat rounds. With at least 2 rounds holding both sides:
// a t interval on the per-round log ratios (each round's mean log B minus
// mean log A), blocked by round so that drift cannot fake significance.
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
                            double level = 0.95);

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

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_COMPARISON_STATS_H_
