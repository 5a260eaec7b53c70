// The results table: one column per measurement fact (MeasurementColumns,
// the one description of a result row on the client side), the
// configuration's columns, and BuildResultTable (client/output_format.h),
// which every output format reads.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "client/output_format.h"
#include "common/host_sentinel.h"
#include "paradnn/v1/metrics.pb.h"
#include "platform/stack_findings.h"

namespace paradnn::client {
namespace {

Cell Text(const std::string& text) {
  if (text.empty()) return std::monostate{};
  return text;
}

// One result row as the measurement columns read it.
struct RowView {
  const v1::ResultRow& row;
  const v1::Measurement& m;
  const v1::StepStats& stats;
  // Outcomes other than OK (OOM, ERROR, ...) carry no meaningful timing.
  bool timed;
  // A budgeted sweep's unmeasured configuration (row.prediction).
  bool predicted;
  Cell IfTimed(double v) const { return timed ? Cell{v} : Cell{}; }
  Cell IfPredicted(double v) const { return predicted ? Cell{v} : Cell{}; }
  // A utilization figure as a percentage; blank without a roof.
  Cell Percent(double fraction) const {
    return timed && fraction > 0 ? Cell{fraction * 100} : Cell{};
  }
};

constexpr double kMiB = 1024.0 * 1024.0;

// The job a reused result was measured for; blank for the job's own.
Cell ReusedFrom(const RowView& r) {
  const int64_t job = r.row.reused_from_job_id();
  return job > 0 ? Cell{job} : Cell{};
}

// A column that follows the hyper-parameters: its name, title and unit, and
// its cell.
struct MeasurementColumn {
  ResultColumn column;
  Cell (*cell)(const RowView& r);
};

// The fixed columns that follow the hyper-parameters, in order: one table,
// so a column's header and its value cannot drift apart.
// NOLINTNEXTLINE(readability-function-size): a table of every column, one entry each
const std::vector<MeasurementColumn>& MeasurementColumns() {
  static const std::vector<MeasurementColumn>* const kColumns = new std::vector<MeasurementColumn>{
      // measured | predicted (docs/prediction.md); blank while neither.
      {{"source", "source", ColumnUnit::kText},
       [](const RowView& r) -> Cell {
         if (r.row.has_measurement()) return std::string("measured");
         if (r.predicted) return std::string("predicted");
         return std::monostate{};
       }},
      {{"examples_per_sec", "ex/s", ColumnUnit::kRate},
       [](const RowView& r) {
         return r.predicted ? Cell{r.row.prediction().examples_per_sec()}
                            : r.IfTimed(r.m.examples_per_sec());
       }},
      // Measurement.suspect joined with "; ": why the number may be off.
      {{"suspect", "!", ColumnUnit::kFlag},
       [](const RowView& r) { return Text(absl::StrJoin(r.m.suspect(), "; ")); }},
      {{"step_median_ms", "median", ColumnUnit::kMillis},
       [](const RowView& r) {
         return r.predicted ? Cell{r.row.prediction().step_seconds() * 1e3}
                            : r.IfTimed(r.stats.median_s() * 1e3);
       }},
      // A prediction's 90 % interval of a re-measurement and the results
      // its model was fitted on.
      {{"predicted_low_ms", "pred lo", ColumnUnit::kMillis},
       [](const RowView& r) { return r.IfPredicted(r.row.prediction().step_seconds_low() * 1e3); }},
      {{"predicted_high_ms", "pred hi", ColumnUnit::kMillis},
       [](const RowView& r) {
         return r.IfPredicted(r.row.prediction().step_seconds_high() * 1e3);
       }},
      {{"predicted_from", "pred from", ColumnUnit::kInteger},
       [](const RowView& r) {
         return r.predicted ? Cell{int64_t{r.row.prediction().measurements()}} : Cell{};
       }},
      {{"step_ci95_pct", "±ci95", ColumnUnit::kPercent},
       [](const RowView& r) { return r.IfTimed(r.stats.ci95_rel() * 100); }},
      // Where a re-run is expected on this platform (95 %), and what the
      // coordinator's re-run model rests on (server/analysis/rerun_model.h).
      {{"rerun_pct", "±re-run", ColumnUnit::kPercent},
       [](const RowView& r) {
         return r.row.has_rerun() ? Cell{r.row.rerun().half_width_rel() * 100} : Cell{};
       }},
      {{"rerun_basis", "re-run basis", ColumnUnit::kText},
       [](const RowView& r) { return r.row.has_rerun() ? Text(r.row.rerun().basis()) : Cell{}; }},
      // The host-speed sentinel's matmul around the job, against the
      // worker's calibration.
      {{"host_speed_pct", "host", ColumnUnit::kPercent},
       [](const RowView& r) {
         const std::optional<double> speed = common::HostSpeedAround(r.m.sentinel());
         return speed ? Cell{*speed * 100} : Cell{};
       }},
      {{"step_p10_ms", "p10", ColumnUnit::kMillis},
       [](const RowView& r) { return r.IfTimed(r.stats.p10_s() * 1e3); }},
      {{"step_p90_ms", "p90", ColumnUnit::kMillis},
       [](const RowView& r) { return r.IfTimed(r.stats.p90_s() * 1e3); }},
      {{"step_cv", "cv", ColumnUnit::kRatio},
       [](const RowView& r) { return r.IfTimed(r.stats.cv()); }},
      {{"steps", "steps", ColumnUnit::kInteger},
       [](const RowView& r) { return r.timed ? Cell{int64_t{r.stats.steps()}} : Cell{}; }},
      {{"stop_reason", "stop", ColumnUnit::kText},
       [](const RowView& r) { return r.timed ? Text(r.stats.stop_reason()) : Cell{}; }},
      {{"model_gflops_per_sec", "model GF/s", ColumnUnit::kRate},
       [](const RowView& r) {
         return r.predicted ? Cell{r.row.prediction().model_flops_per_sec() / 1e9}
                            : r.IfTimed(r.m.model_flops_per_sec() / 1e9);
       }},
      {{"executed_gflops_per_sec", "exec GF/s", ColumnUnit::kRate},
       [](const RowView& r) { return r.IfTimed(r.m.executed_flops_per_sec() / 1e9); }},
      // Against the worker's calibrated roof of the job's kernel path and
      // compute dtype (the stack's best), then against the silicon's peak.
      {{"mfu_pct", "MFU", ColumnUnit::kPercent},
       [](const RowView& r) { return r.Percent(r.m.mfu()); }},
      {{"hfu_pct", "HFU", ColumnUnit::kPercent},
       [](const RowView& r) { return r.Percent(r.m.hfu()); }},
      {{"silicon_mfu_pct", "MFU(si)", ColumnUnit::kPercent},
       [](const RowView& r) { return r.Percent(r.m.silicon_mfu()); }},
      {{"intra_op_threads", "threads", ColumnUnit::kInteger},
       [](const RowView& r) { return r.timed ? Cell{int64_t{r.m.intra_op_threads()}} : Cell{}; }},
      {{"params", "#params", ColumnUnit::kCount},
       [](const RowView& r) {
         return r.m.counts().params() > 0 ? Cell{r.m.counts().params()} : Cell{};
       }},
      // The runner's peak resident memory, and on a CUDA device the caching
      // allocator's peak of the job; blank where not measured.
      {{"peak_rss_mib", "RSS MiB", ColumnUnit::kRate},
       [](const RowView& r) {
         return r.m.peak_rss_bytes() > 0 ? Cell{static_cast<double>(r.m.peak_rss_bytes()) / kMiB}
                                         : Cell{};
       }},
      {{"peak_device_mib", "device MiB", ColumnUnit::kRate},
       [](const RowView& r) {
         return r.m.peak_device_memory_bytes() > 0
                    ? Cell{static_cast<double>(r.m.peak_device_memory_bytes()) / kMiB}
                    : Cell{};
       }},
      {{"outcome", "outcome", ColumnUnit::kText},
       [](const RowView& r) -> Cell {
         if (r.row.has_measurement()) return v1::Outcome_Name(r.m.outcome());
         return std::string(absl::StripPrefix(v1::JobState_Name(r.row.state()), "JOB_"));
       }},
      {{"worker", "worker", ColumnUnit::kText},
       [](const RowView& r) { return Text(r.row.worker_id()); }},
      // Taken from an earlier sweep's job instead of measured again
      // (RunSettings.fresh; docs/prediction.md, "Reusing results").
      {{"reused_from_job", "reused from", ColumnUnit::kInteger}, ReusedFrom},
      {{"error", "error", ColumnUnit::kText}, [](const RowView& r) { return Text(r.m.error()); }},
  };
  return *kColumns;
}

bool IsFixedColumn(const std::string& name) {
  if (name == "job_id" || name == "repeat" || name == "precision" || name == "optimizer") {
    return true;
  }
  for (const MeasurementColumn& c : MeasurementColumns()) {
    if (c.column.name == name) return true;
  }
  return false;
}

}  // namespace

Cell TextCell(const std::string& text) { return Text(text); }

ConfigColumns::ConfigColumns(const std::vector<v1::ResultRow>& rows) {
  std::set<std::string> param_set;
  std::set<std::string> option_set;
  std::set<std::string> stack_set;
  for (const v1::ResultRow& row : rows) {
    for (const auto& [key, unused] : row.config().params()) param_set.insert(key);
    for (const auto& [key, unused] : row.config().options()) option_set.insert(key);
    for (const auto& [key, unused] : row.config().stack()) stack_set.insert(key);
  }
  params.assign(param_set.begin(), param_set.end());
  options.assign(option_set.begin(), option_set.end());
  stack.assign(stack_set.begin(), stack_set.end());
}

void ConfigColumns::AppendColumns(std::vector<ResultColumn>* columns) const {
  for (const std::string& key : params) {
    // A future family's parameter must not shadow a measurement column.
    const std::string name = IsFixedColumn(key) ? "param_" + key : key;
    columns->push_back({name, name, ColumnUnit::kInteger});
  }
  for (const std::string& key : options) {
    const std::string name = IsFixedColumn(key) ? "param_" + key : key;
    columns->push_back({name, name, ColumnUnit::kText});
  }
  for (const std::string& key : stack) {
    const std::string name = absl::StrCat(common::kStackKeyPrefix, key);
    columns->push_back({name, name, ColumnUnit::kText});
  }
  columns->push_back({"precision", "precision", ColumnUnit::kText});
  columns->push_back({"optimizer", "optimizer", ColumnUnit::kText});
}

void ConfigColumns::AppendCells(const v1::ModelConfig& config, std::vector<Cell>* cells) const {
  for (const std::string& key : params) {
    const auto it = config.params().find(key);
    cells->push_back(it == config.params().end() ? Cell{} : Cell{it->second});
  }
  for (const std::string& key : options) {
    const auto it = config.options().find(key);
    cells->push_back(it == config.options().end() ? Cell{} : Text(it->second));
  }
  for (const std::string& key : stack) {
    const auto it = config.stack().find(key);
    cells->push_back(it == config.stack().end() ? Cell{} : Text(it->second));
  }
  cells->push_back(Text(config.precision()));
  cells->push_back(Text(config.optimizer()));
}

bool HasRepeats(const std::vector<v1::ResultRow>& rows) {
  for (const v1::ResultRow& row : rows) {
    if (row.repeat() > 0) return true;
  }
  return false;
}

ResultTable BuildResultTable(const std::vector<v1::ResultRow>& rows) {
  const ConfigColumns config_columns(rows);
  const bool repeats = HasRepeats(rows);
  ResultTable table;
  table.columns.push_back({"job_id", "job", ColumnUnit::kInteger});
  if (repeats) table.columns.push_back({"repeat", "repeat", ColumnUnit::kInteger});
  config_columns.AppendColumns(&table.columns);
  for (const MeasurementColumn& c : MeasurementColumns()) table.columns.push_back(c.column);

  for (const v1::ResultRow& row : rows) {
    std::vector<Cell> cells;
    cells.reserve(table.columns.size());
    cells.emplace_back(row.job_id());
    if (repeats) cells.emplace_back(int64_t{row.repeat()});
    config_columns.AppendCells(row.config(), &cells);

    const v1::Measurement& m = row.measurement();
    const RowView view{row, m, m.stats(),
                       row.has_measurement() && (m.outcome() == v1::OK || m.stats().steps() > 0),
                       !row.has_measurement() && row.has_prediction()};
    for (const MeasurementColumn& c : MeasurementColumns()) cells.push_back(c.cell(view));
    table.rows.push_back(std::move(cells));
    table.step_seconds.emplace_back(m.step_seconds().begin(), m.step_seconds().end());
  }
  return table;
}

}  // namespace paradnn::client
