#include "db/database.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using testing::DbTest;
using testing::ScalarInt;
using testing::TempDbFile;

absl::Status CreateTable(Database& db) {
  return db.WriteSync(
      [](sqlite3* conn) { return Exec(conn, "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)"); });
}

Database::WriteFn InsertRow(int64_t key) {
  return [key](sqlite3* conn) {
    Statement insert(conn, "INSERT INTO t (k, v) VALUES (?, 'x')");
    insert.Bind(1, key);
    return insert.Run();
  };
}

// Holds the writer thread inside a write function until released, so that
// writes queued meanwhile are known to be waiting together.
class WriterGate {
 public:
  explicit WriterGate(Database& db) {
    // The write function owns everything it touches, so the gate may be
    // destroyed (after Open) while the writer is still leaving it.
    auto entered = std::make_shared<std::promise<void>>();
    std::future<void> entered_future = entered->get_future();
    db.Write([entered, released = release_.get_future().share()](sqlite3*) {
      entered->set_value();
      released.wait();
      return absl::OkStatus();
    });
    entered_future.wait();
  }
  void Open() { release_.set_value(); }

 private:
  std::promise<void> release_;
};

// Waits (with a deadline, never a fixed sleep) for `n` callbacks.
class CallbackCounter {
 public:
  Database::DoneFn Callback(std::vector<absl::Status>* statuses = nullptr, size_t slot = 0) {
    return [this, statuses, slot](const absl::Status& status) {
      absl::MutexLock lock(&mu_);
      if (statuses != nullptr) (*statuses)[slot] = status;
      if (!status.ok()) ++errors_;
      ++count_;
      cv_.SignalAll();
    };
  }
  bool WaitFor(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (count_ < n && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    return count_ >= n;
  }
  int errors() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return errors_;
  }

 private:
  absl::Mutex mu_;
  absl::CondVar cv_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  int errors_ ABSL_GUARDED_BY(mu_) = 0;
};

// ---- writer thread ------------------------------------------------------------

// WriteNext goes ahead of every write not yet started.
TEST(DatabaseWriteTest, WriteNextRunsBeforeQueuedWrites) {
  TempDbFile file;
  auto db = Database::Open(file.path());
  ASSERT_TRUE(db.ok()) << db.status();
  std::vector<int> order;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  // Holds the writer (its batch taken) so that the next writes queue up.
  std::promise<void> holding;
  (*db)->Write([released, &holding](sqlite3*) -> absl::Status {
    holding.set_value();
    released.wait();
    return absl::OkStatus();
  });
  holding.get_future().wait();
  std::promise<void> all_done;
  (*db)->Write([&](sqlite3*) -> absl::Status {
    order.push_back(1);
    return absl::OkStatus();
  });
  (*db)->Write(
      [&](sqlite3*) -> absl::Status {
        order.push_back(2);
        return absl::OkStatus();
      },
      [&](absl::Status) { all_done.set_value(); });
  (*db)->WriteNext([&](sqlite3*) -> absl::Status {
    order.push_back(0);
    return absl::OkStatus();
  });
  release.set_value();
  all_done.get_future().wait();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(DatabaseWriteTest, BatchesQueuedWritesUpToMaxBatch) {
  TempDbFile file;
  DatabaseOptions options;
  options.max_batch = 16;
  auto opened = Database::Open(file.path(), options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Database& db = **opened;
  ASSERT_TRUE(CreateTable(db).ok());
  const Database::WriterStats before = db.writer_stats();

  WriterGate gate(db);
  CallbackCounter counter;
  constexpr int kWrites = 100;
  for (int i = 0; i < kWrites; ++i) db.Write(InsertRow(i), counter.Callback());
  gate.Open();
  ASSERT_TRUE(counter.WaitFor(kWrites));
  EXPECT_EQ(counter.errors(), 0);

  const Database::WriterStats after = db.writer_stats();
  // The gate's own transaction, then ceil(100 / 16) = 7 full batches.
  EXPECT_EQ(after.transactions - before.transactions, 1 + 7);
  EXPECT_EQ(after.writes - before.writes, 1 + kWrites);
  EXPECT_EQ(*ScalarInt(db, "SELECT COUNT(*) FROM t"), kWrites);
}

TEST_F(DbTest, ConcurrentWritersAllCommit) {
  ASSERT_TRUE(CreateTable(*db_).ok());
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  CallbackCounter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        db_->Write(InsertRow(t * kPerThread + i), counter.Callback());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(counter.WaitFor(kThreads * kPerThread));
  EXPECT_EQ(counter.errors(), 0);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM t"), kThreads * kPerThread);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT SUM(k) FROM t"),
            int64_t{kThreads} * kPerThread * (kThreads * kPerThread - 1) / 2);
}

TEST_F(DbTest, AFailingWriteRollsBackOnlyItsOwnChanges) {
  ASSERT_TRUE(CreateTable(*db_).ok());
  const Database::WriterStats before = db_->writer_stats();
  std::vector<absl::Status> statuses(3, absl::UnknownError("callback not run"));
  CallbackCounter counter;
  WriterGate gate(*db_);
  db_->Write(InsertRow(1), counter.Callback(&statuses, 0));
  db_->Write(
      [](sqlite3* conn) -> absl::Status {
        if (absl::Status s = InsertRow(2)(conn); !s.ok()) return s;
        return absl::InvalidArgumentError("second write refuses");
      },
      counter.Callback(&statuses, 1));
  db_->Write(InsertRow(3), counter.Callback(&statuses, 2));
  gate.Open();
  ASSERT_TRUE(counter.WaitFor(3));

  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_EQ(statuses[1].code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(statuses[1].message(), "second write refuses");
  EXPECT_TRUE(statuses[2].ok()) << statuses[2];
  // All three shared one transaction (plus the gate's).
  EXPECT_EQ(db_->writer_stats().transactions - before.transactions, 2);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM t"), 2);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM t WHERE k = 2"), 0);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT SUM(k) FROM t"), 4);
}

TEST_F(DbTest, ASqlErrorInsideAWriteIsItsCallersError) {
  ASSERT_TRUE(CreateTable(*db_).ok());
  ASSERT_TRUE(db_->WriteSync(InsertRow(7)).ok());
  absl::Status duplicate = db_->WriteSync(InsertRow(7));
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kAlreadyExists) << duplicate;
  EXPECT_TRUE(db_->WriteSync(InsertRow(8)).ok());
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM t"), 2);
}

TEST_F(DbTest, CallbacksRunAfterTheDataIsVisibleToReaders) {
  ASSERT_TRUE(CreateTable(*db_).ok());
  std::promise<int64_t> seen;
  db_->Write(InsertRow(42), [&](const absl::Status& status) {
    EXPECT_TRUE(status.ok()) << status;
    absl::StatusOr<int64_t> n = ScalarInt(*db_, "SELECT COUNT(*) FROM t WHERE k = 42");
    seen.set_value(n.ok() ? *n : -1);
  });
  std::future<int64_t> result = seen.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(result.get(), 1);
}

TEST_F(DbTest, AFailedCommitFailsEveryCallbackOfTheBatch) {
  // A deferred foreign key is checked at COMMIT, not at the statement, which
  // makes the commit itself fail.
  ASSERT_TRUE(CreateTable(*db_).ok());
  ASSERT_TRUE(db_->WriteSync([](sqlite3* conn) {
                   return Exec(conn,
                               "CREATE TABLE parent (id INTEGER PRIMARY KEY);"
                               "CREATE TABLE child (parent_id INTEGER REFERENCES parent(id) "
                               "DEFERRABLE INITIALLY DEFERRED)");
                 })
                  .ok());
  std::vector<absl::Status> statuses(2, absl::UnknownError("callback not run"));
  CallbackCounter counter;
  WriterGate gate(*db_);
  db_->Write(InsertRow(1), counter.Callback(&statuses, 0));
  db_->Write([](sqlite3* conn) { return Exec(conn, "INSERT INTO child VALUES (99)"); },
             counter.Callback(&statuses, 1));
  gate.Open();
  ASSERT_TRUE(counter.WaitFor(2));
  EXPECT_FALSE(statuses[0].ok());
  EXPECT_FALSE(statuses[1].ok());
  EXPECT_NE(statuses[0].message().find("FOREIGN KEY"), std::string::npos) << statuses[0];
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM t"), 0);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM child"), 0);
  // The writer recovers: the next write commits.
  EXPECT_TRUE(db_->WriteSync(InsertRow(2)).ok());
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM t"), 1);
}

TEST_F(DbTest, AWriteThatEndsTheTransactionFailsItsBatchButNotLaterWrites) {
  ASSERT_TRUE(CreateTable(*db_).ok());
  std::vector<absl::Status> statuses(3, absl::UnknownError("callback not run"));
  CallbackCounter counter;
  WriterGate gate(*db_);
  db_->Write(InsertRow(1), counter.Callback(&statuses, 0));
  db_->Write([](sqlite3* conn) { return Exec(conn, "ROLLBACK"); }, counter.Callback(&statuses, 1));
  db_->Write(InsertRow(3), counter.Callback(&statuses, 2));
  gate.Open();
  ASSERT_TRUE(counter.WaitFor(3));
  EXPECT_EQ(statuses[0].code(), absl::StatusCode::kAborted) << statuses[0];
  EXPECT_EQ(statuses[1].code(), absl::StatusCode::kAborted) << statuses[1];
  EXPECT_TRUE(statuses[2].ok()) << statuses[2];
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM t"), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT k FROM t"), 3);
}

TEST(DatabaseWriteTest, DestructorDrainsQueuedWrites) {
  TempDbFile file;
  constexpr int kWrites = 300;
  std::atomic<int> callbacks{0};
  {
    auto db = Database::Open(file.path());
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(CreateTable(**db).ok());
    WriterGate gate(**db);
    for (int i = 0; i < kWrites; ++i) {
      (*db)->Write(InsertRow(i), [&](const absl::Status& status) {
        if (status.ok()) ++callbacks;
      });
    }
    gate.Open();
  }  // destroyed with (nearly) all writes still queued
  EXPECT_EQ(callbacks.load(), kWrites);
  auto db = Database::Open(file.path());
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(*ScalarInt(**db, "SELECT COUNT(*) FROM t"), kWrites);
}

TEST_F(DbTest, WriteSyncOnTheWriterThreadIsRefused) {
  std::promise<absl::Status> nested;
  db_->Write([](sqlite3*) { return absl::OkStatus(); },
             [&](const absl::Status&) {
               nested.set_value(db_->WriteSync([](sqlite3*) { return absl::OkStatus(); }));
             });
  std::future<absl::Status> result = nested.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(result.get().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(db_->OnWriterThread());
}

// ---- reads and statements -----------------------------------------------------

TEST_F(DbTest, ReadConnectionsRefuseToWrite) {
  absl::Status status =
      db_->Read([](sqlite3* conn) { return Exec(conn, "CREATE TABLE sneaky (x INTEGER)"); });
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(ScalarInt(*db_, "SELECT COUNT(*) FROM sneaky").ok());
}

TEST_F(DbTest, ReadErrorsPropagate) {
  absl::Status status = db_->Read([](sqlite3*) { return absl::NotFoundError("nothing to read"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  // The connection went back to the pool in a usable state.
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(ScalarInt(*db_, "SELECT 1").ok());
}

int CountPrepared(sqlite3* conn) {
  int n = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(conn, nullptr); s != nullptr;
       s = sqlite3_next_stmt(conn, s)) {
    ++n;
  }
  return n;
}

TEST_F(DbTest, StatementsAreCachedPerConnectionAndResetOnDestruction) {
  ASSERT_TRUE(db_->Read([](sqlite3* conn) -> absl::Status {
                   const char* sql = "SELECT ?1 + 1";
                   {
                     Statement first(conn, sql);
                     first.Bind(1, int64_t{41});
                     EXPECT_TRUE(*first.Step());
                     EXPECT_EQ(first.ColumnInt(0), 42);
                   }
                   const int prepared = CountPrepared(conn);
                   {
                     // Same SQL again: the cached statement, with the previous
                     // binding cleared (NULL + 1 is NULL).
                     Statement again(conn, sql);
                     EXPECT_EQ(CountPrepared(conn), prepared);
                     EXPECT_TRUE(*again.Step());
                     EXPECT_TRUE(again.ColumnIsNull(0));
                     // Nested use of the same SQL gets a private statement.
                     Statement nested(conn, sql);
                     EXPECT_EQ(CountPrepared(conn), prepared + 1);
                     nested.Bind(1, int64_t{1});
                     EXPECT_TRUE(*nested.Step());
                     EXPECT_EQ(nested.ColumnInt(0), 2);
                   }
                   EXPECT_EQ(CountPrepared(conn), prepared);
                   return absl::OkStatus();
                 })
                  .ok());
}

TEST_F(DbTest, StatementReportsErrorsThroughStatus) {
  ASSERT_TRUE(db_->Read([](sqlite3* conn) -> absl::Status {
                   Statement bad(conn, "SELECT * FROM no_such_table");
                   EXPECT_FALSE(bad.status().ok());
                   EXPECT_FALSE(bad.Step().ok());
                   Statement two(conn, "SELECT 1; SELECT 2");
                   EXPECT_EQ(two.status().code(), absl::StatusCode::kInvalidArgument);
                   Statement range(conn, "SELECT ?1");
                   range.Bind(5, int64_t{1});
                   EXPECT_FALSE(range.status().ok());
                   Statement blob(conn, "SELECT ?1, ?2, typeof(?2)");
                   blob.BindBlob(1, std::string("a\0b", 3)).BindBlob(2, "");
                   EXPECT_TRUE(*blob.Step());
                   EXPECT_EQ(blob.ColumnBlob(0), std::string("a\0b", 3));
                   EXPECT_EQ(blob.ColumnText(2), "blob");  // empty, not NULL
                   return absl::OkStatus();
                 })
                  .ok());
}

TEST(SqliteErrorTest, MapsCodesToStatusCodes) {
  EXPECT_EQ(SqliteError(nullptr, SQLITE_BUSY, "x").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(SqliteError(nullptr, SQLITE_CONSTRAINT_UNIQUE, "x").code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(SqliteError(nullptr, SQLITE_CONSTRAINT_FOREIGNKEY, "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SqliteError(nullptr, SQLITE_CORRUPT, "x").code(), absl::StatusCode::kDataLoss);
  absl::Status full = SqliteError(nullptr, SQLITE_FULL, "commit");
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message().rfind("commit: ", 0), 0u) << full;
}

}  // namespace
}  // namespace paradnn::db
