// Shared fixtures for the db tests: a temporary database file and small
// builders for specs, jobs and measurements.
#ifndef PARADNN_TESTS_UNIT_DB_TEST_DB_H_
#define PARADNN_TESTS_UNIT_DB_TEST_DB_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/database.h"
#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "db/worker_store.h"

namespace paradnn::db::testing {

// A unique file in the system temp folder, removed (with its -wal and -shm
// companions) on destruction.
class TempDbFile {
 public:
  TempDbFile() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "paradnn_db_test_XXXXXX").string();
    int fd = mkstemp(pattern.data());
    EXPECT_GE(fd, 0) << "mkstemp " << pattern;
    if (fd >= 0) close(fd);
    path_ = pattern;
  }
  ~TempDbFile() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::filesystem::remove(path_ + suffix, ignored);
    }
  }
  TempDbFile(const TempDbFile&) = delete;
  TempDbFile& operator=(const TempDbFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `sql` (one row, one column) on a read connection; `read` takes the
// value from the statement.
template <typename T, typename ReadColumn>
absl::StatusOr<T> Scalar(const Database& db, const char* sql, ReadColumn read) {
  T value{};
  absl::Status status = db.Read([&](sqlite3* conn) -> absl::Status {
    Statement stmt(conn, sql);
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::NotFoundError(std::string("no row: ") + sql);
    value = read(stmt);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return value;
}

inline absl::StatusOr<int64_t> ScalarInt(const Database& db, const char* sql) {
  return Scalar<int64_t>(db, sql, [](Statement& stmt) { return stmt.ColumnInt(0); });
}

inline absl::StatusOr<std::string> ScalarText(const Database& db, const char* sql) {
  return Scalar<std::string>(db, sql, [](Statement& stmt) { return stmt.ColumnText(0); });
}

// EXPLAIN QUERY PLAN of `sql`, the detail column of every row joined.
inline std::string QueryPlan(const Database& db, const std::string& sql) {
  std::string plan;
  absl::Status status = db.Read([&](sqlite3* conn) -> absl::Status {
    Statement stmt(conn, ("EXPLAIN QUERY PLAN " + sql).c_str());
    for (;;) {
      absl::StatusOr<bool> row = stmt.Step();
      if (!row.ok()) return row.status();
      if (!*row) return absl::OkStatus();
      plan += stmt.ColumnText(3) + " | ";
    }
  });
  EXPECT_TRUE(status.ok()) << status;
  return plan;
}

// Waits until every write queued before it has committed (the queue is
// FIFO and callbacks run after commit), for fire-and-forget store methods.
inline void Flush(Database& db) {
  ASSERT_TRUE(db.WriteSync([](sqlite3*) { return absl::OkStatus(); }).ok());
}

inline v1::SweepSpec Spec(const std::string& name, const std::string& device = "cpu") {
  v1::SweepSpec spec;
  spec.set_name(name);
  spec.set_family("fc");
  spec.set_device(device);
  spec.mutable_params()->operator[]("layer").set_value(4);
  spec.add_precision("float32");
  return spec;
}

// `n` fc jobs whose "index" param equals their ordinal, so a lease can be
// traced back to the job it came from.
inline std::vector<NewJob> Jobs(int n, const std::string& device = "cpu") {
  std::vector<NewJob> jobs;
  for (int i = 0; i < n; ++i) {
    NewJob job;
    job.config.set_family("fc");
    (*job.config.mutable_params())["index"] = i;
    (*job.config.mutable_params())["layer"] = 1 + i % 4;
    (*job.config.mutable_params())["node"] = 64 << (i % 3);
    (*job.config.mutable_params())["batch"] = 32;
    (*job.config.mutable_options())["activation"] = i % 2 == 0 ? "relu" : "tanh";
    job.config.set_precision("float32");
    job.config.set_optimizer("rmsprop");
    job.settings.set_max_steps(10 + i);
    job.device = device;
    job.ordinal = i;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// A cpu platform of `fingerprint` seen on `hostname`.
inline v1::Platform CpuPlatform(const std::string& fingerprint, const std::string& hostname = "") {
  v1::Platform platform;
  platform.set_fingerprint(fingerprint);
  platform.set_device_kind("cpu");
  platform.set_hostname(hostname);
  return platform;
}

inline v1::Measurement OkMeasurement(int steps, v1::Outcome outcome = v1::OK) {
  v1::Measurement m;
  m.set_outcome(outcome);
  m.set_examples_per_sec(1234.5);
  m.mutable_stats()->set_steps(steps);
  m.mutable_stats()->set_median_s(0.01);
  m.mutable_stats()->set_stop_reason("ci");
  m.mutable_counts()->set_params(4096);
  m.mutable_counts()->set_model_flops(1e9);
  m.set_model_flops_per_sec(1e11);
  m.set_peak_rss_bytes(1 << 20);
  for (int i = 0; i < steps; ++i) m.add_step_seconds(0.01 + 0.001 * i);
  m.set_device("cpu");
  return m;
}

// Opens a fresh database in a temp file for each test.
class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(file_.path(), Options());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }
  // No reuse spot checks (drawn at random, they would make counts of reused
  // results vary): the tests of spot checks ask for them.
  virtual DatabaseOptions Options() const {
    DatabaseOptions options;
    options.reuse_spot_check_every = 0;
    return options;
  }
  void TearDown() override { db_.reset(); }

  static constexpr int64_t kNow = 1'700'000'000'000;

  TempDbFile file_;  // declared first: outlives the database
  std::unique_ptr<Database> db_;
};

// A DbTest with the stores the store tests share, all over `db_` (a store
// holds only the pointer, so the ones a test does not use cost nothing).
class StoresTest : public DbTest {
 protected:
  void SetUp() override {
    DbTest::SetUp();
    MakeStores();
  }

  // Opens the file again with Options() and makes the stores anew over it.
  void Reopen() {
    sweeps_.reset();
    jobs_.reset();
    results_.reset();
    platforms_.reset();
    workers_.reset();
    db_.reset();
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(file_.path(), Options());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    MakeStores();
  }

  // The id `platform` is stored under (0, and a failure, where it is not).
  int64_t UpsertPlatform(const v1::Platform& platform) {
    absl::StatusOr<int64_t> id = platforms_->UpsertSync(platform);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }

  std::unique_ptr<SweepStore> sweeps_;
  std::unique_ptr<JobStore> jobs_;
  std::unique_ptr<ResultStore> results_;
  std::unique_ptr<PlatformStore> platforms_;
  std::unique_ptr<WorkerStore> workers_;

 private:
  void MakeStores() {
    sweeps_ = std::make_unique<SweepStore>(db_.get());
    jobs_ = std::make_unique<JobStore>(db_.get());
    results_ = std::make_unique<ResultStore>(db_.get());
    platforms_ = std::make_unique<PlatformStore>(db_.get());
    workers_ = std::make_unique<WorkerStore>(db_.get());
  }
};

}  // namespace paradnn::db::testing

#endif  // PARADNN_TESTS_UNIT_DB_TEST_DB_H_
