#include "client/output_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/host_sentinel.h"
#include "common/stack_findings.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::client {
namespace {

constexpr size_t kMaxErrorWidth = 60;

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

std::string EscapeForTerminal(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      absl::StrAppend(&out, absl::StrFormat("\\x%02x", c));
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // U+0080..U+009F, the C1 controls (CSI among them) in UTF-8.
      absl::StrAppend(&out, absl::StrFormat("\\u%04x", static_cast<unsigned char>(text[i + 1])));
      ++i;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

namespace {

size_t DisplayWidth(absl::string_view text) {
  size_t width = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;
  }
  return width;
}

// At most `max_points` code points of `text`, with "…" when shortened, on
// one line.
std::string OneLine(const std::string& text, size_t max_points) {
  std::string flat;
  for (char c : text) flat.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
  if (DisplayWidth(flat) <= max_points) return flat;
  size_t points = 0, i = 0;
  for (; i < flat.size(); ++i) {
    if ((static_cast<unsigned char>(flat[i]) & 0xC0) != 0x80) {
      if (points == max_points - 1) break;
      ++points;
    }
  }
  return flat.substr(0, i) + "…";
}

std::string HumanCell(const Cell& cell, ColumnUnit unit) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (unit == ColumnUnit::kFlag) return "!";
  if (const auto* text = std::get_if<std::string>(&cell)) return OneLine(*text, kMaxErrorWidth);
  const double v = std::holds_alternative<int64_t>(cell)
                       ? static_cast<double>(std::get<int64_t>(cell))
                       : std::get<double>(cell);
  switch (unit) {
    case ColumnUnit::kInteger:
      if (const auto* i = std::get_if<int64_t>(&cell)) return absl::StrCat(*i);
      return absl::StrFormat("%.0f", v);
    case ColumnUnit::kCount:
    case ColumnUnit::kRate:
      return HumanCount(v);
    case ColumnUnit::kMillis:
      return HumanMillis(v);
    case ColumnUnit::kPercent:
      return absl::StrCat(Significant3(v), "%");
    case ColumnUnit::kRatio:
      return absl::StrFormat("%.3f", v);
    case ColumnUnit::kText:
    case ColumnUnit::kFlag:
      break;
  }
  return ShortestDouble(v);
}

std::string RawCell(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return absl::StrCat(*i);
  if (const auto* d = std::get_if<double>(&cell)) return ShortestDouble(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

}  // namespace

std::string Significant3(double v) {
  const double a = std::fabs(v);
  if (a >= 99.95) return absl::StrFormat("%.0f", v);
  if (a >= 9.995) return absl::StrFormat("%.1f", v);
  if (a >= 0.9995) return absl::StrFormat("%.2f", v);
  return absl::StrFormat("%.3f", v);
}

std::string ShortestDouble(double value) {
  if (!std::isfinite(value)) return "";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--format: '", name, "' is not one of table|csv|json"));
}

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

std::string CsvField(absl::string_view text) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string CsvLine(const std::vector<std::string>& fields) {
  std::vector<std::string> quoted;
  quoted.reserve(fields.size());
  for (const std::string& field : fields) quoted.push_back(CsvField(field));
  return absl::StrCat(absl::StrJoin(quoted, ","), "\n");
}

std::string FormatCsv(const ResultTable& table, bool samples) {
  std::string out;
  std::vector<std::string> fields;
  fields.reserve(table.columns.size() + 1);
  for (const ResultColumn& c : table.columns) fields.push_back(CsvField(c.name));
  if (samples) fields.push_back("step_seconds");
  absl::StrAppend(&out, absl::StrJoin(fields, ","), "\n");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    fields.clear();
    for (const Cell& cell : table.rows[r]) fields.push_back(CsvField(RawCell(cell)));
    if (samples) {
      std::vector<std::string> steps;
      for (double s : table.step_seconds[r]) steps.push_back(ShortestDouble(s));
      fields.push_back(absl::StrJoin(steps, " "));
    }
    absl::StrAppend(&out, absl::StrJoin(fields, ","), "\n");
  }
  return out;
}

std::string FormatJson(const ResultTable& table, bool samples) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (size_t r = 0; r < table.rows.size(); ++r) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const Cell& cell = table.rows[r][c];
      nlohmann::ordered_json& slot = object[table.columns[c].name];
      if (const auto* i = std::get_if<int64_t>(&cell)) {
        slot = *i;
      } else if (const auto* d = std::get_if<double>(&cell)) {
        slot = std::isfinite(*d) ? nlohmann::ordered_json(*d) : nlohmann::ordered_json();
      } else if (const auto* s = std::get_if<std::string>(&cell)) {
        slot = *s;
      } else {
        slot = nullptr;
      }
    }
    if (samples) object["step_seconds"] = table.step_seconds[r];
    array.push_back(std::move(object));
  }
  // Replace invalid UTF-8 (an error text from a crashed runner) rather than
  // throw half-way through the output.
  return array.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string AlignColumns(const std::vector<std::string>& raw_header,
                         const std::vector<std::vector<std::string>>& raw_rows,
                         const std::vector<bool>& right_align) {
  // Cells come from workers and users (ids, host names, error texts): a
  // terminal must see their control characters as text, not obey them.
  std::vector<std::string> header;
  header.reserve(raw_header.size());
  for (const std::string& cell : raw_header) header.push_back(EscapeForTerminal(cell));
  std::vector<std::vector<std::string>> rows;
  rows.reserve(raw_rows.size());
  for (const auto& raw : raw_rows) {
    std::vector<std::string>& row = rows.emplace_back();
    for (const std::string& cell : raw) row.push_back(EscapeForTerminal(cell));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) widths[c] = DisplayWidth(header[c]);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  std::string out;
  auto append_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < widths.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      const std::string pad(widths[c] - DisplayWidth(cell), ' ');
      if (c > 0) line += "  ";
      line += right_align[c] ? pad + cell : cell + pad;
    }
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
  };
  append_line(header);
  for (const auto& row : rows) append_line(row);
  return out;
}

std::string FormatHumanTable(const ResultTable& table) {
  std::vector<size_t> shown;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const bool any = std::any_of(table.rows.begin(), table.rows.end(), [c](const auto& row) {
      return !std::holds_alternative<std::monostate>(row[c]);
    });
    if (any || table.rows.empty()) shown.push_back(c);
  }
  std::vector<std::string> header;
  std::vector<bool> right;
  for (size_t c : shown) {
    header.push_back(table.columns[c].title);
    right.push_back(table.columns[c].unit != ColumnUnit::kText);
  }
  std::vector<std::vector<std::string>> lines;
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    cells.reserve(shown.size());
    for (size_t c : shown) cells.push_back(HumanCell(row[c], table.columns[c].unit));
    lines.push_back(std::move(cells));
  }
  return AlignColumns(header, lines, right);
}

namespace {

// `text` in lines of at most `width` display columns, broken at spaces,
// the first line after `first`, the others after `rest`.
std::string Wrapped(const std::string& text, size_t width, const std::string& first,
                    const std::string& rest) {
  std::string out;
  std::string line = first;
  size_t line_width = DisplayWidth(first);
  bool empty = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t word_width = DisplayWidth(word);
    if (!empty && line_width + 1 + word_width > width) {
      absl::StrAppend(&out, line, "\n");
      line = rest;
      line_width = DisplayWidth(rest);
      empty = true;
    }
    if (!empty) {
      line += ' ';
      ++line_width;
    }
    absl::StrAppend(&line, word);
    line_width += word_width;
    empty = false;
  }
  absl::StrAppend(&out, line, "\n");
  return out;
}

}  // namespace

// The non-empty values of column `name` of `table`, row by row; none
// without such a column.
std::vector<std::string> ColumnValues(const ResultTable& table, const std::string& name) {
  std::vector<std::string> values;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (table.columns[c].name != name) continue;
    for (const auto& row : table.rows) {
      std::string value = RawCell(row[c]);
      if (!value.empty()) values.push_back(std::move(value));
    }
  }
  return values;
}

// What the two intervals of a narrow table mean, and what the re-run
// intervals of its rows rest on; "" without re-run intervals.
std::string RerunNote(const ResultTable& table) {
  const std::vector<std::string> values = ColumnValues(table, "rerun_basis");
  const std::set<std::string> bases(values.begin(), values.end());
  if (bases.empty()) return "";
  return absl::StrCat(
      "±ci95: the run's own 95 % interval; ±re-run: where a re-run's median is expected (95 %)\n"
      "  on the same platform, from: ",
      absl::StrJoin(bases, ", "),
      "\n  (re-runs: configurations measured there more than once; sentinel: the host-speed\n"
      "  sentinel's spread, no re-runs yet; prior: a shared host's typical spread, neither yet)\n");
}

// How many configurations of a repeats table reached the sweep's target
// interval, and where the others stand; "" without a target.
std::string TargetNote(const ResultTable& table) {
  const std::vector<std::string> statuses = ColumnValues(table, "target_status");
  if (statuses.empty()) return "";
  std::map<std::string, int> count_of;
  for (const std::string& status : statuses) ++count_of[status];
  const size_t with_status = statuses.size();
  std::vector<std::string> others;
  for (const auto& [status, count] : count_of) {
    if (status != "reached") others.push_back(absl::StrCat(count, " ", status));
  }
  return absl::StrCat("target interval: ", count_of["reached"], " of ", with_status,
                      " configurations reached it", others.empty() ? "" : "; ",
                      absl::StrJoin(others, ", "),
                      "\n  (±95 % of mean: where the configuration's mean step time lies, its "
                      "spread moderated\n  by the other configurations'; docs/sweep-files.md)\n");
}

std::string FormatNarrowTable(const ResultTable& table) {
  static const std::set<std::string> kWideOnly = {"step_p10_ms",
                                                  "host_speed_pct",
                                                  "rerun_basis",
                                                  "step_p90_ms",
                                                  "step_cv",
                                                  "steps",
                                                  "stop_reason",
                                                  "executed_gflops_per_sec",
                                                  "hfu_pct",
                                                  "intra_op_threads",
                                                  "params",
                                                  "peak_rss_mib",
                                                  "peak_device_mib",
                                                  "worker",
                                                  "reused_from_job",
                                                  "error",
                                                  "examples_per_sec_mean",
                                                  "examples_per_sec_min",
                                                  "examples_per_sec_max"};
  // What the rows say beside the table: `!` reasons and errors, per job.
  const auto column_named = [&table](const std::string& name) -> std::optional<size_t> {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (table.columns[c].name == name) return c;
    }
    return std::nullopt;
  };
  const std::optional<size_t> job = column_named("job_id");
  std::vector<std::string> notes;
  for (const auto& row : table.rows) {
    const std::string who = job ? absl::StrCat("job ", RawCell(row[*job])) : "a job";
    for (const char* name : {"suspect", "error"}) {
      const std::optional<size_t> c = column_named(name);
      if (!c || std::holds_alternative<std::monostate>(row[*c])) continue;
      const std::string text = RawCell(row[*c]);
      if (text.empty()) continue;
      // Error texts come from workers: shown escaped, as the table's cells are.
      notes.push_back(absl::StrCat(std::string(name) == "suspect" ? "! " : "error ", who, ": ",
                                   EscapeForTerminal(OneLine(text, 600))));
    }
  }
  ResultTable narrow;
  std::vector<size_t> kept;
  std::vector<std::string> constant;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const ResultColumn& column = table.columns[c];
    if (kWideOnly.count(column.name) > 0) continue;
    const bool fixed =
        column.name != "job_id" && column.name != "suspect" && table.rows.size() > 1 &&
        std::all_of(table.rows.begin(), table.rows.end(), [&](const auto& row) {
          return HumanCell(row[c], column.unit) == HumanCell(table.rows.front()[c], column.unit);
        });
    if (fixed) {
      const std::string value = HumanCell(table.rows.front()[c], column.unit);
      if (!value.empty()) {
        constant.push_back(EscapeForTerminal(absl::StrCat(column.title, "=", value)));
      }
      continue;
    }
    kept.push_back(c);
    narrow.columns.push_back(column);
  }
  for (const auto& row : table.rows) {
    std::vector<Cell> cells;
    cells.reserve(kept.size());
    for (size_t c : kept) cells.push_back(row[c]);
    narrow.rows.push_back(std::move(cells));
  }
  std::string out = FormatHumanTable(narrow);
  if (!constant.empty()) absl::StrAppend(&out, "every row: ", absl::StrJoin(constant, " "), "\n");
  if (!notes.empty()) {
    absl::StrAppend(&out, "!: the measurement may be off, for the reason given:\n");
    for (const std::string& note : notes) absl::StrAppend(&out, Wrapped(note, 118, "  ", "      "));
  }
  absl::StrAppend(&out, RerunNote(table));
  absl::StrAppend(&out, TargetNote(table));
  absl::StrAppend(&out, "(--wide: every column; --format csv|json: every field)\n");
  return out;
}

std::string HumanCount(double value) {
  if (!std::isfinite(value)) return "-";
  static constexpr const char* kSuffix[] = {"", "k", "M", "G", "T", "P"};
  size_t unit = 0;
  while (std::fabs(value) >= 999.5 && unit + 1 < std::size(kSuffix)) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0 && value == std::floor(value)) return absl::StrFormat("%.0f", value);
  return absl::StrCat(Significant3(value), kSuffix[unit]);
}

std::string HumanMillis(double millis) {
  if (!std::isfinite(millis)) return "-";
  if (millis == 0) return "0";
  if (std::fabs(millis) < 0.9995) return absl::StrCat(Significant3(millis * 1e3), " µs");
  if (std::fabs(millis) < 999.5) return absl::StrCat(Significant3(millis), " ms");
  return absl::StrCat(Significant3(millis / 1e3), " s");
}

std::string HumanClock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  const int64_t total = static_cast<int64_t>(std::llround(seconds));
  const int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  if (h > 0) return absl::StrFormat("%d:%02d:%02d", h, m, s);
  return absl::StrFormat("%d:%02d", m, s);
}

std::string HumanAge(int64_t then_unix_ms, int64_t now_unix_ms) {
  if (then_unix_ms <= 0) return "-";
  const int64_t seconds = (now_unix_ms - then_unix_ms) / 1000;
  if (seconds < 2) return "now";
  if (seconds < 60) return absl::StrCat(seconds, "s ago");
  if (seconds < 3600) return absl::StrCat(seconds / 60, "m ago");
  if (seconds < 86400) return absl::StrCat(seconds / 3600, "h ago");
  return absl::StrCat(seconds / 86400, "d ago");
}

}  // namespace paradnn::client
