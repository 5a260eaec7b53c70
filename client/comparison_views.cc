// The table and CSV text of the comparisons: speedup, history and scaling
// (client/analysis_kind_views.h), and the speedup's and scaling's values in
// display units.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/analysis_kind_views.h"
#include "client/analysis_views.h"
#include "client/output_format.h"
#include "common/analysis_metrics.h"

namespace paradnn::client::internal {
namespace {

std::string SpeedupWithInterval(double speedup, double low, double high) {
  if (!(low > 0) || !(high > 0)) return Times(speedup);
  return absl::StrCat(Times(speedup), " [", Times(low), ", ", Times(high), "]");
}

// The verdict counts and what they hold: "3 faster, 1 slower, 8 no
// difference detected (false discovery rate 5 %)".
std::string VerdictSummary(const v1::SpeedupResponse& s) {
  std::vector<std::string> parts;
  auto add = [&parts](int64_t count, const char* what) {
    if (count > 0) parts.push_back(absl::StrCat(count, " ", what));
  };
  add(s.faster(), "faster");
  add(s.slower(), "slower");
  add(s.no_difference(), "no difference detected");
  add(s.not_enough_data(), "not enough data");
  if (parts.empty()) return "";
  return absl::StrFormat("verdicts: %s (false discovery rate %g %%, Benjamini-Hochberg)\n",
                         absl::StrJoin(parts, ", "), s.fdr() * 100);
}

std::string PercentChange(double ratio, double low, double high) {
  auto pct = [](double r) { return absl::StrFormat("%+.1f %%", (r - 1) * 100); };
  return absl::StrCat(pct(ratio), " [", pct(low), ", ", pct(high), "]");
}

// A fingerprint as people compare them: its first 12 characters.
std::string ShortFingerprint(const std::string& fingerprint) { return fingerprint.substr(0, 12); }

}  // namespace

// ---- Speedup --------------------------------------------------------------------

std::string SpeedupTable(const v1::SpeedupResponse& s) {
  std::string out = absl::StrFormat(
      "speedup of %s over %s (%s, %s): geomean %s, min %s, max %s over %d configurations; "
      "%d only on %s, %d only on %s\n",
      s.candidate(), s.baseline(), s.field(), s.metric(),
      SpeedupWithInterval(s.geomean_speedup(), s.geomean_low(), s.geomean_high()),
      Times(s.min_speedup()), Times(s.max_speedup()), s.points_size(), s.baseline_only(),
      s.baseline(), s.candidate_only(), s.candidate());
  absl::StrAppend(&out, VerdictSummary(s));
  const bool colored = !s.color_by().empty();
  const std::string unit = DisplayUnitOfMetric(s.metric());
  std::vector<std::string> header = {"config"};
  if (colored) header.push_back(s.color_by());
  header.insert(header.end(), {"params", s.baseline().empty() ? "baseline" : s.baseline(),
                               s.candidate().empty() ? "candidate" : s.candidate(),
                               "speedup [95 %]", "runs", "verdict", "basis"});
  std::vector<bool> right(header.size(), true);
  right[0] = false;
  if (colored) right[1] = false;
  right[right.size() - 1] = right[right.size() - 2] = false;
  Rows rows;
  for (const v1::SpeedupPoint& p : s.points()) {
    std::vector<std::string> row = {p.config()};
    if (colored) row.push_back(p.color_value());
    row.insert(row.end(), {HumanCount(static_cast<double>(p.params())),
                           absl::StrCat(p.baseline_predicted() ? kPredictedMark : "",
                                        HumanValue(p.baseline_value(), unit)),
                           absl::StrCat(p.candidate_predicted() ? kPredictedMark : "",
                                        HumanValue(p.candidate_value(), unit)),
                           SpeedupWithInterval(p.speedup(), p.speedup_low(), p.speedup_high()),
                           absl::StrCat(p.baseline_runs(), "+", p.candidate_runs()), p.verdict(),
                           p.interval_basis()});
    rows.push_back(std::move(row));
  }
  absl::StrAppend(&out, "\n", AlignColumns(header, rows, right));
  if (s.predicted_points() > 0) {
    absl::StrAppend(&out, kPredictedMark, ": predicted (", s.predicted_points(), " of ",
                    s.points_size(), " points have a predicted side)\n");
  }
  if (!s.sensitivity().weights().empty()) {
    absl::StrAppend(&out, "\n", SensitivityTable(s.sensitivity()));
  }
  return out;
}

std::string SpeedupCsv(const v1::SpeedupResponse& s) {
  std::string out =
      CsvLine({"config", "params", "color_value", "baseline_value", "candidate_value", "speedup",
               "speedup_low", "speedup_high", "p_value", "q_value", "verdict", "interval_basis",
               "baseline_runs", "candidate_runs", "baseline_predicted", "candidate_predicted"});
  for (const v1::SpeedupPoint& p : s.points()) {
    absl::StrAppend(
        &out, CsvLine({p.config(), absl::StrCat(p.params()), p.color_value(),
                       ShortestDouble(p.baseline_value()), ShortestDouble(p.candidate_value()),
                       ShortestDouble(p.speedup()), ShortestDouble(p.speedup_low()),
                       ShortestDouble(p.speedup_high()), ShortestDouble(p.p_value()),
                       ShortestDouble(p.q_value()), p.verdict(), p.interval_basis(),
                       absl::StrCat(p.baseline_runs()), absl::StrCat(p.candidate_runs()),
                       p.baseline_predicted() ? "true" : "false",
                       p.candidate_predicted() ? "true" : "false"}));
  }
  return out;
}

// ---- History --------------------------------------------------------------------

void SpeedupToDisplayUnits(v1::SpeedupResponse* speedup) {
  if (!IsFractionMetric(speedup->metric())) return;
  for (v1::SpeedupPoint& p : *speedup->mutable_points()) {
    p.set_baseline_value(p.baseline_value() * kPercentPerFraction);
    p.set_candidate_value(p.candidate_value() * kPercentPerFraction);
  }
}

// ---- History --------------------------------------------------------------------

std::string HistoryTable(const v1::HistoryResponse& h) {
  int changes = 0, searched = 0;
  for (const v1::HistorySeries& s : h.series()) {
    changes += s.changes_size();
    searched += s.searched() ? 1 : 0;
  }
  std::string out = absl::StrFormat(
      "history of %s: %d series (configuration x hardware), %d searched for change points "
      "(>= %d runs a level, p <= %g per split), %d change(s)\n",
      h.metric(), h.series_size(), searched, h.min_points_each_side(), h.significance(), changes);
  Rows rows;
  for (const v1::HistorySeries& s : h.series()) {
    std::vector<double> values;
    for (const v1::HistoryPoint& p : s.points()) values.push_back(p.value());
    std::sort(values.begin(), values.end());
    const std::string level =
        HumanValue(values[values.size() / 2], DisplayUnitOfMetric(h.metric()));
    const std::string base = absl::StrCat(s.points_size(), " runs, ", s.fingerprints(),
                                          s.fingerprints() == 1 ? " stack" : " stacks");
    if (s.changes().empty()) {
      rows.push_back({s.config(), s.hardware(), base, level,
                      s.searched() ? "no change detected" : "too few runs to search"});
      continue;
    }
    for (const v1::HistoryChange& c : s.changes()) {
      std::string what =
          absl::StrCat(h.metric(), " ", PercentChange(c.ratio(), c.low(), c.high()), " at run ",
                       c.index() + 1, " (p ", ShortestDouble(c.p_value()), ")");
      if (c.fingerprint_before() != c.fingerprint_after()) {
        absl::StrAppend(&what, " between fingerprint ", ShortFingerprint(c.fingerprint_before()),
                        " and ", ShortFingerprint(c.fingerprint_after()),
                        c.at_fingerprint_change() ? "" : " (not where the stack changed)");
        if (!c.stack_change().empty()) absl::StrAppend(&what, ": ", c.stack_change());
      } else {
        absl::StrAppend(&what, " on one stack (the host, not the software)");
      }
      rows.push_back({s.config(), s.hardware(), base, level, what});
    }
  }
  absl::StrAppend(&out, "\n",
                  AlignColumns({"config", "hardware", "runs", "median", "change points"}, rows,
                               {false, false, false, true, false}));
  return out;
}

std::string HistoryCsv(const v1::HistoryResponse& h) {
  std::string out = CsvLine({"config", "hardware", "index", "sweep_id", "repeat", "job_id", "value",
                             "fingerprint", "set_aside", "change_ratio", "change_low",
                             "change_high", "change_p_value", "stack_change"});
  for (const v1::HistorySeries& s : h.series()) {
    for (int i = 0; i < s.points_size(); ++i) {
      const v1::HistoryPoint& p = s.points(i);
      std::vector<std::string> fields = {s.config(),
                                         s.hardware(),
                                         absl::StrCat(i),
                                         absl::StrCat(p.sweep_id()),
                                         absl::StrCat(p.repeat()),
                                         absl::StrCat(p.job_id()),
                                         ShortestDouble(p.value()),
                                         p.fingerprint(),
                                         p.set_aside() ? "true" : "false"};
      const v1::HistoryChange* change = nullptr;
      for (const v1::HistoryChange& c : s.changes()) {
        if (c.index() == i) change = &c;
      }
      if (change != nullptr) {
        fields.insert(fields.end(), {ShortestDouble(change->ratio()), ShortestDouble(change->low()),
                                     ShortestDouble(change->high()),
                                     ShortestDouble(change->p_value()), change->stack_change()});
      } else {
        fields.insert(fields.end(), {"", "", "", "", ""});
      }
      absl::StrAppend(&out, CsvLine(fields));
    }
  }
  return out;
}

// ---- Scaling --------------------------------------------------------------------

std::string ScalingTable(const v1::ScalingResponse& s) {
  std::string out = absl::StrCat(s.metric(), " scaling over ", s.field());
  if (!s.levels().empty())
    absl::StrAppend(&out, " (speedup over ", s.field(), "=", s.levels(0), ")");
  out += "\n";
  Rows summary;
  for (const v1::ScalingLevel& l : s.summary()) {
    summary.push_back({l.value(), absl::StrCat(l.configs()), Times(l.median_speedup()),
                       Times(l.min_speedup()), Times(l.max_speedup()),
                       Percent(l.median_efficiency())});
  }
  absl::StrAppend(&out,
                  AlignColumns({s.field(), "configs", "median speedup", "min", "max", "efficiency"},
                               summary, {true, true, true, true, true, true}));

  const std::string unit = DisplayUnitOfMetric(s.metric());
  std::vector<std::string> header = {"config"};
  for (const std::string& level : s.levels()) header.push_back(absl::StrCat(s.field(), "=", level));
  std::vector<bool> right(header.size(), true);
  right[0] = false;
  Rows rows;
  bool any_predicted = false;
  for (const v1::ScalingConfig& c : s.configs()) {
    std::vector<std::string> row = {c.config()};
    for (int l = 0; l < c.values_size(); ++l) {
      const bool predicted = l < c.predicted_size() && c.predicted(l);
      any_predicted = any_predicted || predicted;
      row.push_back(absl::StrCat(predicted ? kPredictedMark : "", HumanValue(c.values(l), unit)));
    }
    rows.push_back(std::move(row));
  }
  absl::StrAppend(&out, "\n", AlignColumns(header, rows, right));
  if (any_predicted) absl::StrAppend(&out, kPredictedMark, ": predicted\n");
  return out;
}

std::string ScalingCsv(const v1::ScalingResponse& s) {
  std::vector<std::string> header = {"config"};
  for (const std::string& level : s.levels()) header.push_back(absl::StrCat(s.field(), "=", level));
  header.emplace_back("predicted_levels");  // the levels whose value is predicted
  std::string out = CsvLine(header);
  for (const v1::ScalingConfig& c : s.configs()) {
    std::vector<std::string> fields = {c.config()};
    for (double v : c.values()) fields.push_back(ShortestDouble(v));
    std::vector<std::string> predicted;
    for (int l = 0; l < c.predicted_size() && l < s.levels_size(); ++l) {
      if (c.predicted(l)) predicted.push_back(s.levels(l));
    }
    fields.push_back(absl::StrJoin(predicted, " "));
    absl::StrAppend(&out, CsvLine(fields));
  }
  return out;
}

// ---- JSON -----------------------------------------------------------------------

void ScalingToDisplayUnits(v1::ScalingResponse* scaling) {
  if (!IsFractionMetric(scaling->metric())) return;
  for (v1::ScalingConfig& c : *scaling->mutable_configs()) ScaleToPercent(c.mutable_values());
}

}  // namespace paradnn::client::internal
