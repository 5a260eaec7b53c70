#include "server/analysis/change_points.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <utility>

#include "boost/math/distributions/normal.hpp"

namespace paradnn::server::analysis {
namespace {

// Past this product of the sample sizes the Mann-Whitney distribution is
// taken as normal; below it the exact counts cost at most ~160k additions.
constexpr size_t kMaxExactPairs = 400;

// Chi-square with 1 degree of freedom, 95 %: how much log-likelihood (x 2)
// moving a change onto a label boundary may cost.
constexpr double kLikelihoodSlack = 3.841458820694124;

// The MAD of normal data times this estimates its standard deviation.
constexpr double kMadToSd = 1.482602218505602;

double MedianOf(std::vector<double> values) {
  const size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + n / 2, values.end());
  const double upper = values[n / 2];
  if (n % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + n / 2) + upper) / 2;
}

// The k-th smallest (0-based) of `values`, which it reorders.
double OrderStatistic(std::vector<double>& values, size_t k) {
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[k];
}

// Boost.Math has no Mann-Whitney (Wilcoxon rank-sum) distribution, hence
// these counts. How many of the C(m + n, m) orderings of m "before" and n "after" values
// have U = u pairs with the after value above, for u = 0..mn. Built by
// placing the largest value last: an after value there beats all m before
// values, f(m, n)[u] = f(m, n - 1)[u - m] + f(m - 1, n)[u].
std::vector<double> MannWhitneyCounts(size_t m, size_t n) {
  std::vector<std::vector<double>> by_before(m + 1, std::vector<double>{1});
  for (size_t j = 1; j <= n; ++j) {
    // by_before[i] holds f(i, j - 1); turn it into f(i, j), i ascending.
    for (size_t i = 1; i <= m; ++i) {
      std::vector<double> next(i * j + 1, 0.0);
      const std::vector<double>& shifted = by_before[i];  // f(i, j - 1), shifted by i
      for (size_t u = 0; u < shifted.size(); ++u) next[u + i] += shifted[u];
      const std::vector<double>& fewer = by_before[i - 1];  // f(i - 1, j), already updated
      for (size_t u = 0; u < fewer.size(); ++u) next[u] += fewer[u];
      by_before[i] = std::move(next);
    }
  }
  return by_before[m];
}

// The 1-based rank k of the order statistic that bounds the interval from
// below: the largest k with P(U <= k - 1) <= (1 - level) / 2; 1 when even
// k = 1 exceeds it (samples too small for the level).
size_t LowerOrderRank(size_t m, size_t n, double level) {
  const double tail = (1 - level) / 2;
  const size_t pairs = m * n;
  if (pairs <= kMaxExactPairs) {
    const std::vector<double> counts = MannWhitneyCounts(m, n);
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    size_t k = 1;
    double below = counts[0];  // P(U <= k - 1) x total
    while (k < pairs && (below + counts[k]) / total <= tail) below += counts[k++];
    return below / total <= tail ? k : 1;
  }
  const double sd = std::sqrt(static_cast<double>(pairs) * static_cast<double>(m + n + 1) / 12);
  const double z = boost::math::quantile(boost::math::complement(boost::math::normal(), tail));
  const double k = std::floor(static_cast<double>(pairs) / 2 + 0.5 - z * sd);
  return static_cast<size_t>(std::clamp(k, 1.0, std::floor((static_cast<double>(pairs) + 1) / 2)));
}

// Mid-ranks (1-based) of `values`: ties share the mean of their ranks.
std::vector<double> MidRanks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    const double mid = static_cast<double>(start + end + 1) / 2;
    for (size_t i = start; i < end; ++i) ranks[order[i]] = mid;
    start = end;
  }
  return ranks;
}

// The best split of a segment by its ranks: the left part's size and its
// standardized rank-sum statistic (> 0: the left part is higher).
struct RankSplit {
  size_t left = 0;
  double z = 0;
};

// The split with the largest |Z_t| over left sizes t in [min_side,
// n - min_side]; z = 0 when there is none.
RankSplit BestSplit(const std::vector<double>& ranks, size_t min_side) {
  const size_t n = ranks.size();
  const double mean_rank = static_cast<double>(n + 1) / 2;
  RankSplit best;
  double rank_sum = 0;
  for (size_t t = 1; t + min_side <= n; ++t) {
    rank_sum += ranks[t - 1];
    if (t < min_side) continue;
    const double td = static_cast<double>(t), right = static_cast<double>(n - t);
    const double z = (rank_sum - td * mean_rank) / std::sqrt(td * right * (n + 1) / 12.0);
    if (std::fabs(z) > std::fabs(best.z)) best = {t, z};
  }
  return best;
}

// The run of 1 to `max_length` consecutive points whose ranks stand out
// most from the rest (largest |standardized rank sum|), as [begin, end);
// empty when max_length is 0.
std::pair<size_t, size_t> MostExtremeShortBlock(const std::vector<double>& ranks,
                                                size_t max_length) {
  const size_t n = ranks.size();
  std::vector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + ranks[i];
  std::pair<size_t, size_t> best = {0, 0};
  double best_z = 0;
  for (size_t length = 1; length <= max_length && length < n; ++length) {
    const double m = static_cast<double>(length), rest = static_cast<double>(n - length);
    const double sd = std::sqrt(m * rest * static_cast<double>(n + 1) / 12);
    for (size_t begin = 0; begin + length <= n; ++begin) {
      const double sum = prefix[begin + length] - prefix[begin];
      const double z = std::fabs(sum - m * static_cast<double>(n + 1) / 2) / sd;
      if (z > best_z) {
        best_z = z;
        best = {begin, begin + length};
      }
    }
  }
  return best;
}

// `block` grown over its neighbours that lie closer to the block's median
// than to the median of the rest: a short block may be the visible part of
// a level that lasts k points or more.
std::pair<size_t, size_t> ExtendRun(const std::vector<double>& logs,
                                    std::pair<size_t, size_t> block) {
  auto [begin, end] = block;
  if (end <= begin || end - begin >= logs.size()) return block;
  const double block_level =
      MedianOf(std::vector<double>(logs.begin() + begin, logs.begin() + end));
  std::vector<double> rest(logs.begin(), logs.begin() + begin);
  rest.insert(rest.end(), logs.begin() + end, logs.end());
  const double rest_level = MedianOf(rest);
  const auto alike = [&](size_t i) {
    return std::fabs(logs[i] - block_level) < std::fabs(logs[i] - rest_level);
  };
  while (begin > 0 && alike(begin - 1)) --begin;
  while (end < logs.size() && alike(end)) ++end;
  return {begin, end};
}

// Fisher-Yates on the raw output of mt19937_64, whose sequence the C++
// standard fixes; std::shuffle and the standard distributions are left to
// each library, and the same seed must give the same answer everywhere.
void ShuffleRanks(std::vector<double>& values, std::mt19937_64& random) {
  for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[random() % i]);
}

// SplitMix64's finalizer: turns (seed, segment) into unrelated streams.
uint64_t MixSeed(uint64_t seed, uint64_t salt) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (salt + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The share of reorderings of `ranks` whose best |Z| reaches `observed`
// ((hits + 1) / (draws + 1), never 0). Stops early once the p-value cannot
// come out at or under `significance`: most segments hold no change, and
// their exact p-value is never reported.
double PermutationPValue(std::vector<double> ranks, size_t min_side, double observed,
                         const ChangePointOptions& options, uint64_t salt) {
  std::mt19937_64 random(MixSeed(options.seed, salt));
  const double limit = options.significance * (options.permutations + 1);
  int hits = 0;
  for (int draw = 0; draw < options.permutations; ++draw) {
    ShuffleRanks(ranks, random);
    // A relative tolerance so that reorderings tying the observed split
    // count as reaching it despite rounding.
    if (std::fabs(BestSplit(ranks, min_side).z) >= observed * (1 - 1e-12)) ++hits;
    if (hits + 1 > limit) return static_cast<double>(hits + 1) / (draw + 2);
  }
  return static_cast<double>(hits + 1) / (options.permutations + 1);
}

// Cost (x 2 log-likelihood, Gaussian on the log step times, levels at the
// sides' medians and spread from the pooled MAD) of moving a change from
// left size `from` to `to`: the points between change level.
double MoveCost(const std::vector<double>& logs, size_t from, size_t to) {
  const std::vector<double> left(logs.begin(), logs.begin() + from);
  const std::vector<double> right(logs.begin() + from, logs.end());
  const double left_level = MedianOf(left), right_level = MedianOf(right);
  std::vector<double> deviations;
  deviations.reserve(logs.size());
  for (size_t i = 0; i < logs.size(); ++i) {
    deviations.push_back(std::fabs(logs[i] - (i < from ? left_level : right_level)));
  }
  const double sd = std::max(kMadToSd * MedianOf(deviations), 1e-12);
  double cost = 0;
  for (size_t i = std::min(from, to); i < std::max(from, to); ++i) {
    const double stays = i < from ? left_level : right_level;
    const double moves = i < from ? right_level : left_level;
    cost +=
        ((logs[i] - moves) * (logs[i] - moves) - (logs[i] - stays) * (logs[i] - stays)) / (sd * sd);
  }
  return cost;
}

// One change as the search records it, before its ratio is estimated.
struct FoundChange {
  size_t index = 0;
  double p_value = 1;
  std::string label_before;
  std::string label_after;
};

// Binary segmentation over the usable points of a series (see the header).
class Segmentation {
 public:
  Segmentation(const std::vector<SeriesPoint>& series, const std::vector<double>& logs,
               const ChangePointOptions& options)
      : series_(series), logs_(logs), options_(options) {}

  // Searches the segment made of the series indices `points` (ascending).
  void Search(std::vector<size_t> points);

  std::vector<FoundChange>& changes() { return changes_; }
  std::vector<size_t>& set_aside() { return set_aside_; }

 private:
  // A segment's best split and its permutation p-value.
  struct SegmentTest {
    RankSplit split;
    double p_value = 1;
  };
  SegmentTest TestSegment(const std::vector<double>& logs, size_t first_point) const;

  // The split to report: `best`, or a label boundary that explains the
  // segment about as well.
  size_t PreferLabelBoundary(const std::vector<size_t>& points, const std::vector<double>& logs,
                             size_t best) const;

  const std::vector<SeriesPoint>& series_;
  const std::vector<double>& logs_;
  const ChangePointOptions& options_;
  std::vector<FoundChange> changes_;
  std::vector<size_t> set_aside_;
};

void Segmentation::Search(std::vector<size_t> points) {
  const size_t k = std::max<size_t>(options_.min_points_each_side, 1);
  if (points.size() < 2 * k) return;
  std::vector<double> logs(points.size());
  for (size_t i = 0; i < points.size(); ++i) logs[i] = logs_[points[i]];
  const SegmentTest test = TestSegment(logs, points.front());
  if (test.p_value > options_.significance) return;
  // Persistence: evidence that rests on fewer than k consecutive points is
  // an excursion, however far those points lie. Take out the run that
  // stands out most (unless it is part of a level of k points or more); if
  // what is left holds no change, set the run aside.
  const auto [block_begin, block_end] =
      ExtendRun(logs, MostExtremeShortBlock(MidRanks(logs), k - 1));
  if (block_end > block_begin && block_end - block_begin < k) {
    std::vector<size_t> rest = points;
    rest.erase(rest.begin() + block_begin, rest.begin() + block_end);
    std::vector<double> rest_logs = logs;
    rest_logs.erase(rest_logs.begin() + block_begin, rest_logs.begin() + block_end);
    if (rest.size() < 2 * k ||
        TestSegment(rest_logs, rest.front()).p_value > options_.significance) {
      set_aside_.insert(set_aside_.end(), points.begin() + block_begin, points.begin() + block_end);
      return;
    }
  }
  const size_t split = PreferLabelBoundary(points, logs, test.split.left);
  changes_.push_back({points[split], test.p_value, series_[points[split - 1]].label,
                      series_[points[split]].label});
  Search(std::vector<size_t>(points.begin(), points.begin() + split));
  Search(std::vector<size_t>(points.begin() + split, points.end()));
}

Segmentation::SegmentTest Segmentation::TestSegment(const std::vector<double>& logs,
                                                    size_t first_point) const {
  const size_t k = std::max<size_t>(options_.min_points_each_side, 1);
  const std::vector<double> ranks = MidRanks(logs);
  SegmentTest test;
  test.split = BestSplit(ranks, k);
  // A stream of permutations of its own for each segment, fixed by where
  // it starts and how long it is.
  test.p_value = PermutationPValue(ranks, k, std::fabs(test.split.z), options_,
                                   first_point * 1'000'003ULL + logs.size());
  return test;
}

size_t Segmentation::PreferLabelBoundary(const std::vector<size_t>& points,
                                         const std::vector<double>& logs, size_t best) const {
  const size_t k = std::max<size_t>(options_.min_points_each_side, 1);
  size_t chosen = best;
  double chosen_cost = std::numeric_limits<double>::infinity();
  for (size_t t = k; t + k <= points.size(); ++t) {
    if (series_[points[t - 1]].label == series_[points[t]].label) continue;
    const double cost = MoveCost(logs, best, t);
    if (cost <= kLikelihoodSlack && cost < chosen_cost) {
      chosen = t;
      chosen_cost = cost;
    }
  }
  return chosen;
}

// The usable points of [begin, end): valid and not set aside.
std::vector<double> SegmentLogs(const std::vector<double>& logs, const std::vector<bool>& usable,
                                size_t begin, size_t end) {
  std::vector<double> out;
  for (size_t i = begin; i < end; ++i) {
    if (usable[i]) out.push_back(logs[i]);
  }
  return out;
}

}  // namespace

ShiftEstimate HodgesLehmannShift(const std::vector<double>& before,
                                 const std::vector<double>& after, double level) {
  std::vector<double> differences;
  differences.reserve(before.size() * after.size());
  for (double a : after) {
    for (double b : before) differences.push_back(a - b);
  }
  ShiftEstimate out;
  if (differences.empty()) return out;
  const size_t k = LowerOrderRank(before.size(), after.size(), level);
  out.low = OrderStatistic(differences, k - 1);
  out.high = OrderStatistic(differences, differences.size() - k);
  out.shift = MedianOf(differences);
  return out;
}

ChangePointAnalysis FindChangePoints(const std::vector<SeriesPoint>& series,
                                     const ChangePointOptions& options) {
  std::vector<double> logs(series.size(), 0.0);
  std::vector<bool> usable(series.size(), false);
  std::vector<size_t> points;
  for (size_t i = 0; i < series.size(); ++i) {
    const double step_time = series[i].step_time;
    if (!(step_time > 0) || !std::isfinite(step_time)) continue;
    logs[i] = std::log(step_time);
    usable[i] = true;
    points.push_back(i);
  }
  Segmentation segmentation(series, logs, options);
  segmentation.Search(std::move(points));

  ChangePointAnalysis out;
  out.set_aside = std::move(segmentation.set_aside());
  std::sort(out.set_aside.begin(), out.set_aside.end());
  for (size_t i : out.set_aside) usable[i] = false;
  std::vector<FoundChange>& found = segmentation.changes();
  std::sort(found.begin(), found.end(),
            [](const FoundChange& a, const FoundChange& b) { return a.index < b.index; });
  for (size_t j = 0; j < found.size(); ++j) {
    ChangePoint& change = out.change_points.emplace_back();
    change.index = found[j].index;
    change.p_value = found[j].p_value;
    change.label_before = found[j].label_before;
    change.label_after = found[j].label_after;
    change.at_label_boundary = change.label_before != change.label_after;
    change.before_begin = j == 0 ? 0 : found[j - 1].index;
    change.after_end = j + 1 == found.size() ? series.size() : found[j + 1].index;
    const ShiftEstimate shift = HodgesLehmannShift(
        SegmentLogs(logs, usable, change.before_begin, change.index),
        SegmentLogs(logs, usable, change.index, change.after_end), options.interval_level);
    change.ratio = std::exp(shift.shift);
    change.low = std::exp(shift.low);
    change.high = std::exp(shift.high);
  }
  return out;
}

}  // namespace paradnn::server::analysis
