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
#include "db/result_fields.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::client {
namespace {

constexpr size_t kMaxErrorWidth = 60;

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
  // Only --wide shows the result fields db/result_fields.h does not put in
  // the narrow table, and a repeats table's spread.
  static const std::set<std::string>* const kWideOnly = [] {
    auto* names = new std::set<std::string>{"examples_per_sec_mean", "examples_per_sec_min",
                                            "examples_per_sec_max"};
    for (const db::ResultField& field : db::ResultFields()) {
      if (field.shown && (field.shown->shown_in & db::kNarrowTable) == 0) {
        names->insert(field.shown->name);
      }
    }
    return names;
  }();
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
    if (kWideOnly->count(column.name) > 0) continue;
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
