// The table and CSV text of the analyses of one sweep's results: heat map,
// sensitivity, roofline, box plots (client/analysis_kind_views.h), and the
// heat map's and box plots' values in display units.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/analysis_kind_views.h"
#include "client/output_format.h"

namespace paradnn::client::internal {
namespace {

constexpr int kBarWidth = 20;  // of the largest sensitivity weight

}  // namespace

// ---- Heat map ---------------------------------------------------------------

namespace {

// A cell as the table shows it: its value, or why it has none.
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

}  // namespace

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

void HeatmapToDisplayUnits(v1::HeatmapResponse* heatmap) {
  if (!IsFraction(heatmap->unit())) return;
  for (v1::HeatmapPanel& panel : *heatmap->mutable_panels()) {
    for (v1::HeatmapCell& cell : *panel.mutable_cells()) {
      if (cell.has_value()) cell.set_value(cell.value() * kPercentPerFraction);
      if (cell.has_predicted_low()) {
        cell.set_predicted_low(cell.predicted_low() * kPercentPerFraction);
      }
      if (cell.has_predicted_high()) {
        cell.set_predicted_high(cell.predicted_high() * kPercentPerFraction);
      }
    }
  }
  heatmap->set_unit("%");
}

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
    for (const v1::AllreduceRoof& c : p.communication()) {
      if (!c.fitted()) continue;
      absl::StrAppend(&out, "; all-reduce ", c.backend(), " ", c.ranks(),
                      " ranks: ", HumanMillis(c.alpha_s() * 1e3), " + bytes at ",
                      WithPrefix(c.beta_bytes_per_sec(), "B/s"), " (bus)");
    }
    out += "\n";
  }
  // Data-parallel jobs on a platform with an all-reduce roof: the FLOP/s the
  // roof's all-reduce time caps the step at when none of it is hidden.
  const bool ceilings = std::any_of(
      r.points().begin(), r.points().end(),
      [](const v1::RooflinePoint& p) { return p.communication_ceiling_flops_per_sec() > 0; });
  Rows rows;
  for (const v1::RooflinePoint& p : r.points()) {
    const auto roof = compute_roof.find({p.platform_id(), p.precision()});
    rows.push_back({absl::StrCat(p.job_id()), p.op() ? "op" : "model", p.label(), p.precision(),
                    absl::StrCat(p.platform_id()), HumanCount(p.intensity()),
                    HumanCount(p.flops_per_sec() / 1e9),
                    roof == compute_roof.end() ? "" : Percent(p.flops_per_sec() / roof->second)});
    if (ceilings) {
      rows.back().push_back(p.communication_ceiling_flops_per_sec() > 0
                                ? HumanCount(p.communication_ceiling_flops_per_sec() / 1e9)
                                : "");
    }
  }
  if (!out.empty()) out += "\n";
  std::vector<std::string> header = {"job",      "kind",   "label",   "precision",
                                     "platform", "FLOP/B", "GFLOP/s", "of roof"};
  std::vector<bool> right = {true, false, false, false, true, true, true, true};
  if (ceilings) {
    header.push_back("comm ceiling GFLOP/s");
    right.push_back(true);
  }
  absl::StrAppend(&out, AlignColumns(header, rows, right));
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

void BoxplotToDisplayUnits(v1::BoxplotResponse* boxplot) {
  if (!IsFraction(boxplot->unit())) return;
  for (v1::BoxplotGroup& g : *boxplot->mutable_groups()) {
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
    ScaleToPercent(g.mutable_outliers());
  }
  boxplot->set_unit("%");
}

}  // namespace paradnn::client::internal
