// The facts of a result, described once (ResultFields): where each lives in
// a v1::ResultRow, the column of the results table that stores it, and how
// the results table shows it. Every reader and writer of those facts takes
// them from here:
//   - db/result_store.cc writes the results row's measured columns with the
//     INSERT that ResultInsertSql writes and BindStoredFields binds;
//   - client/result_table.cc builds the measurement columns of `paradnn
//     results` from the shown fields (ShownCell);
//   - python/paradnn/result_fields.py and dashboard/src/result_fields.js are
//     generated from the table (db/result_field_code.h) and read by the
//     Python package's result_frame and the dashboard's results table; a
//     test fails while either checked-in copy is stale.
// tests/unit/db/result_fields_test.cc checks the stored fields against the
// schema the migrations create. docs/extending.md, "A result field", walks
// through adding one.
//
// The table is data and the reading rules (ShownWhen) are few, so the three
// languages compute every cell the same way: `paradnn results --format csv`,
// the Python frame and the dashboard agree value for value.
//
// Everything here is immutable after first use; thread-safe.
#ifndef PARADNN_DB_RESULT_FIELDS_H_
#define PARADNN_DB_RESULT_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "db/statement.h"
#include "google/protobuf/message.h"
#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::db {

enum class SqlType { kInteger, kReal, kText };

// "INTEGER" | "REAL" | "TEXT", as the migrations declare them.
const char* SqlTypeName(SqlType type);

// Where a fact is stored: its results column. Only facts of the measurement
// are stored this way (the row's identity, worker and platform are the
// store's own columns).
struct StoredColumn {
  const char* column;
  SqlType type;
  // NULL where the value is 0: a utilization without its roof is unknown,
  // not zero, and analyses must not average it in.
  bool null_if_zero = false;
};

// How the human table prints a shown value (CSV, JSON and the Python frame
// keep the value itself). The client maps each to its ColumnUnit.
enum class ShownUnit {
  kText,
  kInteger,
  kCount,    // SI suffixes: 2.36M
  kMillis,   // a duration in milliseconds
  kPercent,  // 1.23%
  kRatio,    // 0.012
  kRate,     // 3 significant digits
  kFlag,     // text shown as "!" when present
};

// When a row has a value in a shown column (else the cell is blank). "Timed"
// is a measurement that is OK or took timed steps; "predicted" is a
// budgeted sweep's unmeasured job (a prediction and no measurement).
enum class ShownWhen {
  kAlways,            // numbers always; text when not ""
  kIfTimed,           // a timed measurement's
  kIfTimedPositive,   // timed, and > 0 (a utilization without its roof is 0)
  kIfPositive,        // > 0, timed or not (counted, or measured at all)
  kIfPredicted,       // a prediction's
  kPredictedOrTimed,  // the prediction's value (predicted_path), else the timed one
  kIfSet,             // the message the path starts in is set (the row's `rerun`)
  // Computed, not read from one field:
  kSource,     // "measured" | "predicted" | blank
  kOutcome,    // the Outcome's name, else the job state's without "JOB_"
  kHostSpeed,  // the sentinel's speed around the job (common::HostSpeedAround)
};

// The names the generated tables use: "text", "integer", "count", "millis",
// "percent", "ratio", "rate", "flag"; and "always", "if_timed", ...,
// "host_speed" (the enumerators in snake case).
const char* ShownUnitName(ShownUnit unit);
const char* ShownWhenName(ShownWhen when);

// Where the human table shows a column besides `--wide`.
enum ShownIn : unsigned {
  kWideOnly = 0,
  kNarrowTable = 1,  // `paradnn results` without --wide
  kDashboard = 2,    // the dashboard's results table
};

struct ShownColumn {
  const char* name;   // CSV header, JSON key, Python column, dashboard filter key
  const char* title;  // human table header
  ShownUnit unit;
  ShownWhen when;
  unsigned shown_in;  // ShownIn bits
  // The number shown is value * multiply / divide (written so, not as one
  // factor, so that 1e9 divides exactly as the CLI always has).
  double multiply = 1;
  double divide = 1;
  // kPredictedOrTimed: where a predicted row's value lives.
  const char* predicted_path = nullptr;
};

struct ResultField {
  // Where the value lives in v1::ResultRow: field names joined by ".", and
  // for a map<string, string> the key as the last part
  // ("measurement.stack.blas_core"). A repeated string reads as its values
  // joined with "; ". "" for a computed column (kSource).
  const char* path;
  std::optional<StoredColumn> stored;  // path then starts with "measurement."
  std::optional<ShownColumn> shown;
};

// Every result field: the shown ones in the order `paradnn results` prints
// them after the configuration, then those only stored.
const std::vector<ResultField>& ResultFields();

// A field's value: integers and enums (their number) as int64, reals as
// double, text as string.
using FieldValue = std::variant<int64_t, double, std::string>;

// The value at `path` (ResultField::path, relative to `message`); fields of
// unset messages read as their defaults. Aborts for a path the message's
// type does not have: the table is checked by its test.
FieldValue ReadFieldPath(const google::protobuf::Message& message, const std::string& path);

// "INSERT INTO results (job_id, attempt_id, worker_id, platform_id,
// measurement, created_unix_ms, harness, trust_domain, <every stored
// column>) VALUES (...)": ?1 to ?6 are bound by the store (job, attempt,
// worker, platform, blob, time), the harness and trust domain come from the
// worker's row, and ?7 on are BindStoredFields'.
const std::string& ResultInsertSql();
inline constexpr int kFirstStoredFieldParam = 7;

// Binds every stored column of `measurement`, from kFirstStoredFieldParam
// on, in ResultFields order.
void BindStoredFields(const v1::Measurement& measurement, Statement& insert);

// The cell of `field` (shown) for `row`: nullopt where blank. Integer units
// give int64, the others of numbers double (value * multiply / divide),
// text units string ("" is blank).
std::optional<FieldValue> ShownCell(const ResultField& field, const v1::ResultRow& row);

}  // namespace paradnn::db

#endif  // PARADNN_DB_RESULT_FIELDS_H_
