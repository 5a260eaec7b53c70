#include "server/analysis/tuning_findings.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/analysis_metrics.h"
#include "server/analysis/analysis_math.h"
#include "server/analysis/comparison_stats.h"

namespace paradnn::server::analysis {
namespace {

constexpr char kTuningAgrees[] = "agrees";
constexpr char kTuningDisagrees[] = "disagrees";
constexpr char kTuningNoDifference[] = "no difference detected";
constexpr char kTuningNotMeasured[] = "not measured";

// One configuration while the response is built: indexes into its settings.
struct TuningSummary {
  const TuningConfigRuns* runs = nullptr;
  std::string unit;             // the metric's, for the checks' details
  std::vector<double> medians;  // per setting
  std::vector<size_t> order;    // settings, best first
  int32_t max_intra = 0;
  int best = -1;
  int one_pool = -1;    // the best with inter-op 1
  int pools = -1;       // the best with inter-op > 1
  int every_core = -1;  // the best with inter-op 1 and the largest intra-op count
  double pool_gain = 0;
  std::string pools_verdict;   // several pools against one pool
  std::string narrow_verdict;  // the best against every core in one pool
};

// A value that is lower when better: the metric itself, or a rate's inverse.
double TuningTimeLike(double value, bool lower_is_better) {
  return lower_is_better ? value : 1 / value;
}

// The runs of `a` and `b` by round name, time-like.
std::map<std::string, ComparisonRound> RoundsByName(const TuningSettingRuns& a,
                                                    const TuningSettingRuns& b,
                                                    bool lower_is_better) {
  std::map<std::string, ComparisonRound> by_round;
  for (const TuningRun& run : a.runs) {
    if (run.value > 0) by_round[run.round].a.push_back(TuningTimeLike(run.value, lower_is_better));
  }
  for (const TuningRun& run : b.runs) {
    if (run.value > 0) by_round[run.round].b.push_back(TuningTimeLike(run.value, lower_is_better));
  }
  return by_round;
}

// The rounds of `a` against `b` for EstimateRatio (B over A), time-like.
std::vector<ComparisonRound> TuningRounds(const TuningSettingRuns& a, const TuningSettingRuns& b,
                                          bool lower_is_better) {
  std::map<std::string, ComparisonRound> by_round = RoundsByName(a, b, lower_is_better);
  std::vector<ComparisonRound> rounds;
  rounds.reserve(by_round.size());
  for (auto& [round, pair] : by_round) rounds.push_back(std::move(pair));
  return rounds;
}

// The verdict on B against A of each pair, as `paradnn compare` judges a
// speedup's points (JudgePairs).
std::vector<std::string> JudgeTuningPairs(const std::vector<std::vector<ComparisonRound>>& pairs,
                                          double fdr) {
  std::vector<PairRounds> rounds;
  rounds.reserve(pairs.size());
  for (const std::vector<ComparisonRound>& pair : pairs) rounds.push_back({pair, 0, false});
  std::vector<std::string> verdicts;
  verdicts.reserve(pairs.size());
  for (const JudgedPair& judged : JudgePairs(rounds, fdr)) {
    verdicts.emplace_back(VerdictName(judged.verdict));
  }
  return verdicts;
}

// Medians, order and the bests of one configuration.
TuningSummary SummarizeTuningConfig(const TuningConfigRuns& runs, const std::string& unit,
                                    bool lower_is_better) {
  TuningSummary s;
  s.runs = &runs;
  s.unit = unit;
  for (const TuningSettingRuns& setting : runs.settings) {
    std::vector<double> values;
    values.reserve(setting.runs.size());
    for (const TuningRun& run : setting.runs) values.push_back(run.value);
    s.medians.push_back(Median(std::move(values)));
    s.max_intra = std::max(s.max_intra, setting.intra_op_threads);
  }
  s.order.resize(runs.settings.size());
  std::iota(s.order.begin(), s.order.end(), size_t{0});
  std::sort(s.order.begin(), s.order.end(), [&](size_t a, size_t b) {
    const double ta = TuningTimeLike(s.medians[a], lower_is_better);
    const double tb = TuningTimeLike(s.medians[b], lower_is_better);
    return std::tie(ta, runs.settings[a].setting) < std::tie(tb, runs.settings[b].setting);
  });
  for (size_t i : s.order) {
    const TuningSettingRuns& setting = runs.settings[i];
    const int index = static_cast<int>(i);
    if (s.best < 0) s.best = index;
    if (setting.inter_op_threads == 1 && s.one_pool < 0) s.one_pool = index;
    if (setting.inter_op_threads > 1 && s.pools < 0) s.pools = index;
    if (setting.inter_op_threads == 1 && setting.intra_op_threads == s.max_intra &&
        s.every_core < 0) {
      s.every_core = index;
    }
  }
  if (s.one_pool >= 0 && s.pools >= 0) {
    s.pool_gain = TuningTimeLike(s.medians[static_cast<size_t>(s.one_pool)], lower_is_better) /
                  TuningTimeLike(s.medians[static_cast<size_t>(s.pools)], lower_is_better);
  }
  return s;
}

// Whether the best setting of `s` ran in one pool on every core measured.
bool BestIsEveryCore(const TuningSummary& s) {
  const TuningSettingRuns& best = s.runs->settings[static_cast<size_t>(s.best)];
  return best.inter_op_threads == 1 && best.intra_op_threads == s.max_intra;
}

// The pools verdict of every configuration with both kinds of setting, and
// the narrow verdict of every narrow one whose best is not every core in
// one pool.
void JudgeTuningSummaries(std::vector<TuningSummary>* summaries, bool lower_is_better, double fdr) {
  std::vector<std::vector<ComparisonRound>> pools_pairs, narrow_pairs;
  std::vector<TuningSummary*> pools_of, narrow_of;
  for (TuningSummary& s : *summaries) {
    const std::vector<TuningSettingRuns>& settings = s.runs->settings;
    if (s.one_pool >= 0 && s.pools >= 0) {
      pools_pairs.push_back(TuningRounds(settings[static_cast<size_t>(s.one_pool)],
                                         settings[static_cast<size_t>(s.pools)], lower_is_better));
      pools_of.push_back(&s);
    }
    const bool narrow = s.runs->width.has_value() && *s.runs->width < kNarrowWidth;
    if (narrow && s.every_core >= 0 && !BestIsEveryCore(s)) {
      narrow_pairs.push_back(TuningRounds(settings[static_cast<size_t>(s.every_core)],
                                          settings[static_cast<size_t>(s.best)], lower_is_better));
      narrow_of.push_back(&s);
    }
  }
  const std::vector<std::string> pools = JudgeTuningPairs(pools_pairs, fdr);
  for (size_t i = 0; i < pools.size(); ++i) pools_of[i]->pools_verdict = pools[i];
  const std::vector<std::string> narrow = JudgeTuningPairs(narrow_pairs, fdr);
  for (size_t i = 0; i < narrow.size(); ++i) narrow_of[i]->narrow_verdict = narrow[i];
}

v1::TuningConfig TuningConfigOf(const TuningSummary& s) {
  const TuningConfigRuns& runs = *s.runs;
  v1::TuningConfig out;
  out.set_config(runs.config);
  out.set_family(runs.family);
  out.set_platform(runs.platform);
  if (runs.width.has_value()) out.set_width(*runs.width);
  out.set_max_intra_op_threads(s.max_intra);
  for (size_t i : s.order) {
    const TuningSettingRuns& setting = runs.settings[i];
    v1::TuningSetting* row = out.add_settings();
    row->set_setting(setting.setting);
    row->set_intra_op_threads(setting.intra_op_threads);
    row->set_inter_op_threads(setting.inter_op_threads);
    row->set_runs(static_cast<int32_t>(setting.runs.size()));
    row->set_value(s.medians[i]);
  }
  auto name = [&](int index) { return runs.settings[static_cast<size_t>(index)].setting; };
  auto value = [&](int index) { return s.medians[static_cast<size_t>(index)]; };
  out.set_best_setting(name(s.best));
  out.set_best_value(value(s.best));
  if (s.one_pool >= 0) {
    out.set_one_pool_setting(name(s.one_pool));
    out.set_one_pool_value(value(s.one_pool));
  }
  if (s.pools >= 0) {
    out.set_pools_setting(name(s.pools));
    out.set_pools_value(value(s.pools));
  }
  out.set_pool_gain(s.pool_gain);
  out.set_pools_verdict(s.pools_verdict);
  return out;
}

// "intra=2,inter=1 (intra-op 2, inter-op 1) at 0.0123 s".
std::string TuningSettingText(const TuningSummary& s, int index) {
  const TuningSettingRuns& setting = s.runs->settings[static_cast<size_t>(index)];
  return absl::StrFormat("%s (intra-op %d, inter-op %d) at %.4g%s%s", setting.setting,
                         setting.intra_op_threads, setting.inter_op_threads,
                         s.medians[static_cast<size_t>(index)], s.unit.empty() ? "" : " ", s.unit);
}

// A check's outcome from a verdict (VerdictName) judging the setting the
// finding is about: `agreeing` (if any) agrees with the paper,
// `disagreeing` disagrees, not enough data (or no verdict) is not measured,
// anything else no difference.
const char* CheckOutcome(const std::string& verdict, std::optional<Verdict> agreeing,
                         Verdict disagreeing) {
  if (agreeing.has_value() && verdict == VerdictName(*agreeing)) return kTuningAgrees;
  if (verdict == VerdictName(disagreeing)) return kTuningDisagrees;
  if (verdict.empty() || verdict == VerdictName(Verdict::kNotEnoughData)) {
    return kTuningNotMeasured;
  }
  return kTuningNoDifference;
}

// Narrow models train fastest with one pool and every core.
v1::TuningCheck NarrowCheck(const TuningSummary& s) {
  v1::TuningCheck check;
  check.set_config(s.runs->config);
  check.set_platform(s.runs->platform);
  if (s.every_core < 0) {
    check.set_outcome(kTuningNotMeasured);
    check.set_detail(absl::StrCat("no setting ran with one pool and every core measured (intra-op ",
                                  s.max_intra, ")"));
  } else if (BestIsEveryCore(s)) {
    check.set_outcome(kTuningAgrees);
    check.set_detail(absl::StrCat("best: ", TuningSettingText(s, s.best)));
  } else {
    const std::string versus =
        absl::StrCat("best ", TuningSettingText(s, s.best), " against one pool and every core ",
                     TuningSettingText(s, s.every_core), ": ");
    // The best setting faster than one pool and every core disagrees.
    check.set_outcome(CheckOutcome(s.narrow_verdict, std::nullopt, Verdict::kFaster));
    check.set_detail(absl::StrCat(versus, s.narrow_verdict));
  }
  return check;
}

// Wide models train fastest with several pools.
v1::TuningCheck WideCheck(const TuningSummary& s) {
  v1::TuningCheck check;
  check.set_config(s.runs->config);
  check.set_platform(s.runs->platform);
  if (s.one_pool < 0 || s.pools < 0) {
    check.set_outcome(kTuningNotMeasured);
    check.set_detail(s.pools < 0 ? "no setting ran with several pools"
                                 : "no setting ran with one pool");
    return check;
  }
  check.set_outcome(CheckOutcome(s.pools_verdict, Verdict::kFaster, Verdict::kSlower));
  check.set_detail(absl::StrFormat("several pools %s against one pool %s, gain %.2fx: %s",
                                   TuningSettingText(s, s.pools), TuningSettingText(s, s.one_pool),
                                   s.pool_gain, s.pools_verdict));
  return check;
}

// Per round, time-like: the best several pools' median over the best one
// pool's (below 1 where pools help).
std::map<std::string, double> PoolRatioByRound(const TuningSummary& s, bool lower_is_better) {
  std::map<std::string, double> ratio;
  for (const auto& [round, pair] :
       RoundsByName(s.runs->settings[static_cast<size_t>(s.one_pool)],
                    s.runs->settings[static_cast<size_t>(s.pools)], lower_is_better)) {
    if (!pair.a.empty() && !pair.b.empty()) ratio[round] = Median(pair.b) / Median(pair.a);
  }
  return ratio;
}

// Rounds for JudgePairs: A = the small batch's pool ratio, B = the large
// batch's, in the rounds both have. B "slower" (larger) than A is pools
// gaining more at the small batch: the paper's finding.
std::vector<ComparisonRound> BatchGainRounds(const TuningSummary& small, const TuningSummary& large,
                                             bool lower_is_better) {
  const std::map<std::string, double> a = PoolRatioByRound(small, lower_is_better);
  const std::map<std::string, double> b = PoolRatioByRound(large, lower_is_better);
  std::vector<ComparisonRound> rounds;
  for (const auto& [round, ratio] : a) {
    const auto it = b.find(round);
    if (it != b.end()) rounds.push_back({{ratio}, {it->second}});
  }
  return rounds;
}

// Small batches gain more from pools than large ones: the smallest and
// largest batch of one group, by `verdict` (JudgePairs on BatchGainRounds;
// "" where either batch lacks one-pool or several-pools results).
v1::TuningCheck BatchCheck(const TuningSummary& small, const TuningSummary& large,
                           const std::string& verdict) {
  v1::TuningCheck check;
  check.set_config(absl::StrCat(small.runs->batch_group, ", batch ", *small.runs->batch, " vs ",
                                *large.runs->batch));
  check.set_platform(small.runs->platform);
  if (small.pool_gain <= 0 || large.pool_gain <= 0) {
    check.set_outcome(kTuningNotMeasured);
    check.set_detail(
        absl::StrCat("needs one-pool and several-pools results at both batches; batch ",
                     *(small.pool_gain <= 0 ? small : large).runs->batch, " lacks them"));
    return check;
  }
  const std::string gains =
      absl::StrFormat("pool gain %.2fx at batch %d, %.2fx at batch %d", small.pool_gain,
                      *small.runs->batch, large.pool_gain, *large.runs->batch);
  // The large batch's ratio "slower" (larger) is pools gaining more at the
  // small batch: the paper's finding.
  check.set_outcome(CheckOutcome(verdict, Verdict::kSlower, Verdict::kFaster));
  check.set_detail(absl::StrCat(gains, "; the gains' ratio paired by round: ", verdict));
  return check;
}

// The text and key of each finding, in the response's order.
struct TuningFindingInfo {
  const char* key;
  const char* finding;
  const char* unit;  // what `applies` counts
};
constexpr TuningFindingInfo kNarrowFinding = {
    "narrow_one_pool", "narrow models train fastest with one pool and every core",
    "configurations"};
constexpr TuningFindingInfo kWideFinding = {
    "wide_pools", "wide models train fastest with several pools", "configurations"};
constexpr TuningFindingInfo kBatchFinding = {
    "small_batch_pools", "small batches gain more from pools than large ones", "batch groups"};

// Adds `check` to `family`'s row of `info` in `rows`.
void CountTuningCheck(const TuningFindingInfo& info, const std::string& family,
                      v1::TuningCheck check, std::map<std::string, v1::TuningFinding>* rows) {
  v1::TuningFinding& row = (*rows)[family];
  row.set_key(info.key);
  row.set_finding(info.finding);
  row.set_family(family);
  row.set_applies(row.applies() + 1);
  if (check.outcome() == kTuningAgrees) row.set_agree(row.agree() + 1);
  if (check.outcome() == kTuningDisagrees) row.set_disagree(row.disagree() + 1);
  if (check.outcome() == kTuningNoDifference) row.set_no_difference(row.no_difference() + 1);
  if (check.outcome() == kTuningNotMeasured) row.set_not_measured(row.not_measured() + 1);
  *row.add_checks() = std::move(check);
}

// "this host agrees in 3 of 4 fc configurations; no difference detected in 1".
std::string TuningStatement(const TuningFindingInfo& info, const v1::TuningFinding& row) {
  std::string out = absl::StrCat("this host agrees in ", row.agree(), " of ", row.applies(), " ",
                                 row.family(), " ", info.unit);
  const std::pair<const char*, int32_t> others[] = {{kTuningDisagrees, row.disagree()},
                                                    {kTuningNoDifference, row.no_difference()},
                                                    {kTuningNotMeasured, row.not_measured()}};
  for (const auto& [outcome, count] : others) {
    if (count > 0) absl::StrAppend(&out, "; ", outcome, " in ", count);
  }
  return out;
}

void AppendTuningFindings(const TuningFindingInfo& info,
                          std::map<std::string, v1::TuningFinding> rows,
                          v1::TuningResponse* response) {
  for (auto& [family, row] : rows) {
    row.set_statement(TuningStatement(info, row));
    *response->add_findings() = std::move(row);
  }
}

// The batch finding's groups: per batch group, its configurations by batch.
void AddBatchFindings(const std::vector<TuningSummary>& summaries, bool lower_is_better, double fdr,
                      v1::TuningResponse* response) {
  // family, batch group, platform -> batch -> configuration
  using GroupKey = std::tuple<std::string, std::string, std::string>;
  std::map<GroupKey, std::map<int64_t, const TuningSummary*>> groups;
  for (const TuningSummary& s : summaries) {
    if (!s.runs->batch.has_value()) continue;
    groups[{s.runs->family, s.runs->batch_group, s.runs->platform}].emplace(*s.runs->batch, &s);
  }
  // The smallest and largest batch of each group, judged together (one
  // false discovery rate across the groups).
  struct BatchEnds {
    std::string family;
    const TuningSummary* small;
    const TuningSummary* large;
    std::string verdict;
  };
  std::vector<BatchEnds> ends;
  std::vector<std::vector<ComparisonRound>> pairs;
  std::vector<BatchEnds*> judged_ends;
  for (const auto& [key, by_batch] : groups) {
    if (by_batch.size() < 2) continue;
    ends.push_back({std::get<0>(key), by_batch.begin()->second, by_batch.rbegin()->second, ""});
  }
  for (BatchEnds& e : ends) {
    if (e.small->pool_gain <= 0 || e.large->pool_gain <= 0) continue;
    pairs.push_back(BatchGainRounds(*e.small, *e.large, lower_is_better));
    judged_ends.push_back(&e);
  }
  const std::vector<std::string> verdicts = JudgeTuningPairs(pairs, fdr);
  for (size_t i = 0; i < verdicts.size(); ++i) judged_ends[i]->verdict = verdicts[i];
  std::map<std::string, v1::TuningFinding> rows;
  for (const BatchEnds& e : ends) {
    CountTuningCheck(kBatchFinding, e.family, BatchCheck(*e.small, *e.large, e.verdict), &rows);
  }
  AppendTuningFindings(kBatchFinding, std::move(rows), response);
}

}  // namespace

v1::TuningResponse SummarizeTuning(const std::vector<TuningConfigRuns>& configs,
                                   const std::string& metric, bool lower_is_better, double fdr) {
  const common::AnalysisMetric* info = common::FindAnalysisMetric(metric);
  const std::string unit = info == nullptr ? "" : info->unit;
  std::vector<TuningSummary> summaries;
  summaries.reserve(configs.size());
  for (const TuningConfigRuns& runs : configs) {
    if (!runs.settings.empty()) {
      summaries.push_back(SummarizeTuningConfig(runs, unit, lower_is_better));
    }
  }
  std::sort(summaries.begin(), summaries.end(), [](const TuningSummary& a, const TuningSummary& b) {
    return std::tie(a.runs->family, a.runs->config, a.runs->platform) <
           std::tie(b.runs->family, b.runs->config, b.runs->platform);
  });
  JudgeTuningSummaries(&summaries, lower_is_better, fdr);
  v1::TuningResponse response;
  response.set_metric(metric);
  response.set_lower_is_better(lower_is_better);
  response.set_fdr(fdr);
  std::map<std::string, v1::TuningFinding> narrow, wide;
  for (const TuningSummary& s : summaries) {
    *response.add_configs() = TuningConfigOf(s);
    if (!s.runs->width.has_value()) continue;
    if (*s.runs->width < kNarrowWidth) {
      CountTuningCheck(kNarrowFinding, s.runs->family, NarrowCheck(s), &narrow);
    } else {
      CountTuningCheck(kWideFinding, s.runs->family, WideCheck(s), &wide);
    }
  }
  AppendTuningFindings(kNarrowFinding, std::move(narrow), &response);
  AppendTuningFindings(kWideFinding, std::move(wide), &response);
  AddBatchFindings(summaries, lower_is_better, fdr, &response);
  return response;
}

}  // namespace paradnn::server::analysis
