// Statement runs one SQL statement on a connection a Database handed to a
// Read or Write function; Exec runs SQL without results, and SqliteError is
// the one mapping from SQLite result codes to Status codes. db/database.h
// includes this header, so its callers see all of it.
//
// A Statement is used on the thread that owns its connection; it is not
// thread-safe, and neither is sharing one connection between threads.
#ifndef PARADNN_DB_STATEMENT_H_
#define PARADNN_DB_STATEMENT_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paradnn::db {

// RAII prepared statement: cached per connection (SQLITE_PREPARE_PERSISTENT)
// and reset + cleared on destruction. Parameters are bound by index (1-based).
// Caching applies to the connection a Read/Write function was handed, on
// that function's thread; the same SQL nested inside its own loop, or any
// other sqlite3*, gets a private statement finalized on destruction. The
// SQL must be one statement (InvalidArgument otherwise). Errors from
// prepare and Bind are kept in status() and returned by Step()/Run().
class Statement {
 public:
  // kUncached: prepared for this Statement only and finalized with it, for
  // SQL generated per request, which must not grow the connection's cache.
  enum Caching { kCached, kUncached };

  Statement(sqlite3* db, const char* sql, Caching caching = kCached);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  absl::Status status() const { return status_; }
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, const std::string& value);  // TEXT
  Statement& BindBlob(int index, const std::string& bytes);
  Statement& BindNull(int index);

  // Rewinds for another run with new bindings; an earlier error stays.
  void Reset();
  // Steps once: true while a row is available, false when done.
  absl::StatusOr<bool> Step();
  // Steps to completion (for statements that return no rows).
  absl::Status Run();
  // Steps through every row, calling `visit()` on each (the Column readers
  // see that row). `visit` returns void or absl::Status; the first error,
  // a step's or one `visit` returns, stops the walk and is returned.
  template <typename Visit>
  absl::Status ForEachRow(Visit visit);

  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  // The text without a copy: valid until the next Step() or destruction.
  // Empty for NULL.
  std::string_view ColumnTextView(int col) const;
  std::string ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  absl::Status status_;
  // Set when stmt_ is borrowed from the connection's cache (cleared again on
  // destruction); null when stmt_ is owned and finalized here.
  bool* in_use_ = nullptr;
};

template <typename Visit>
absl::Status Statement::ForEachRow(Visit visit) {
  for (;;) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
    if constexpr (std::is_void_v<std::invoke_result_t<Visit&>>) {
      visit();
    } else if (absl::Status visited = visit(); !visited.ok()) {
      return visited;
    }
  }
}

// Runs SQL without results (DDL, pragmas).
absl::Status Exec(sqlite3* db, const char* sql);
// Converts an SQLite result code into a Status naming the operation.
absl::Status SqliteError(sqlite3* db, int rc, const char* what);

}  // namespace paradnn::db

#endif  // PARADNN_DB_STATEMENT_H_
