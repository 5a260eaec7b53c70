#include "server/analysis/analysis_math.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace paradnn::server::analysis {
std::optional<double> ParseNumber(absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) return std::nullopt;
  return value;
}

// ---- Ordering of field values ---------------------------------------------

bool AllNumeric(const std::vector<std::string>& values) {
  return std::all_of(values.begin(), values.end(),
                     [](const std::string& v) { return ParseNumber(v).has_value(); });
}

std::vector<std::string> SortedDistinct(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  // The empty value (rows without the field: another family's) sorts first
  // here and does not make the others text; numbers then go ascending and it
  // last, stable over the lexicographic order, so "1" and "1.0" (equal
  // values, distinct strings) keep a deterministic order.
  const bool has_empty = !values.empty() && values.front().empty();
  const std::vector<std::string> present(values.begin() + (has_empty ? 1 : 0), values.end());
  if (!present.empty() && AllNumeric(present)) {
    std::stable_sort(values.begin(), values.end(), [](const std::string& a, const std::string& b) {
      if (a.empty() || b.empty()) return !a.empty() && b.empty();
      return *ParseNumber(a) < *ParseNumber(b);
    });
  }
  return values;
}

// ---- Percentiles ----------------------------------------------------------

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Percentile(values, 50);
}

// ---- Heat map -------------------------------------------------------------

namespace {

absl::Status CheckAxisVaries(const std::vector<std::string>& values, absl::string_view axis,
                             absl::string_view field) {
  if (values.size() >= 2) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("heat map axis '", axis, "' (", field, ") is constant (", values.front(),
                   ") over the selected results; put a field that varies on it"));
}

}  // namespace

void CountInto(HeatmapTally* tally, v1::Outcome outcome, double metric) {
  switch (outcome) {
    case v1::OK:
      tally->ok_metrics.push_back(metric);
      break;
    case v1::OOM:
      ++tally->oom;
      break;
    case v1::PREDICTED_OOM:
      ++tally->predicted_oom;
      break;
    default:
      ++tally->failed;
      break;
  }
}

absl::StatusOr<v1::HeatmapResponse> PivotHeatmap(const std::vector<HeatmapRow>& rows,
                                                 const std::string& x_field,
                                                 const std::string& y_field, bool own_axes) {
  std::map<std::tuple<std::string, std::string, std::string>, HeatmapTally> cells;
  for (const HeatmapRow& row : rows) {
    HeatmapTally& tally = cells[{row.panel, row.y, row.x}];
    tally.x = row.x;
    tally.y = row.y;
    tally.panel = row.panel;
    CountInto(&tally, row.outcome, row.metric);
  }
  std::vector<HeatmapTally> tallies;
  tallies.reserve(cells.size());
  for (auto& [key, tally] : cells) tallies.push_back(std::move(tally));
  return PivotHeatmapTallies(tallies, x_field, y_field, own_axes);
}

absl::StatusOr<v1::HeatmapResponse> PivotHeatmapTallies(const std::vector<HeatmapTally>& tallies,
                                                        const std::string& x_field,
                                                        const std::string& y_field, bool own_axes) {
  if (tallies.empty()) return absl::InvalidArgumentError("no results match the selection");

  std::vector<std::string> xs, ys, panels;
  std::map<std::tuple<std::string, std::string, std::string>, const HeatmapTally*> by_cell;
  for (const HeatmapTally& tally : tallies) {
    xs.push_back(tally.x);
    ys.push_back(tally.y);
    panels.push_back(tally.panel);
    by_cell[{tally.panel, tally.y, tally.x}] = &tally;
  }
  xs = SortedDistinct(std::move(xs));
  ys = SortedDistinct(std::move(ys));
  panels = SortedDistinct(std::move(panels));  // {""} when no row names a panel
  if (absl::Status s = CheckAxisVaries(xs, "x", x_field); !s.ok()) return s;
  if (absl::Status s = CheckAxisVaries(ys, "y", y_field); !s.ok()) return s;
  // Every x × y pair of every panel gets a cell.
  const double cells = static_cast<double>(xs.size()) * ys.size() * panels.size();
  if (cells > kMaxHeatmapCells) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "heat map of ", panels.size(), " panel(s) x ", ys.size(), " ", y_field, " values x ",
        xs.size(), " ", x_field, " values = ", absl::StrFormat("%.0f", cells), " cells; at most ",
        kMaxHeatmapCells, ": choose axes with fewer values or select fewer sweeps"));
  }

  v1::HeatmapResponse response;
  response.set_x(x_field);
  response.set_y(y_field);
  for (const std::string& x : xs) response.add_x_values(x);
  for (const std::string& y : ys) response.add_y_values(y);
  response.set_x_numeric(AllNumeric(xs));
  response.set_y_numeric(AllNumeric(ys));
  for (const std::string& panel_value : panels) {
    v1::HeatmapPanel* panel = response.add_panels();
    panel->set_panel_value(panel_value);
    std::vector<std::string> panel_xs = xs, panel_ys = ys;
    if (own_axes) {  // the values this panel has results at
      panel_xs.clear();
      panel_ys.clear();
      for (const HeatmapTally& tally : tallies) {
        if (tally.panel != panel_value) continue;
        panel_xs.push_back(tally.x);
        panel_ys.push_back(tally.y);
      }
      panel_xs = SortedDistinct(std::move(panel_xs));
      panel_ys = SortedDistinct(std::move(panel_ys));
    }
    for (const std::string& x : panel_xs) panel->add_x_values(x);
    for (const std::string& y : panel_ys) panel->add_y_values(y);
    // Every pair gets a cell, measured or not, so clients can draw the grid
    // without reconstructing it.
    for (const std::string& y : panel_ys) {
      for (const std::string& x : panel_xs) {
        v1::HeatmapCell* cell = panel->add_cells();
        cell->set_x(x);
        cell->set_y(y);
        auto it = by_cell.find({panel_value, y, x});
        if (it == by_cell.end()) continue;
        const HeatmapTally& tally = *it->second;
        if (!tally.ok_metrics.empty()) cell->set_value(Median(tally.ok_metrics));
        cell->set_ok_results(static_cast<int64_t>(tally.ok_metrics.size()));
        cell->set_oom_results(tally.oom);
        cell->set_predicted_oom_results(tally.predicted_oom);
        cell->set_failed_results(tally.failed);
        cell->set_predicted_results(tally.predicted);
        if (!tally.predicted_low.empty()) cell->set_predicted_low(Median(tally.predicted_low));
        if (!tally.predicted_high.empty()) cell->set_predicted_high(Median(tally.predicted_high));
      }
    }
  }
  return response;
}

// ---- Box plots ------------------------------------------------------------

v1::BoxplotGroup SummarizeBox(const std::string& name, std::vector<double> values) {
  v1::BoxplotGroup group;
  group.set_name(name);
  group.set_count(static_cast<int64_t>(values.size()));
  if (values.empty()) return group;
  std::sort(values.begin(), values.end());
  group.set_p2(Percentile(values, 2));
  group.set_p9(Percentile(values, 9));
  group.set_p50(Percentile(values, 50));
  group.set_p91(Percentile(values, 91));
  group.set_p98(Percentile(values, 98));
  const double q1 = Percentile(values, 25);
  const double q3 = Percentile(values, 75);
  group.set_q1(q1);
  group.set_q3(q3);
  const double low_fence = q1 - 1.5 * (q3 - q1);
  const double high_fence = q3 + 1.5 * (q3 - q1);
  double sum = 0;
  bool low_set = false;
  for (double v : values) {  // ascending, since `values` is sorted
    sum += v;
    if (v < low_fence || v > high_fence) {
      group.add_outliers(v);
      continue;
    }
    if (!low_set) group.set_whisker_low(v);
    low_set = true;
    group.set_whisker_high(v);
  }
  group.set_mean(sum / static_cast<double>(values.size()));
  return group;
}

// ---- Speedup --------------------------------------------------------------

namespace {

// One configuration's values on each side of a speedup.
struct ConfigSides {
  std::vector<double> baseline;
  std::vector<double> candidate;
  int64_t params = 0;
  std::string color_value;
  bool baseline_predicted = false;
  bool candidate_predicted = false;
};

// The point of a configuration measured on both sides: the median of each.
v1::SpeedupPoint SpeedupPointOf(const std::string& config, const ConfigSides& sides,
                                bool lower_is_better) {
  v1::SpeedupPoint point;
  point.set_config(config);
  point.set_params(sides.params);
  point.set_color_value(sides.color_value);
  point.set_baseline_value(Median(sides.baseline));
  point.set_candidate_value(Median(sides.candidate));
  point.set_speedup(lower_is_better ? point.baseline_value() / point.candidate_value()
                                    : point.candidate_value() / point.baseline_value());
  point.set_baseline_predicted(sides.baseline_predicted);
  point.set_candidate_predicted(sides.candidate_predicted);
  return point;
}

}  // namespace

absl::StatusOr<v1::SpeedupResponse> JoinSpeedup(const std::vector<SpeedupRow>& rows,
                                                const std::string& field,
                                                const std::string& baseline,
                                                const std::string& candidate,
                                                bool lower_is_better) {
  if (baseline == candidate) {
    return absl::InvalidArgumentError(absl::StrCat("speedup compares two values of '", field,
                                                   "'; baseline and candidate are both '", baseline,
                                                   "'"));
  }
  std::map<std::string, ConfigSides> configs;
  for (const SpeedupRow& row : rows) {
    const bool is_baseline = row.side == baseline;
    if (!is_baseline && row.side != candidate) continue;
    auto [it, inserted] = configs.try_emplace(row.config);
    ConfigSides& sides = it->second;
    if (inserted) {
      sides.params = row.params;
      sides.color_value = row.color_value;
    }
    (is_baseline ? sides.baseline : sides.candidate).push_back(row.metric);
    (is_baseline ? sides.baseline_predicted : sides.candidate_predicted) |= row.predicted;
  }

  v1::SpeedupResponse response;
  response.set_field(field);
  response.set_baseline(baseline);
  response.set_candidate(candidate);
  int64_t baseline_configs = 0, candidate_configs = 0;
  std::vector<v1::SpeedupPoint> points;
  for (const auto& [config, sides] : configs) {
    baseline_configs += sides.baseline.empty() ? 0 : 1;
    candidate_configs += sides.candidate.empty() ? 0 : 1;
    if (sides.candidate.empty()) {
      response.set_baseline_only(response.baseline_only() + 1);
      continue;
    }
    if (sides.baseline.empty()) {
      response.set_candidate_only(response.candidate_only() + 1);
      continue;
    }
    points.push_back(SpeedupPointOf(config, sides, lower_is_better));
    if (sides.baseline_predicted || sides.candidate_predicted) {
      response.set_predicted_points(response.predicted_points() + 1);
    }
  }
  if (points.empty()) {
    // The values there are: a sweep's `blas_core: auto` is stored as the
    // core the doctor chose, `precision: bf16` as bfloat16.
    std::set<std::string> values;
    for (const SpeedupRow& row : rows) values.insert(row.side);
    return absl::InvalidArgumentError(absl::StrCat(
        "no configuration was measured with both ", field, "=", baseline, " (", baseline_configs,
        " configurations) and ", field, "=", candidate, " (", candidate_configs, "); ", field,
        " has ",
        values.empty() ? "no value" : absl::StrCat("the values ", absl::StrJoin(values, ", ")),
        " in these results"));
  }

  // Stable over the config order of the map, so equal params sort by config.
  std::stable_sort(
      points.begin(), points.end(),
      [](const v1::SpeedupPoint& a, const v1::SpeedupPoint& b) { return a.params() < b.params(); });
  // OK results have positive metrics, so every speedup has a logarithm.
  double log_sum = 0;
  double lo = points.front().speedup(), hi = lo;
  for (v1::SpeedupPoint& point : points) {
    log_sum += std::log(point.speedup());
    lo = std::min(lo, point.speedup());
    hi = std::max(hi, point.speedup());
    *response.add_points() = std::move(point);
  }
  response.set_geomean_speedup(std::exp(log_sum / static_cast<double>(response.points_size())));
  response.set_min_speedup(lo);
  response.set_max_speedup(hi);
  return response;
}

// ---- Scaling --------------------------------------------------------------

absl::StatusOr<v1::ScalingResponse> SummarizeScaling(const std::vector<ScalingRow>& rows,
                                                     const std::string& field,
                                                     bool lower_is_better) {
  std::vector<std::string> levels;
  levels.reserve(rows.size());
  for (const ScalingRow& row : rows) levels.push_back(row.level);
  levels = SortedDistinct(std::move(levels));
  if (levels.size() > kMaxAnalysisGroups) {
    return absl::ResourceExhaustedError(absl::StrCat("scaling by ", field, " has ", levels.size(),
                                                     " levels; at most ", kMaxAnalysisGroups,
                                                     ": scale by a field with fewer values"));
  }
  std::vector<double> level_values;
  for (const std::string& level : levels) {
    const std::optional<double> value = ParseNumber(level);
    if (!value.has_value() || *value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("scaling field '", field, "' needs numeric values > 0, got '", level, "'"));
    }
    level_values.push_back(*value);
  }
  if (levels.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scaling needs at least two values of '", field, "' over the selected results, got ",
        levels.size(), levels.empty() ? "" : absl::StrCat(" (", levels.front(), ")")));
  }

  std::map<std::string, size_t> level_index;
  for (size_t i = 0; i < levels.size(); ++i) level_index[levels[i]] = i;
  // Per config, the repeats at each level.
  std::map<std::string, std::vector<std::vector<double>>> repeats;
  std::map<std::string, std::vector<bool>> predicted;  // per config, per level
  for (const ScalingRow& row : rows) {
    auto [it, inserted] = repeats.try_emplace(row.config, levels.size());
    it->second[level_index[row.level]].push_back(row.metric);
    auto [flags, added] = predicted.try_emplace(row.config, levels.size(), false);
    if (row.predicted) flags->second[level_index[row.level]] = true;
  }

  v1::ScalingResponse response;
  response.set_field(field);
  for (const std::string& level : levels) response.add_levels(level);
  std::vector<std::vector<double>> medians;  // [config][level], NaN where not measured
  for (const auto& [config, per_level] : repeats) {
    v1::ScalingConfig* out = response.add_configs();
    out->set_config(config);
    std::vector<double> values;
    for (const std::vector<double>& at_level : per_level) {
      values.push_back(at_level.empty() ? std::numeric_limits<double>::quiet_NaN()
                                        : Median(at_level));
      out->add_values(values.back());
    }
    for (bool flag : predicted[config]) out->add_predicted(flag);
    medians.push_back(std::move(values));
  }

  for (size_t l = 0; l < levels.size(); ++l) {
    std::vector<double> speedups;
    for (const std::vector<double>& values : medians) {
      if (std::isnan(values[0]) || std::isnan(values[l])) continue;
      speedups.push_back(lower_is_better ? values[0] / values[l] : values[l] / values[0]);
    }
    v1::ScalingLevel* summary = response.add_summary();
    summary->set_value(levels[l]);
    summary->set_configs(static_cast<int64_t>(speedups.size()));
    if (speedups.empty()) continue;  // speedups and efficiency stay 0
    const double median = Median(speedups);
    summary->set_median_speedup(median);
    summary->set_min_speedup(*std::min_element(speedups.begin(), speedups.end()));
    summary->set_max_speedup(*std::max_element(speedups.begin(), speedups.end()));
    summary->set_median_efficiency(median / (level_values[l] / level_values[0]));
  }
  return response;
}

}  // namespace paradnn::server::analysis
