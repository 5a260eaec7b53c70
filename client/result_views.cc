#include "client/result_views.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/op_profile.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// `rows` grouped by configuration (ConfigKey), the groups in order of their
// first row.
std::vector<std::vector<const v1::ResultRow*>> GroupByConfig(
    const std::vector<v1::ResultRow>& rows) {
  std::vector<std::vector<const v1::ResultRow*>> groups;
  std::map<std::string, size_t> group_of;
  for (const v1::ResultRow& row : rows) {
    const auto [it, inserted] = group_of.emplace(model::ConfigKey(row.config()), groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(&row);
  }
  return groups;
}

// The repeats table's columns after the configuration's.
void AppendRepeatsColumns(std::vector<ResultColumn>* columns) {
  for (ResultColumn column : std::vector<ResultColumn>{
           {"repeats_ok", "ok", ColumnUnit::kInteger},
           {"repeats", "of", ColumnUnit::kInteger},
           {"examples_per_sec_median", "ex/s median", ColumnUnit::kRate},
           {"examples_per_sec_mean", "mean", ColumnUnit::kRate},
           {"examples_per_sec_min", "min", ColumnUnit::kRate},
           {"examples_per_sec_max", "max", ColumnUnit::kRate},
           {"spread_pct", "spread", ColumnUnit::kPercent},
           {"cv_pct", "cv", ColumnUnit::kPercent},
           {"step_ci95_pct_median", "±ci95 (median)", ColumnUnit::kPercent},
           {"mean_ci95_pct", "±95 % of mean", ColumnUnit::kPercent},
           {"target_pct", "target", ColumnUnit::kPercent},
           {"target_status", "target status", ColumnUnit::kText},
           {"suspect", "!", ColumnUnit::kFlag},
           {"other_outcomes", "other outcomes", ColumnUnit::kText},
       }) {
    columns->push_back(std::move(column));
  }
}

// What one configuration's repeats measured: the OK ones' rates, step-time
// CIs (in percent) and suspicions; the others' outcomes (or job states,
// without a measurement) counted.
struct RepeatMeasurements {
  std::vector<std::string> job_ids;
  std::vector<double> rates;
  std::vector<double> cis;
  std::vector<std::string> suspects;
  std::map<std::string, int> other_outcomes;
};

RepeatMeasurements CollectRepeats(const std::vector<const v1::ResultRow*>& group) {
  RepeatMeasurements repeats;
  for (const v1::ResultRow* row : group) {
    repeats.job_ids.push_back(absl::StrCat(row->job_id()));
    if (!row->has_measurement()) {
      repeats.other_outcomes[v1::JobState_Name(row->state())] += 1;
      continue;
    }
    const v1::Measurement& m = row->measurement();
    if (m.outcome() != v1::OK) {
      repeats.other_outcomes[v1::Outcome_Name(m.outcome())] += 1;
      continue;
    }
    repeats.rates.push_back(m.examples_per_sec());
    repeats.cis.push_back(m.stats().ci95_rel() * 100);
    for (const std::string& s : m.suspect())
      repeats.suspects.push_back(absl::StrCat("job ", row->job_id(), ": ", s));
  }
  return repeats;
}

// The 7 cells from examples/s median to the step-time CI's median; all
// absent without an OK repeat.
void AppendRateCells(const std::vector<double>& rates, const std::vector<double>& cis,
                     std::vector<Cell>* cells) {
  if (rates.empty()) {
    for (int i = 0; i < 7; ++i) cells->emplace_back();
    return;
  }
  const double median = Median(rates);
  double sum = 0;
  for (double r : rates) sum += r;
  const double mean = sum / static_cast<double>(rates.size());
  const auto [min, max] = std::minmax_element(rates.begin(), rates.end());
  cells->emplace_back(median);
  cells->emplace_back(mean);
  cells->emplace_back(*min);
  cells->emplace_back(*max);
  cells->emplace_back(median > 0 ? Cell{(*max - *min) / median * 100} : Cell{});
  if (rates.size() >= 2 && mean > 0) {
    double squares = 0;
    for (double r : rates) squares += (r - mean) * (r - mean);
    cells->emplace_back(std::sqrt(squares / static_cast<double>(rates.size() - 1)) / mean * 100);
  } else {
    cells->emplace_back();
  }
  cells->emplace_back(Median(cis));
}

// The repeats table's row of one configuration's `group` of results.
std::vector<Cell> RepeatsRow(const std::vector<const v1::ResultRow*>& group,
                             const ConfigColumns& config_columns) {
  const RepeatMeasurements repeats = CollectRepeats(group);
  std::vector<Cell> cells;
  cells.push_back(TextCell(absl::StrJoin(repeats.job_ids, " ")));
  config_columns.AppendCells(group.front()->config(), &cells);
  cells.emplace_back(static_cast<int64_t>(repeats.rates.size()));
  cells.emplace_back(static_cast<int64_t>(group.size()));
  AppendRateCells(repeats.rates, repeats.cis, &cells);
  // The server's interval of the configuration's mean over its repeats
  // (server/repeat_rounds.h), the same on each of its rows of one sweep;
  // none where the rows come from several sweeps (each has its own).
  const bool one_sweep = std::all_of(group.begin(), group.end(), [&](const v1::ResultRow* row) {
    return row->sweep_id() == group.front()->sweep_id();
  });
  const v1::RepeatInterval interval =
      one_sweep ? group.front()->repeat_interval() : v1::RepeatInterval();
  cells.push_back(interval.runs() >= 2 ? Cell{interval.half_width_rel() * 100} : Cell{});
  cells.push_back(interval.target() > 0 ? Cell{interval.target() * 100} : Cell{});
  cells.push_back(TextCell(interval.target_status()));
  cells.push_back(TextCell(absl::StrJoin(repeats.suspects, "; ")));
  std::vector<std::string> others;
  others.reserve(repeats.other_outcomes.size());
  for (const auto& [outcome, count] : repeats.other_outcomes)
    others.push_back(absl::StrCat(outcome, " x", count));
  cells.push_back(TextCell(absl::StrJoin(others, ", ")));
  return cells;
}

}  // namespace

ResultTable BuildRepeatsTable(const std::vector<v1::ResultRow>& rows) {
  const std::vector<std::vector<const v1::ResultRow*>> groups = GroupByConfig(rows);
  const ConfigColumns config_columns(rows);
  ResultTable table;
  table.columns.push_back({"jobs", "jobs", ColumnUnit::kText});
  config_columns.AppendColumns(&table.columns);
  AppendRepeatsColumns(&table.columns);
  for (const std::vector<const v1::ResultRow*>& group : groups) {
    table.rows.push_back(RepeatsRow(group, config_columns));
    table.step_seconds.emplace_back();
  }
  return table;
}

ResultTable BuildOpsTable(const std::vector<v1::ResultRow>& rows, size_t top) {
  std::vector<v1::ResultRow> profiled;
  for (const v1::ResultRow& row : rows) {
    if (row.has_measurement() && row.measurement().op_profile_size() > 0) profiled.push_back(row);
  }
  const ConfigColumns config_columns(profiled);
  ResultTable table;
  table.columns.push_back({"job_id", "job", ColumnUnit::kInteger});
  config_columns.AppendColumns(&table.columns);
  for (ResultColumn column : std::vector<ResultColumn>{
           {"operator", "operator", ColumnUnit::kText},
           {"self_share_pct", "share", ColumnUnit::kPercent},
           {"calls", "calls", ColumnUnit::kInteger},
           {"self_ms", "self", ColumnUnit::kMillis},
           {"total_ms", "total", ColumnUnit::kMillis},
           {"gflops_per_sec", "GFLOP/s", ColumnUnit::kRate},
           {"input_shapes", "input shapes (heaviest)", ColumnUnit::kText},
       }) {
    table.columns.push_back(std::move(column));
  }
  for (const v1::ResultRow& row : profiled) {
    const v1::Measurement& m = row.measurement();
    const std::vector<v1::OpProfile> ops =
        model::SumByName({m.op_profile().begin(), m.op_profile().end()});
    for (size_t i = 0; i < ops.size() && (top == 0 || i < top); ++i) {
      const v1::OpProfile& op = ops[i];
      std::vector<Cell> cells;
      cells.emplace_back(row.job_id());
      config_columns.AppendCells(row.config(), &cells);
      cells.push_back(TextCell(op.name()));
      cells.emplace_back(op.self_share() * 100);
      cells.emplace_back(op.calls());
      cells.emplace_back(op.self_seconds() * 1e3);
      cells.emplace_back(op.total_seconds() * 1e3);
      cells.push_back(op.flops() > 0 && op.total_seconds() > 0
                          ? Cell{op.flops() / op.total_seconds() / 1e9}
                          : Cell{});
      cells.push_back(TextCell(op.input_shapes()));
      table.rows.push_back(std::move(cells));
      table.step_seconds.emplace_back();
    }
  }
  return table;
}

}  // namespace paradnn::client
