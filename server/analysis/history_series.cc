#include "server/analysis/history_series.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::server::analysis {
namespace {

// One series: its runs in measurement order, with their change points.
v1::HistorySeries SeriesOf(const std::vector<const HistoryRun*>& runs,
                           const ChangePointOptions& options) {
  v1::HistorySeries series;
  series.set_config(runs.front()->config);
  series.set_hardware(runs.front()->hardware);
  std::vector<SeriesPoint> points;
  std::set<std::string> fingerprints;
  for (const HistoryRun* run : runs) {
    v1::HistoryPoint* point = series.add_points();
    point->set_sweep_id(run->sweep_id);
    point->set_repeat(run->repeat);
    point->set_job_id(run->job_id);
    point->set_value(run->value);
    point->set_fingerprint(run->fingerprint);
    points.push_back({run->value, run->fingerprint});
    fingerprints.insert(run->fingerprint);
  }
  series.set_fingerprints(static_cast<int32_t>(fingerprints.size()));
  series.set_searched(points.size() >= 2 * options.min_points_each_side);
  if (!series.searched()) return series;
  const ChangePointAnalysis analysis = FindChangePoints(points, options);
  for (size_t index : analysis.set_aside)
    series.mutable_points(static_cast<int>(index))->set_set_aside(true);
  for (const ChangePoint& found : analysis.change_points) {
    v1::HistoryChange* change = series.add_changes();
    change->set_index(static_cast<int32_t>(found.index));
    change->set_ratio(found.ratio);
    change->set_low(found.low);
    change->set_high(found.high);
    change->set_p_value(found.p_value);
    change->set_fingerprint_before(found.label_before);
    change->set_fingerprint_after(found.label_after);
    change->set_at_fingerprint_change(found.at_label_boundary);
    // The stacks of the last point before and the first at the new level.
    size_t before = found.index;
    while (before > 0 && runs[before - 1]->fingerprint != found.label_before) --before;
    if (before > 0) {
      change->set_stack_change(StackChange(runs[before - 1]->stack, runs[found.index]->stack));
    }
  }
  return series;
}

}  // namespace

std::string StackChange(const std::map<std::string, std::string>& before,
                        const std::map<std::string, std::string>& after) {
  std::set<std::string> keys;
  for (const auto& [key, value] : before) keys.insert(key);
  for (const auto& [key, value] : after) keys.insert(key);
  std::vector<std::string> changes;
  for (const std::string& key : keys) {
    auto a = before.find(key), b = after.find(key);
    const std::string from = a == before.end() ? "" : a->second;
    const std::string to = b == after.end() ? "" : b->second;
    if (from == to) continue;
    changes.push_back(
        absl::StrCat(key, " ", from.empty() ? "(none)" : from, " -> ", to.empty() ? "(none)" : to));
  }
  return absl::StrJoin(changes, ", ");
}

v1::HistoryResponse BuildHistory(std::vector<HistoryRun> runs, const ChangePointOptions& options) {
  std::sort(runs.begin(), runs.end(), [](const HistoryRun& a, const HistoryRun& b) {
    return std::tie(a.config, a.hardware, a.sweep_id, a.repeat, a.job_id) <
           std::tie(b.config, b.hardware, b.sweep_id, b.repeat, b.job_id);
  });
  std::vector<v1::HistorySeries> all;
  for (size_t begin = 0; begin < runs.size();) {
    size_t end = begin;
    std::vector<const HistoryRun*> group;
    while (end < runs.size() && runs[end].config == runs[begin].config &&
           runs[end].hardware == runs[begin].hardware) {
      group.push_back(&runs[end++]);
    }
    all.push_back(SeriesOf(group, options));
    begin = end;
  }
  // Stable: series with changes first, each part in config order.
  std::stable_sort(all.begin(), all.end(),
                   [](const v1::HistorySeries& a, const v1::HistorySeries& b) {
                     return a.changes_size() > 0 && b.changes_size() == 0;
                   });
  v1::HistoryResponse response;
  for (v1::HistorySeries& series : all) *response.add_series() = std::move(series);
  response.set_min_points_each_side(static_cast<int32_t>(options.min_points_each_side));
  response.set_significance(options.significance);
  return response;
}

}  // namespace paradnn::server::analysis
