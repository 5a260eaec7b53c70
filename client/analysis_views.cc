#include "client/analysis_views.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/analysis_metrics.h"
#include "common/human_units.h"

namespace paradnn::client {
namespace {

using Rows = std::vector<std::vector<std::string>>;

constexpr int kBarWidth = 20;

// A metric value in human units. `unit` is as the analyses name it: "%"
// holds a fraction (0.42 prints 42.0%), "s" seconds, "bytes" bytes; any
// other unit (examples/s, GFLOP/s, FLOP/B, "") gets SI suffixes.
std::string HumanValue(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "-";
  if (unit == "%") return absl::StrCat(Significant3(value), "%");
  if (unit == "fraction") return absl::StrCat(Significant3(value * 100), "%");
  if (unit == "s") return HumanMillis(value * 1e3);
  if (unit == "bytes" || unit == "B") return common::HumanBytes(value);
  return HumanCount(value);
}

// Speedup and scaling responses carry the metric's name only: its unit is
// the metric table's, as ToDisplayUnits shows it.
std::string UnitOfMetric(const std::string& metric) { return DisplayUnitOfMetric(metric); }

// "247 GFLOP/s", "45.0 GB/s": HumanCount's suffix becomes the unit's prefix.
std::string WithPrefix(double value, absl::string_view unit) {
  std::string number = HumanCount(value);
  const bool prefixed = !number.empty() && absl::ascii_isalpha(number.back());
  if (prefixed) number.insert(number.size() - 1, " ");
  return absl::StrCat(number, prefixed ? "" : " ", unit);
}

std::string Times(double ratio) {
  return std::isfinite(ratio) ? absl::StrCat(Significant3(ratio), "×") : "-";
}

std::string Percent(double fraction) {
  return std::isfinite(fraction) ? absl::StrCat(Significant3(fraction * 100), "%") : "-";
}

std::string WithUnit(const std::string& metric, const std::string& unit) {
  return unit.empty() ? metric : absl::StrCat(metric, " (", unit, ")");
}

// ---- Heat map ---------------------------------------------------------------

// Marks a value that is (or includes) a budgeted sweep's prediction.
constexpr const char kPredictedMark[] = "~";

std::string HeatmapCellText(const v1::HeatmapCell& cell, const std::string& unit) {
  if (cell.has_value()) {
    return absl::StrCat(cell.predicted_results() > 0 ? kPredictedMark : "",
                        HumanValue(cell.value(), unit));
  }
  if (cell.oom_results() > 0) return "OOM";
  if (cell.predicted_oom_results() > 0) return "pOOM";
  if (cell.failed_results() > 0) return "fail";
  return "—";
}

std::string HeatmapTable(const v1::HeatmapResponse& h) {
  std::string title = absl::StrCat(WithUnit(h.metric(), h.unit()), " by ", h.y(), " (rows) × ",
                                   h.x(), " (columns)");
  if (h.panels().empty()) return absl::StrCat(title, "\n(no results)\n");
  std::string out;
  int64_t predicted_cells = 0;
  int64_t cells_with_value = 0;
  for (const v1::HeatmapPanel& panel : h.panels()) {
    for (const v1::HeatmapCell& cell : panel.cells()) {
      cells_with_value += cell.has_value() ? 1 : 0;
      predicted_cells += cell.has_value() && cell.predicted_results() > 0 ? 1 : 0;
    }
    // Each panel's own columns and rows (a response without them: the
    // response's).
    const auto& xs = panel.x_values().empty() ? h.x_values() : panel.x_values();
    const auto& ys = panel.y_values().empty() ? h.y_values() : panel.y_values();
    std::vector<std::string> header = {absl::StrCat(h.y(), " \\ ", h.x())};
    header.insert(header.end(), xs.begin(), xs.end());
    std::vector<bool> right(header.size(), true);
    right[0] = false;
    // Looked up by value rather than by position, so that a response with
    // missing pairs still lines up.
    std::map<std::pair<std::string, std::string>, const v1::HeatmapCell*> cells;
    for (const v1::HeatmapCell& cell : panel.cells()) cells[{cell.y(), cell.x()}] = &cell;
    Rows rows;
    for (const std::string& y : ys) {
      std::vector<std::string> row = {y};
      for (const std::string& x : xs) {
        const auto it = cells.find({y, x});
        row.push_back(it == cells.end() ? "—" : HeatmapCellText(*it->second, h.unit()));
      }
      rows.push_back(std::move(row));
    }
    if (!out.empty()) out += "\n";
    absl::StrAppend(&out, title);
    if (!h.panel().empty()) absl::StrAppend(&out, ", ", h.panel(), "=", panel.panel_value());
    absl::StrAppend(&out, "\n", AlignColumns(header, rows, right));
  }
  if (predicted_cells > 0) {
    absl::StrAppend(&out, kPredictedMark, ": the median includes predicted results (",
                    predicted_cells, " of ", cells_with_value,
                    " cells); their 90 % intervals are in --format csv\n");
  }
  return out;
}

std::string HeatmapCsv(const v1::HeatmapResponse& h) {
  std::string out =
      CsvLine({"panel", "x", "y", "value", "ok_results", "oom_results", "predicted_oom_results",
               "failed_results", "predicted_results", "predicted_low", "predicted_high"});
  for (const v1::HeatmapPanel& panel : h.panels()) {
    for (const v1::HeatmapCell& c : panel.cells()) {
      absl::StrAppend(
          &out,
          CsvLine({panel.panel_value(), c.x(), c.y(),
                   c.has_value() ? ShortestDouble(c.value()) : "", absl::StrCat(c.ok_results()),
                   absl::StrCat(c.oom_results()), absl::StrCat(c.predicted_oom_results()),
                   absl::StrCat(c.failed_results()), absl::StrCat(c.predicted_results()),
                   c.has_predicted_low() ? ShortestDouble(c.predicted_low()) : "",
                   c.has_predicted_high() ? ShortestDouble(c.predicted_high()) : ""}));
    }
  }
  return out;
}

// ---- Sensitivity --------------------------------------------------------------

std::string SensitivityTable(const v1::SensitivityResponse& s) {
  // NaN sorts last (and keeps the ordering strict).
  auto magnitude = [](const v1::SensitivityWeight* w) {
    return std::isnan(w->weight()) ? -1.0 : std::fabs(w->weight());
  };
  std::vector<const v1::SensitivityWeight*> weights;
  for (const v1::SensitivityWeight& w : s.weights()) weights.push_back(&w);
  std::stable_sort(weights.begin(), weights.end(),
                   [&](const auto* a, const auto* b) { return magnitude(a) > magnitude(b); });
  const double largest = weights.empty() ? 0 : magnitude(weights.front());

  // With predicted points: each term's weight over the measured points
  // alone beside it.
  const bool compare = s.has_measured_only() && !s.measured_only().weights().empty();
  std::map<std::string, double> measured_only;
  for (const v1::SensitivityWeight& w : s.measured_only().weights()) {
    measured_only[w.term()] = w.weight();
  }
  Rows rows;
  for (const v1::SensitivityWeight* w : weights) {
    const size_t hashes =
        largest > 0 && magnitude(w) > 0 ? std::lround(kBarWidth * magnitude(w) / largest) : 0;
    std::vector<std::string> row = {w->term(), absl::StrFormat("%+.3f", w->weight())};
    if (compare) {
      const auto it = measured_only.find(w->term());
      row.push_back(it == measured_only.end() ? "-" : absl::StrFormat("%+.3f", it->second));
    }
    row.push_back(absl::StrCat(w->weight() < 0 ? "-" : "+", std::string(hashes, '#')));
    rows.push_back(std::move(row));
  }
  std::string out = absl::StrCat("sensitivity of ", s.metric(), " (standardized weights)\n");
  if (compare) {
    absl::StrAppend(&out, AlignColumns({"term", "weight", "measured only", ""}, rows,
                                       {false, true, true, false}));
  } else {
    absl::StrAppend(&out, AlignColumns({"term", "weight", ""}, rows, {false, true, false}));
  }
  absl::StrAppend(&out, absl::StrFormat("R² = %.3f over %d points\n", s.r_squared(), s.points()));
  if (s.predicted_points() > 0) {
    absl::StrAppend(&out, s.predicted_points(), " of the ", s.points(), " points are predicted");
    absl::StrAppend(
        &out, compare ? absl::StrFormat("; measured only: R² = %.3f over %d points\n",
                                        s.measured_only().r_squared(), s.measured_only().points())
                      : "; the measured points alone cannot be fitted\n");
  }
  std::vector<std::string> scales;
  if (s.log2_features()) scales.push_back("features as log2(value)");
  if (s.log2_target()) scales.push_back(absl::StrCat("target as log2(", s.metric(), ")"));
  if (!scales.empty()) absl::StrAppend(&out, absl::StrJoin(scales, "; "), "\n");
  for (const std::string& why : s.dropped()) absl::StrAppend(&out, "left out: ", why, "\n");
  return out;
}

std::string SensitivityCsv(const v1::SensitivityResponse& s) {
  std::string out = CsvLine({"term", "weight"});
  for (const v1::SensitivityWeight& w : s.weights()) {
    absl::StrAppend(&out, CsvLine({w.term(), ShortestDouble(w.weight())}));
  }
  absl::StrAppend(&out, CsvLine({"(intercept)", ShortestDouble(s.intercept())}),
                  CsvLine({"(r_squared)", ShortestDouble(s.r_squared())}),
                  CsvLine({"(points)", absl::StrCat(s.points())}));
  if (s.predicted_points() > 0) {
    absl::StrAppend(&out, CsvLine({"(predicted_points)", absl::StrCat(s.predicted_points())}));
  }
  // The measured-only fit's terms after, each named so.
  for (const v1::SensitivityWeight& w : s.measured_only().weights()) {
    absl::StrAppend(
        &out, CsvLine({absl::StrCat("measured_only:", w.term()), ShortestDouble(w.weight())}));
  }
  if (s.has_measured_only()) {
    absl::StrAppend(
        &out, CsvLine({"(measured_only:r_squared)", ShortestDouble(s.measured_only().r_squared())}),
        CsvLine({"(measured_only:points)", absl::StrCat(s.measured_only().points())}));
  }
  return out;
}

// ---- Roofline -------------------------------------------------------------------

std::string RooflineTable(const v1::RooflineResponse& r) {
  std::string out;
  std::map<std::pair<int64_t, std::string>, double> compute_roof;  // (platform, dtype)
  for (const v1::PlatformRoofs& p : r.roofs()) {
    std::vector<std::string> compute, memory;
    for (const v1::MatmulRoofValue& c : p.compute()) {
      const bool matmul = c.kernel().empty() || c.kernel() == "matmul";
      if (c.flops_per_sec() > 0 && matmul) {
        compute_roof[{p.platform_id(), c.dtype()}] = c.flops_per_sec();
      }
      std::string text =
          absl::StrCat(matmul ? "" : c.kernel() + " ", c.dtype(), " ",
                       c.flops_per_sec() > 0 ? WithPrefix(c.flops_per_sec(), "FLOP/s")
                                             : std::string("uncalibrated"));
      if (c.theoretical_flops_per_sec() > 0) {
        absl::StrAppend(&text, " (peak ", WithPrefix(c.theoretical_flops_per_sec(), "FLOP/s"), ")");
      }
      compute.push_back(std::move(text));
    }
    for (const v1::BandwidthRoof& b : p.bandwidth()) {
      memory.push_back(absl::StrCat(b.level(), " ", WithPrefix(b.bytes_per_sec(), "B/s")));
    }
    absl::StrAppend(&out, p.device_name(), " (platform ", p.platform_id(),
                    "): ", compute.empty() ? "no compute roofs" : absl::StrJoin(compute, ", "));
    if (!memory.empty()) absl::StrAppend(&out, "; ", absl::StrJoin(memory, ", "));
    out += "\n";
  }
  Rows rows;
  for (const v1::RooflinePoint& p : r.points()) {
    const auto roof = compute_roof.find({p.platform_id(), p.precision()});
    rows.push_back({absl::StrCat(p.job_id()), p.op() ? "op" : "model", p.label(), p.precision(),
                    absl::StrCat(p.platform_id()), HumanCount(p.intensity()),
                    HumanCount(p.flops_per_sec() / 1e9),
                    roof == compute_roof.end() ? "" : Percent(p.flops_per_sec() / roof->second)});
  }
  if (!out.empty()) out += "\n";
  absl::StrAppend(&out, AlignColumns({"job", "kind", "label", "precision", "platform", "FLOP/B",
                                      "GFLOP/s", "of roof"},
                                     rows, {true, false, false, false, true, true, true, true}));
  if (r.predicted_left_out() > 0) {
    absl::StrAppend(&out, r.predicted_left_out(),
                    " predicted results are not drawn: the model predicts step time, not the "
                    "executed FLOPs and bytes a point needs\n");
  }
  return out;
}

std::string RooflineCsv(const v1::RooflineResponse& r) {
  std::string out =
      CsvLine({"job_id", "label", "op", "precision", "platform_id", "intensity", "flops_per_sec"});
  for (const v1::RooflinePoint& p : r.points()) {
    absl::StrAppend(
        &out, CsvLine({absl::StrCat(p.job_id()), p.label(), p.op() ? "true" : "false",
                       p.precision(), absl::StrCat(p.platform_id()), ShortestDouble(p.intensity()),
                       ShortestDouble(p.flops_per_sec())}));
  }
  return out;
}

// ---- Box plots ------------------------------------------------------------------

std::string BoxplotTable(const v1::BoxplotResponse& b) {
  Rows rows;
  const bool any_predicted =
      std::any_of(b.groups().begin(), b.groups().end(),
                  [](const v1::BoxplotGroup& g) { return g.predicted() > 0; });
  for (const v1::BoxplotGroup& g : b.groups()) {
    std::vector<std::string> row = {
        g.name(), any_predicted ? absl::StrCat(g.count(), " (", g.predicted(), " pred)")
                                : absl::StrCat(g.count())};
    for (double v : {g.whisker_low(), g.q1(), g.p50(), g.q3(), g.whisker_high(), g.mean()}) {
      row.push_back(HumanValue(v, b.unit()));
    }
    row.push_back(absl::StrCat(g.outliers_size()));
    for (double v : {g.p2(), g.p98()}) row.push_back(HumanValue(v, b.unit()));
    rows.push_back(std::move(row));
  }
  return absl::StrCat(
      WithUnit(b.metric(), b.unit()), " by ", absl::StrJoin(b.group_by(), ", "), "\n",
      AlignColumns(
          {"group", "count", "low", "q1", "median", "q3", "high", "mean", "outliers", "p2", "p98"},
          rows, {false, true, true, true, true, true, true, true, true, true, true}),
      "low/high: whiskers at the most extreme values within 1.5 IQR of q1..q3; outliers are "
      "beyond them; p2/p98: the paper's whiskers\n");
}

std::string BoxplotCsv(const v1::BoxplotResponse& b) {
  std::string out = CsvLine({"name", "count", "p2", "p9", "p50", "p91", "p98", "mean", "outliers",
                             "q1", "q3", "whisker_low", "whisker_high", "predicted"});
  for (const v1::BoxplotGroup& g : b.groups()) {
    std::vector<std::string> outliers;
    for (double v : g.outliers()) outliers.push_back(ShortestDouble(v));
    absl::StrAppend(
        &out,
        CsvLine({g.name(), absl::StrCat(g.count()), ShortestDouble(g.p2()), ShortestDouble(g.p9()),
                 ShortestDouble(g.p50()), ShortestDouble(g.p91()), ShortestDouble(g.p98()),
                 ShortestDouble(g.mean()), absl::StrJoin(outliers, " "), ShortestDouble(g.q1()),
                 ShortestDouble(g.q3()), ShortestDouble(g.whisker_low()),
                 ShortestDouble(g.whisker_high()), absl::StrCat(g.predicted())}));
  }
  return out;
}

// ---- Speedup --------------------------------------------------------------------

// "1.52x [1.41x, 1.63x]", or the bare speedup when there is no interval.
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
  const std::string unit = UnitOfMetric(s.metric());
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

// "+12.0 % [8.1 %, 15.2 %]" for a ratio and its interval.
std::string PercentChange(double ratio, double low, double high) {
  auto pct = [](double r) { return absl::StrFormat("%+.1f %%", (r - 1) * 100); };
  return absl::StrCat(pct(ratio), " [", pct(low), ", ", pct(high), "]");
}

// A fingerprint as people compare them: its first 12 characters.
std::string ShortFingerprint(const std::string& fingerprint) { return fingerprint.substr(0, 12); }

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
    const std::string level = HumanValue(values[values.size() / 2], UnitOfMetric(h.metric()));
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

  const std::string unit = UnitOfMetric(s.metric());
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

std::string AnalysisJson(const v1::AnalyzeResponse& response) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string text;
  const auto status = google::protobuf::util::MessageToJsonString(response, &text, options);
  // Only a message that could not have come off the wire (invalid UTF-8 in
  // a string) fails; say so in JSON rather than print half of it.
  const nlohmann::ordered_json json =
      status.ok() ? nlohmann::ordered_json::parse(text)
                  : nlohmann::ordered_json{{"error", std::string(status.message())}};
  // Re-printed for the two-space indent of the CLI's other JSON; numbers
  // keep their shortest round-trip form.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string ScopeSummary(const v1::AnalysisScope& scope, bool compact) {
  if (scope.sweep_ids().empty()) return "";
  std::string line = absl::StrCat(scope.sweep_ids_size() == 1 ? "sweep " : "sweeps ",
                                  absl::StrJoin(scope.sweep_ids(), ", "));
  if (!scope.where().empty()) {
    // Sorted, so that the line reads the same every time.
    std::map<std::string, std::string> where(scope.where().begin(), scope.where().end());
    absl::StrAppend(&line, " where ", absl::StrJoin(where, " ", absl::PairFormatter("=")));
  }
  if (!scope.platforms().empty()) {
    absl::StrAppend(&line, "; ", absl::StrJoin(scope.platforms(), ", "));
  }
  if (!scope.aggregation().empty()) {
    absl::StrAppend(&line, "; ", scope.aggregation());
    std::vector<std::string> across;
    for (const v1::FieldValues& field : scope.aggregated()) {
      across.push_back(
          compact && field.values_size() > 3
              ? absl::StrCat(field.field(), " (", field.values_size(), " values)")
              : absl::StrCat(field.field(), " (", absl::StrJoin(field.values(), ", "), ")"));
    }
    absl::StrAppend(&line, across.empty() ? " (nothing else varies)"
                                          : absl::StrCat(" across ", absl::StrJoin(across, ", ")));
  }
  return line;
}

std::string FormatAnalysis(const v1::AnalyzeResponse& response, OutputFormat format) {
  if (format == OutputFormat::kJson) return AnalysisJson(response);
  if (format == OutputFormat::kTable && response.has_scope()) {
    v1::AnalyzeResponse bare = response;
    bare.clear_scope();
    std::string predicted;
    if (response.predicted_results() > 0) {
      predicted = absl::StrCat("includes ", response.predicted_results(), " predicted of ",
                               response.results(), " results (docs/prediction.md)\n");
    }
    return absl::StrCat(FormatAnalysis(bare, format), "over: ", ScopeSummary(response.scope()),
                        "\n", predicted);
  }
  const bool csv = format == OutputFormat::kCsv;
  switch (response.analysis_case()) {
    case v1::AnalyzeResponse::kHeatmap:
      return csv ? HeatmapCsv(response.heatmap()) : HeatmapTable(response.heatmap());
    case v1::AnalyzeResponse::kSensitivity:
      return csv ? SensitivityCsv(response.sensitivity())
                 : SensitivityTable(response.sensitivity());
    case v1::AnalyzeResponse::kRoofline:
      return csv ? RooflineCsv(response.roofline()) : RooflineTable(response.roofline());
    case v1::AnalyzeResponse::kBoxplot:
      return csv ? BoxplotCsv(response.boxplot()) : BoxplotTable(response.boxplot());
    case v1::AnalyzeResponse::kSpeedup:
      return csv ? SpeedupCsv(response.speedup()) : SpeedupTable(response.speedup());
    case v1::AnalyzeResponse::kScaling:
      return csv ? ScalingCsv(response.scaling()) : ScalingTable(response.scaling());
    case v1::AnalyzeResponse::kHistory:
      return csv ? HistoryCsv(response.history()) : HistoryTable(response.history());
    case v1::AnalyzeResponse::kBisect:  // `paradnn bisect` prints it in full
      return csv ? "" : absl::StrCat(response.bisect().summary(), "\n");
    case v1::AnalyzeResponse::ANALYSIS_NOT_SET:
      break;
  }
  return csv ? "" : "no analysis in the response\n";
}

// ---- Display units ----------------------------------------------------------

namespace {

constexpr double kPercentPerFraction = 100;

bool IsFraction(const std::string& unit) { return unit == "fraction"; }

void Scale(google::protobuf::RepeatedField<double>* values) {
  for (double& v : *values) v *= kPercentPerFraction;
}

}  // namespace

std::string DisplayUnitOfMetric(const std::string& metric) {
  const common::AnalysisMetric* info = common::FindAnalysisMetric(metric);
  if (info == nullptr) return "";
  return IsFraction(info->unit) ? "%" : info->unit;
}

void ToDisplayUnits(v1::AnalyzeResponse* response) {
  if (response->has_heatmap() && IsFraction(response->heatmap().unit())) {
    v1::HeatmapResponse& h = *response->mutable_heatmap();
    for (v1::HeatmapPanel& panel : *h.mutable_panels()) {
      for (v1::HeatmapCell& cell : *panel.mutable_cells()) {
        if (cell.has_value()) cell.set_value(cell.value() * kPercentPerFraction);
        if (cell.has_predicted_low())
          cell.set_predicted_low(cell.predicted_low() * kPercentPerFraction);
        if (cell.has_predicted_high()) {
          cell.set_predicted_high(cell.predicted_high() * kPercentPerFraction);
        }
      }
    }
    h.set_unit("%");
  }
  if (response->has_boxplot() && IsFraction(response->boxplot().unit())) {
    v1::BoxplotResponse& b = *response->mutable_boxplot();
    for (v1::BoxplotGroup& g : *b.mutable_groups()) {
      constexpr double k = kPercentPerFraction;
      g.set_p2(g.p2() * k);
      g.set_p9(g.p9() * k);
      g.set_p50(g.p50() * k);
      g.set_p91(g.p91() * k);
      g.set_p98(g.p98() * k);
      g.set_mean(g.mean() * k);
      g.set_q1(g.q1() * k);
      g.set_q3(g.q3() * k);
      g.set_whisker_low(g.whisker_low() * k);
      g.set_whisker_high(g.whisker_high() * k);
      Scale(g.mutable_outliers());
    }
    b.set_unit("%");
  }
  if (response->has_speedup()) {
    const common::AnalysisMetric* info = common::FindAnalysisMetric(response->speedup().metric());
    if (info != nullptr && IsFraction(info->unit)) {
      for (v1::SpeedupPoint& p : *response->mutable_speedup()->mutable_points()) {
        p.set_baseline_value(p.baseline_value() * kPercentPerFraction);
        p.set_candidate_value(p.candidate_value() * kPercentPerFraction);
      }
    }
  }
  if (response->has_scaling()) {
    const common::AnalysisMetric* info = common::FindAnalysisMetric(response->scaling().metric());
    if (info != nullptr && IsFraction(info->unit)) {
      for (v1::ScalingConfig& c : *response->mutable_scaling()->mutable_configs()) {
        Scale(c.mutable_values());
      }
    }
  }
}

}  // namespace paradnn::client
