// Opening a database file: migrations, what a file must be, connection
// settings (the writer and readers are in database_test.cc).
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "db/config_intern.h"
#include "db/database.h"
#include "db/migrations.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using testing::DbTest;
using testing::ScalarInt;
using testing::ScalarText;
using testing::TempDbFile;

TEST_F(DbTest, MigratesAnEmptyFileToTheCurrentSchema) {
  EXPECT_EQ(*ScalarInt(*db_, "PRAGMA user_version"), SchemaVersion());
  EXPECT_GE(SchemaVersion(), 1);
  for (const char* table :
       {"sweeps", "jobs", "job_params", "attempts", "results", "samples", "workers", "platforms"}) {
    absl::StatusOr<int64_t> n = ScalarInt(
        *db_, absl::StrCat("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '",
                           table, "'")
                  .c_str());
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 1) << table;
  }
}

TEST_F(DbTest, UsesWalAndForeignKeysOnEveryConnection) {
  EXPECT_EQ(*ScalarText(*db_, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(*ScalarInt(*db_, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(*ScalarInt(*db_, "PRAGMA synchronous"), 1);  // NORMAL
  int64_t writer_fk = 0;
  int64_t writer_sync = 0;
  ASSERT_TRUE(db_->WriteSync([&](sqlite3* conn) {
                   Statement fk(conn, "PRAGMA foreign_keys");
                   EXPECT_TRUE(*fk.Step());
                   writer_fk = fk.ColumnInt(0);
                   Statement sync(conn, "PRAGMA synchronous");
                   EXPECT_TRUE(*sync.Step());
                   writer_sync = sync.ColumnInt(0);
                   return absl::OkStatus();
                 })
                  .ok());
  EXPECT_EQ(writer_fk, 1);
  EXPECT_EQ(writer_sync, 1);
}

TEST_F(DbTest, MigrationsAreNumberedInOrder) {
  const std::vector<Migration>& migrations = Migrations();
  ASSERT_EQ(static_cast<int>(migrations.size()), SchemaVersion());
  for (size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, static_cast<int>(i) + 1);
  }
}

TEST(DatabaseOpenTest, ReopeningIsANoOp) {
  TempDbFile file;
  int64_t schema_cookie = 0;
  {
    auto db = Database::Open(file.path());
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)
                    ->WriteSync([](sqlite3* conn) {
                      return Exec(conn,
                                  "INSERT INTO workers (id, device_kind, hostname, connected, "
                                  "connected_unix_ms, last_seen_unix_ms) "
                                  "VALUES ('w', 'cpu', 'h', 1, 1, 1)");
                    })
                    .ok());
    schema_cookie = *ScalarInt(**db, "PRAGMA schema_version");
  }
  auto db = Database::Open(file.path());
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(*ScalarInt(**db, "PRAGMA user_version"), SchemaVersion());
  // schema_version counts DDL changes: a migration run again would move it.
  EXPECT_EQ(*ScalarInt(**db, "PRAGMA schema_version"), schema_cookie);
  EXPECT_EQ(*ScalarInt(**db, "SELECT COUNT(*) FROM workers"), 1);
}

// A file at schema 6 (before configs) with two sweeps whose jobs repeat
// one configuration gets configs, config_params and jobs.config_id filled in
// from job_params, the same canonical text new jobs get.
TEST(DatabaseOpenTest, MigrationSevenBuildsConfigsFromJobParams) {
  TempDbFile file;
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(file.path().c_str(), &raw), SQLITE_OK);
    for (const Migration& migration : Migrations()) {
      if (migration.version > 6) break;
      ASSERT_TRUE(Exec(raw, migration.sql).ok()) << migration.version;
    }
    ASSERT_TRUE(Exec(raw, "PRAGMA user_version = 6").ok());
    ASSERT_TRUE(Exec(raw, R"sql(
      INSERT INTO sweeps (id, name, family, device, state, spec, created_unix_ms)
        VALUES (1, 'a', 'fc', 'cpu', 1, x'', 0), (2, 'b', 'fc', 'cpu', 1, x'', 0);
      INSERT INTO jobs (id, sweep_id, ordinal, device, state, config, settings, precision,
                        optimizer, updated_unix_ms)
        VALUES (1, 1, 0, 'cpu', 1, x'', x'', 'float32', 'sgd', 0),
               (2, 1, 1, 'cpu', 1, x'', x'', 'float32', 'sgd', 0),
               (3, 2, 0, 'cpu', 1, x'', x'', 'bfloat16', 'sgd', 0),
               (4, 2, 1, 'cpu', 1, x'', x'', 'bfloat16', 'sgd', 0);
      INSERT INTO job_params (job_id, key, int_value, text_value)
        VALUES (1, 'node', 64, NULL), (1, 'layer', 2, NULL), (1, 'act', NULL, 'relu'),
               (2, 'node', 128, NULL), (2, 'layer', 2, NULL), (2, 'act', NULL, 'relu'),
               (3, 'node', 64, NULL), (3, 'layer', 2, NULL), (3, 'act', NULL, 'relu'),
               (4, 'node', 128, NULL), (4, 'layer', 2, NULL), (4, 'act', NULL, 'tanh');
    )sql")
                    .ok());
    sqlite3_close(raw);
  }
  auto db = Database::Open(file.path());
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(*ScalarInt(**db, "SELECT COUNT(*) FROM configs"), 3);
  EXPECT_EQ(*ScalarInt(**db, "SELECT COUNT(*) FROM config_params"), 9);
  EXPECT_EQ(*ScalarText(**db,
                        "SELECT canonical FROM configs c JOIN jobs j ON j.config_id = c.id "
                        "WHERE j.id = 4"),
            "fc act=tanh layer=2 node=128");
  EXPECT_EQ(*ScalarInt(**db,
                       "SELECT (SELECT config_id FROM jobs WHERE id = 1) = "
                       "(SELECT config_id FROM jobs WHERE id = 3)"),
            1);
  EXPECT_EQ(*ScalarInt(**db, "SELECT COUNT(*) FROM jobs WHERE config_id IS NULL"), 0);
  v1::ModelConfig config;
  config.set_family("fc");
  (*config.mutable_params())["node"] = 128;
  (*config.mutable_params())["layer"] = 2;
  (*config.mutable_options())["act"] = "relu";
  EXPECT_EQ(*ScalarText(**db,
                        "SELECT canonical FROM configs c JOIN jobs j ON j.config_id = c.id "
                        "WHERE j.id = 2"),
            ConfigCanonical(config));
}

TEST(DatabaseOpenTest, RefusesAFileFromANewerSchema) {
  TempDbFile file;
  { ASSERT_TRUE(Database::Open(file.path()).ok()); }
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(file.path().c_str(), &raw), SQLITE_OK);
    ASSERT_TRUE(
        Exec(raw, absl::StrCat("PRAGMA user_version = ", SchemaVersion() + 1).c_str()).ok());
    sqlite3_close(raw);
  }
  auto db = Database::Open(file.path());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(db.status().message().find("written by a newer paradnn"), std::string::npos)
      << db.status();
  EXPECT_NE(db.status().message().find(
                absl::StrCat("schema ", SchemaVersion() + 1, " > ", SchemaVersion())),
            std::string::npos)
      << db.status();
  EXPECT_NE(db.status().message().find(file.path()), std::string::npos) << db.status();
}

TEST(DatabaseOpenTest, RefusesAFileThatIsNotADatabase) {
  TempDbFile file;
  {
    std::ofstream out(file.path(), std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 256; ++i) out << "this is a sweep file, not a database\n";
  }
  auto db = Database::Open(file.path());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(db.status().message().find("not an SQLite database"), std::string::npos) << db.status();
}

TEST(DatabaseOpenTest, RefusesAPathInAMissingFolder) {
  auto db = Database::Open("/nonexistent-paradnn-folder/x.db");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("/nonexistent-paradnn-folder/x.db"), std::string::npos)
      << db.status();
}

TEST(DatabaseOpenTest, RejectsBadOptions) {
  TempDbFile file;
  DatabaseOptions options;
  options.max_batch = 0;
  auto db = Database::Open(file.path(), options);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kInvalidArgument);
  options = DatabaseOptions();
  options.mmap_bytes = -1;
  db = Database::Open(file.path(), options);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("mmap_bytes (-1)"), std::string::npos) << db.status();
}

TEST(DatabaseOpenTest, EveryConnectionReadsThroughAMemoryMap) {
  TempDbFile file;
  DatabaseOptions options;
  options.mmap_bytes = 8 << 20;
  auto db = Database::Open(file.path(), options);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(*ScalarInt(**db, "PRAGMA mmap_size"), 8 << 20);
}

// The writer reads through its own bounded page cache, not a map: mapped
// pages it touched would stay in the process's RSS as the file grows.
TEST(DatabaseOpenTest, TheWriterUsesItsPageCacheNotAMap) {
  TempDbFile file;
  DatabaseOptions options;
  options.mmap_bytes = 8 << 20;
  options.writer_cache_kib = 4096;
  auto db = Database::Open(file.path(), options);
  ASSERT_TRUE(db.ok()) << db.status();
  int64_t mmap = -1, cache = 0;
  ASSERT_TRUE((*db)
                  ->WriteSync([&](sqlite3* conn) -> absl::Status {
                    Statement m(conn, "PRAGMA mmap_size");
                    absl::StatusOr<bool> row = m.Step();
                    if (!row.ok()) return row.status();
                    mmap = m.ColumnInt(0);
                    Statement c(conn, "PRAGMA cache_size");
                    row = c.Step();
                    if (!row.ok()) return row.status();
                    cache = c.ColumnInt(0);
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(mmap, 0);
  EXPECT_EQ(cache, -4096);

  options.writer_cache_kib = 0;
  auto bad = Database::Open(file.path(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("writer_cache_kib (0)"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace paradnn::db
