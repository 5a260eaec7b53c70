// The schema as an ordered list of migrations. Migration i (1-based) takes a
// file from user_version i-1 to i; SchemaVersion() is the list's length.
#ifndef PARADNN_DB_MIGRATIONS_H_
#define PARADNN_DB_MIGRATIONS_H_

#include <sqlite3.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paradnn::db {

struct Migration {
  int version;              // user_version after this migration
  const char* description;  // for logs
  const char* sql;          // one or more statements
};

// Every migration, oldest first. Released entries are never edited: a schema
// change is a new entry at the end.
const std::vector<Migration>& Migrations();

// Reads PRAGMA user_version.
absl::StatusOr<int> ReadUserVersion(sqlite3* db);

// Applies every migration above the file's user_version, each in its own
// BEGIN IMMEDIATE transaction that also sets user_version, so a crash leaves
// the file at a whole version. FailedPrecondition if the file is newer than
// SchemaVersion(). `path` only names the file in errors.
absl::Status ApplyMigrations(sqlite3* db, const std::string& path);

}  // namespace paradnn::db

#endif  // PARADNN_DB_MIGRATIONS_H_
