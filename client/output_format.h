// What the CLI prints: results as an aligned table, CSV (RFC 4180) or JSON,
// sweep and worker listings. Pure functions of their inputs; thread-safe.
#ifndef PARADNN_CLIENT_OUTPUT_FORMAT_H_
#define PARADNN_CLIENT_OUTPUT_FORMAT_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::client {

enum class OutputFormat { kTable, kCsv, kJson };

// "table" | "csv" | "json"; InvalidArgument naming --format otherwise.
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name);

// One value of a results row: absent, integer, real or text.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

// How a column is shown in the human table (CSV and JSON print raw values).
enum class ColumnUnit {
  kText,
  kInteger,
  kCount,    // SI suffixes: 2.36M
  kMillis,   // a duration given in milliseconds: 850µs, 12.3 ms, 1.20 s
  kPercent,  // 1.23%
  kRatio,    // 0.012
  kRate,     // 3 significant digits: 12.3, 1.23k
  kFlag,     // text shown as "!" when present (the text itself in CSV and JSON)
};

struct ResultColumn {
  std::string name;   // CSV header and JSON key
  std::string title;  // human table header
  ColumnUnit unit;
};

// Results of one sweep as columns and rows: job_id, every hyper-parameter
// (sorted union of keys across rows), precision, optimizer, then the
// measurement fields. A field the row has no value for (no result yet, or
// an outcome without timed steps) is std::monostate.
struct ResultTable {
  std::vector<ResultColumn> columns;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::vector<double>> step_seconds;  // per row, when requested
};

// job_id, repeat (only when some row has repeat > 0), the configuration
// columns, then the measurement columns.
ResultTable BuildResultTable(const std::vector<v1::ResultRow>& rows);

// The configuration columns of result tables: every hyper-parameter (sorted
// union of keys across rows), every option, every stack setting (as
// "stack.blas_core"), precision, optimizer. A key that would shadow a fixed
// column is prefixed "param_".
struct ConfigColumns {
  explicit ConfigColumns(const std::vector<v1::ResultRow>& rows);
  void AppendColumns(std::vector<ResultColumn>* columns) const;
  void AppendCells(const v1::ModelConfig& config, std::vector<Cell>* cells) const;

  std::vector<std::string> params;
  std::vector<std::string> options;
  std::vector<std::string> stack;
};

// A text cell; "" is absent.
Cell TextCell(const std::string& text);

// Whether any row measures a repeat beyond the first (SweepSpec.repeats > 1).
bool HasRepeats(const std::vector<v1::ResultRow>& rows);

// Header line then one line per row, fields quoted per RFC 4180 when they
// hold a comma, quote or line break; lines end in "\n". Reals print in the
// shortest form that reads back exactly; absent values are empty fields.
// With `samples`, a last column step_seconds holds the per-step times
// separated by spaces.
std::string FormatCsv(const ResultTable& table, bool samples);

// A JSON array of objects keyed by column name (numbers as JSON numbers,
// absent values as null), plus a "step_seconds" array with `samples`.
std::string FormatJson(const ResultTable& table, bool samples);

// An aligned text table in human units; columns that are empty in every row
// are left out, long errors are shortened.
std::string FormatHumanTable(const ResultTable& table);

// The table a terminal shows by default, about 120 columns: FormatHumanTable
// without the columns only `--wide` shows (p10, p90, cv, steps, stop, exec
// GF/s, HFU, threads, #params, worker, error; a repeats table's mean, min
// and max), with the columns equal in every row moved to one line under it
// ("every row: input=2000 optimizer=rmsprop"), then what each `!` flags and
// each error, per job.
std::string FormatNarrowTable(const ResultTable& table);

// One field of CSV, quoted when needed.
std::string CsvField(absl::string_view text);

// One CSV record: the fields quoted as needed, comma-separated, and "\n".
std::string CsvLine(const std::vector<std::string>& fields);

// `text` with every control character (C0, DEL, and C1 in UTF-8) written
// as a visible escape ("\x1b", "\u009b"), for the human table: a worker id,
// host name or error text cannot move the cursor, recolour or retitle the
// terminal. CSV and JSON keep the exact text.
std::string EscapeForTerminal(absl::string_view text);

// Aligned plain-text columns: numbers right-aligned where `right_align`
// says so. Widths count UTF-8 code points; every cell goes through
// EscapeForTerminal.
std::string AlignColumns(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right_align);

// Shortest text that reads back as exactly `value`; "" for NaN and
// infinities (an empty CSV field).
std::string ShortestDouble(double value);
// Three significant digits for values below 1000 (whole numbers above).
std::string Significant3(double value);

// Human units used by the tables.
std::string HumanCount(double value);                             // 950, 12.3k, 2.36M, 1.20G
std::string HumanMillis(double millis);                           // 850µs, 12.3 ms, 1.20 s
std::string HumanClock(double seconds);                           // 0:42, 12:03, 1:02:03
std::string HumanAge(int64_t then_unix_ms, int64_t now_unix_ms);  // 3s ago, 5m ago, -

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_OUTPUT_FORMAT_H_
