#include "db/statement.h"

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "db/statement_cache.h"

namespace paradnn::db {

// ---- Statement -------------------------------------------------------------

Statement::Statement(sqlite3* db, const char* sql, Caching caching) : db_(db) {
  internal::StatementCache* cache =
      caching == kCached ? internal::CurrentStatementCache() : nullptr;
  if (cache != nullptr && cache->db() == db) {
    absl::StatusOr<internal::StatementCache::Entry*> entry = cache->Acquire(sql);
    if (!entry.ok()) {
      status_ = entry.status();
      return;
    }
    if (*entry != nullptr) {
      stmt_ = (*entry)->stmt;
      in_use_ = &(*entry)->in_use;
      *in_use_ = true;
      return;
    }
  }
  status_ = internal::PrepareOneStatement(db, sql, 0, &stmt_);
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (in_use_ != nullptr) {
    // Reset releases the statement's read snapshot; clearing bindings keeps
    // one caller's values from leaking into the next.
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    *in_use_ = false;
  } else {
    sqlite3_finalize(stmt_);
  }
}

void Statement::Reset() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

namespace {
absl::Status BindResult(sqlite3* db, int rc, int index) {
  if (rc == SQLITE_OK) return absl::OkStatus();
  return SqliteError(db, rc, absl::StrCat("bind parameter ", index).c_str());
}
}  // namespace

Statement& Statement::Bind(int index, int64_t value) {
  if (status_.ok()) status_ = BindResult(db_, sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  if (status_.ok()) status_ = BindResult(db_, sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, const std::string& value) {
  if (status_.ok()) {
    status_ = BindResult(db_,
                         sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                                             SQLITE_TRANSIENT, SQLITE_UTF8),
                         index);
  }
  return *this;
}

Statement& Statement::BindBlob(int index, const std::string& bytes) {
  if (status_.ok()) {
    // data() is never null, so an empty message is stored as an empty blob,
    // not NULL.
    status_ = BindResult(
        db_, sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT),
        index);
  }
  return *this;
}

Statement& Statement::BindNull(int index) {
  if (status_.ok()) status_ = BindResult(db_, sqlite3_bind_null(stmt_, index), index);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  if (!status_.ok()) return status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  status_ = SqliteError(db_, rc,
                        absl::StrCat("\"", internal::SqlSnippet(sqlite3_sql(stmt_)), "\"").c_str());
  return status_;
}

absl::Status Statement::Run() {
  return ForEachRow([] {});
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string_view Statement::ColumnTextView(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return std::string_view();
  return std::string_view(reinterpret_cast<const char*>(text),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string Statement::ColumnBlob(int col) const {
  const void* data = sqlite3_column_blob(stmt_, col);
  if (data == nullptr) return std::string();
  return std::string(static_cast<const char*>(data),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

// ---- free functions -------------------------------------------------------

absl::Status Exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  // sqlite3_exec hands back the message of the statement that failed; only
  // the code mapping is shared with SqliteError.
  absl::Status coded = SqliteError(nullptr, rc, "");
  return absl::Status(coded.code(), absl::StrCat("\"", internal::SqlSnippet(sql), "\": ", text,
                                                 " (sqlite ", rc, ")"));
}

absl::Status SqliteError(sqlite3* db, int rc, const char* what) {
  std::string message;
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) {
    message = sqlite3_errmsg(db);
  } else {
    message = sqlite3_errstr(rc);
  }
  std::string text = absl::StrCat(what, ": ", message, " (sqlite ", rc, ")");
  switch (rc & 0xff) {
    case SQLITE_OK:
      return absl::InternalError(absl::StrCat(what, ": SqliteError called with SQLITE_OK"));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
      return absl::UnavailableError(text);
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return absl::AlreadyExistsError(text);
      }
      return absl::FailedPreconditionError(text);
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
      return absl::FailedPreconditionError(text);
    case SQLITE_CORRUPT:
      return absl::DataLossError(text);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::PermissionDeniedError(text);
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(text);
    case SQLITE_INTERRUPT:
    case SQLITE_ABORT:
      return absl::AbortedError(text);
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
      return absl::InvalidArgumentError(text);
    default:
      return absl::InternalError(text);
  }
}

}  // namespace paradnn::db
