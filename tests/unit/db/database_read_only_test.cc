// Database opened with DatabaseOptions::read_only: what `paradnn analyze
// --db` reads a colleague's file through. Reads work beside a writer, writes
// fail without touching the file, and a file this binary cannot read as it
// is (missing, another schema) is refused naming why; and any read that
// runs past its time limit is stopped.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "db/database.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using testing::ScalarInt;
using testing::TempDbFile;

DatabaseOptions ReadOnly() {
  DatabaseOptions options;
  options.read_only = true;
  return options;
}

TEST(DatabaseReadOnlyTest, ReadsBesideTheWriterAndRefusesWrites) {
  TempDbFile file;
  absl::StatusOr<std::unique_ptr<Database>> writer = Database::Open(file.path());
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)
                  ->WriteSync([](sqlite3* db) {
                    return Exec(db, "CREATE TABLE notes (n INTEGER); INSERT INTO notes VALUES (7)");
                  })
                  .ok());

  absl::StatusOr<std::unique_ptr<Database>> reader = Database::Open(file.path(), ReadOnly());
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<int64_t> n = ScalarInt(**reader, "SELECT n FROM notes");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 7);

  // The writer's later commits are visible to the reader's next read.
  ASSERT_TRUE(
      (*writer)->WriteSync([](sqlite3* db) { return Exec(db, "UPDATE notes SET n = 8"); }).ok());
  EXPECT_EQ(*ScalarInt(**reader, "SELECT n FROM notes"), 8);

  bool ran = false;
  absl::Status write = (*reader)->WriteSync([&ran](sqlite3* db) {
    ran = true;
    return Exec(db, "UPDATE notes SET n = 9");
  });
  EXPECT_EQ(write.code(), absl::StatusCode::kFailedPrecondition) << write;
  EXPECT_NE(write.message().find("read-only"), std::string::npos) << write;
  EXPECT_FALSE(ran);
  EXPECT_EQ(*ScalarInt(**writer, "SELECT n FROM notes"), 8);
  // Reads refuse changes too.
  absl::Status sneaky =
      (*reader)->Read([](sqlite3* db) { return Exec(db, "UPDATE notes SET n = 10"); });
  EXPECT_FALSE(sneaky.ok());
  EXPECT_EQ(*ScalarInt(**writer, "SELECT n FROM notes"), 8);
}

TEST(DatabaseReadOnlyTest, RefusesAMissingFileWithoutCreatingIt) {
  const std::string path = TempDbFile().path();  // removed again at once
  absl::StatusOr<std::unique_ptr<Database>> reader = Database::Open(path, ReadOnly());
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound) << reader.status();
  EXPECT_NE(reader.status().message().find(path), std::string::npos) << reader.status();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(DatabaseReadOnlyTest, RefusesAnotherSchemaSayingWhatToDo) {
  TempDbFile file;
  { ASSERT_TRUE(Database::Open(file.path()).ok()); }
  for (int version : {SchemaVersion() - 1, SchemaVersion() + 1}) {
    {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(file.path().c_str(), &db), SQLITE_OK);
      ASSERT_TRUE(Exec(db, absl::StrCat("PRAGMA user_version = ", version).c_str()).ok());
      sqlite3_close(db);
    }
    absl::StatusOr<std::unique_ptr<Database>> reader = Database::Open(file.path(), ReadOnly());
    ASSERT_FALSE(reader.ok()) << "schema " << version;
    EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(reader.status().message().find(version < SchemaVersion() ? "migrates it" : "newer"),
              std::string::npos)
        << reader.status();
  }
}

// A query that never ends (a file's recursive view did this to every
// reader) is stopped at the read time limit; the connection stays usable.
TEST(DatabaseReadTest, AReadPastItsTimeLimitIsStopped) {
  TempDbFile file;
  DatabaseOptions options;
  options.read_time_limit_ms = 200;
  options.read_connections = 1;
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(file.path(), options);
  ASSERT_TRUE(db.ok()) << db.status();
  const auto start = std::chrono::steady_clock::now();
  absl::Status endless = (*db)->Read([](sqlite3* conn) {
    Statement forever(conn,
                      "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
                      "SELECT count(*) FROM r");
    return forever.Step().status();
  });
  EXPECT_EQ(endless.code(), absl::StatusCode::kDeadlineExceeded) << endless;
  EXPECT_NE(endless.message().find("0.2 s a read may take"), std::string::npos) << endless;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  // The same (only) connection answers the next read.
  absl::StatusOr<int64_t> one = ScalarInt(**db, "SELECT 1");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, 1);
  options.read_time_limit_ms = -1;
  EXPECT_EQ(Database::Open(file.path(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace paradnn::db
