// The prepared statements behind Statement (db/statement.h): how one SQL
// string is prepared, and each connection's cache of hot statements.
// Database owns one StatementCache per connection and installs it with
// ScopedStatementCache around every Read and Write function; a Statement
// built on that thread and connection borrows from it. Internal to db/.
//
// Thread-compatible: a connection, and so its cache, is used by one thread
// at a time; the installed cache is per thread.
#ifndef PARADNN_DB_STATEMENT_CACHE_H_
#define PARADNN_DB_STATEMENT_CACHE_H_

#include <sqlite3.h>

#include <string>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paradnn::db::internal {

// The start of `sql`, trimmed, for error messages ("" for null).
std::string SqlSnippet(const char* sql);

// Prepares `sql` into `*out` with sqlite3_prepare_v3 `flags`. The SQL must
// be exactly one statement: InvalidArgument (and `*out` null) when it holds
// none or more, the SQLite error when it does not compile.
absl::Status PrepareOneStatement(sqlite3* db, const char* sql, unsigned int flags,
                                 sqlite3_stmt** out);

// Prepared statements of one connection, kept for the connection's lifetime
// so that hot statements (lease, store, bulk insert) are compiled once.
// Finalizes them on destruction, which must come before the connection
// closes.
class StatementCache {
 public:
  struct Entry {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache();
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  sqlite3* db() const { return db_; }

  // The cached statement for `sql`, prepared on first use. nullptr when the
  // cached one is already borrowed (the same SQL nested in its own loop);
  // the caller then prepares a private copy. The entry lives as long as the
  // cache.
  absl::StatusOr<Entry*> Acquire(const char* sql);

 private:
  sqlite3* db_;
  // node_hash_map: Statement keeps a pointer to Entry::in_use across inserts.
  absl::node_hash_map<std::string, Entry> entries_;
};

// The cache of the connection the current thread is running a write or read
// function on; null outside one.
StatementCache* CurrentStatementCache();

// Installs `cache` as the current thread's for its lifetime, restoring the
// previous one after. Statement only receives a sqlite3*, and each
// connection is used by one thread at a time, so a thread-local finds the
// cache without a lock; a Statement on any other connection is simply not
// cached.
class ScopedStatementCache {
 public:
  explicit ScopedStatementCache(StatementCache* cache);
  ~ScopedStatementCache();
  ScopedStatementCache(const ScopedStatementCache&) = delete;
  ScopedStatementCache& operator=(const ScopedStatementCache&) = delete;

 private:
  StatementCache* saved_;
};

}  // namespace paradnn::db::internal

#endif  // PARADNN_DB_STATEMENT_CACHE_H_
