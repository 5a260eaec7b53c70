// The coordinator's database file against a second coordinator and against
// damage, with real processes: one coordinator per file (the second is
// refused naming the holder's pid, and nothing of the first changes), and a
// file with damaged pages is refused at start instead of being served.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "db/database.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

CommandResult StartSecondCoordinator(const std::string& db_path, const TempDir& dir) {
  return RunCommand({BinDir() + "/paradnn-coordinator", "--listen", "127.0.0.1:0", "--db", db_path,
                     "--address-file", dir.File("addr2")},
                    std::chrono::milliseconds(20000));
}

TEST(DatabaseFileTest, ASecondCoordinatorOnOneFileIsRefusedNamingTheHolder) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  std::ofstream(dir.File("s.yaml"))
      << "name: one\nfamily: fc\nparams: {layer: 1, node: 8, input: 4, output: 2, batch: 4}\n";
  ASSERT_EQ(cluster.Cli({"submit", dir.File("s.yaml"), "-q"}).exit_code, 0);
  const CommandResult second = StartSecondCoordinator(cluster.db_path(), dir);
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  const std::string said = second.out + second.err;
  EXPECT_NE(said.find("is in use by another coordinator (pid "), std::string::npos) << said;
  EXPECT_NE(said.find("give this one another --db"), std::string::npos) << said;
  std::ifstream lock(cluster.db_path() + ".lock");
  std::string holder;
  lock >> holder;
  EXPECT_NE(said.find("(pid " + holder + ","), std::string::npos) << said;
  // The first keeps serving, with what it had.
  CommandResult list = cluster.Cli({"status"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("one"), std::string::npos);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM sweeps"), 1);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
  // Once it is gone, the file is free again.
  Cluster again(dir);
  ASSERT_NO_FATAL_FAILURE(again.StartCoordinator());
  ASSERT_NO_FATAL_FAILURE(again.Stop());
}

TEST(DatabaseFileTest, ADamagedFileIsRefusedAtStart) {
  TempDir dir;
  const std::string db_path = dir.File("sweeps.db");  // the Cluster's file
  {
    Cluster cluster(dir);
    ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
    std::ofstream(dir.File("s.yaml"))
        << "name: many\nfamily: fc\nparams: {layer: 1, node: {min: 1, max: 400, add: 1}, "
           "input: 4, output: 2, batch: 4}\n";
    ASSERT_EQ(cluster.Cli({"submit", dir.File("s.yaml"), "-q"}).exit_code, 0);
    ASSERT_NO_FATAL_FAILURE(cluster.Stop());
  }
  // Overwrite pages in the middle of the file (past the schema pages).
  {
    std::fstream file(db_path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(0, std::ios::end);
    const std::streamoff size = file.tellg();
    ASSERT_GT(size, 8 * 4096);
    file.seekp(size / 2);
    const std::string garbage(3 * 4096, '\xa5');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const CommandResult start = StartSecondCoordinator(db_path, dir);
  EXPECT_EQ(start.exit_code, 1) << start.out << start.err;
  const std::string said = start.out + start.err;
  EXPECT_TRUE(said.find("is damaged (PRAGMA quick_check") != std::string::npos ||
              said.find("cannot be checked (PRAGMA quick_check)") != std::string::npos)
      << said;
  EXPECT_NE(said.find("restore it from a backup"), std::string::npos) << said;
}

// A file whose `results` is an endless recursive view (issue 36: it hung
// every reader, and the private coordinator of `analyze --db` outlived the
// killed CLI) is refused at open, naming the view, before any query.
TEST(DatabaseFileTest, AViewOrTriggerInTheFileIsRefusedAtOpen) {
  TempDir dir;
  const std::string db_path = dir.File("sweeps.db");  // the Cluster's file
  {
    Cluster cluster(dir);
    ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
    ASSERT_NO_FATAL_FAILURE(cluster.Stop());
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db,
                                "DROP TABLE results; CREATE VIEW results AS WITH RECURSIVE "
                                "c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c;",
                                nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }
  const CommandResult start = StartSecondCoordinator(db_path, dir);
  EXPECT_EQ(start.exit_code, 1) << start.out << start.err;
  const std::string said = start.out + start.err;
  EXPECT_NE(said.find("holds view 'results'"), std::string::npos) << said;
  EXPECT_NE(said.find("only tables and indexes"), std::string::npos) << said;
  // The read-only path (a colleague's copy, `analyze --db`) refuses it too.
  db::DatabaseOptions options;
  options.read_only = true;
  absl::StatusOr<std::unique_ptr<db::Database>> opened = db::Database::Open(db_path, options);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("holds view 'results'"), std::string::npos)
      << opened.status();
}

// Writes that fail while the coordinator runs (here: another process holds
// the database's write lock past the busy timeout) are reported for what
// they are: /readyz is not ready, naming the cause, and a submit answers
// with the database's own words, not "cannot reach the coordinator".
TEST(DatabaseFileTest, FailingWritesAreReportedWithTheirCause) {
  TempDir dir;
  ChildProcess coordinator;
  const StartedCoordinator started = StartCoordinatorWithMetrics(&coordinator, dir, "w.db");
  ASSERT_FALSE(started.address.empty()) << ReadFile(dir.File("coordinator.log"));
  const std::string& address = started.address;
  const int metrics = started.metrics_port;
  std::ofstream(dir.File("s.yaml"))
      << "name: one\nfamily: fc\nparams: {layer: 1, node: 8, input: 4, output: 2, batch: 4}\n";
  auto submit = [&] {
    return RunCommand(
        {BinDir() + "/paradnn", "--coordinator", address, "submit", dir.File("s.yaml"), "-q"},
        std::chrono::milliseconds(30000));
  };
  ASSERT_EQ(submit().exit_code, 0);
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("w.db").c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const CommandResult refused = submit();
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("storing the sweep failed: the coordinator's database: "),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("cannot reach"), std::string::npos) << refused.err;
  std::string body;
  EXPECT_EQ(HttpStatus(metrics, "/readyz", &body), 503);
  EXPECT_NE(body.find("database writes fail"), std::string::npos) << body;
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  // The next write commits and the coordinator is ready again.
  EXPECT_EQ(submit().exit_code, 0);
  EXPECT_EQ(HttpStatus(metrics, "/readyz", nullptr), 200);
  EXPECT_EQ(QueryInt(dir.File("w.db"), "SELECT count(*) FROM sweeps"), 2);
  coordinator.Signal(SIGTERM);
  ASSERT_TRUE(coordinator.Wait(std::chrono::milliseconds(20000)).has_value());
}

TEST(DatabaseFileTest, AReadOnlyConnectionIsRefusedNamingWhy) {
  // As root no file permission stops a write, so the read-only case is
  // checked on a connection opened read-only.
  TempDir dir;
  const std::string path = dir.File("ro.db");
  {
    absl::StatusOr<std::unique_ptr<db::Database>> created = db::Database::Open(path);
    ASSERT_TRUE(created.ok()) << created.status();
  }
  sqlite3* connection = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &connection, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const absl::Status status = db::CheckWritableAndIntact(connection, path);
  sqlite3_close(connection);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("is read-only"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace paradnn::testing
