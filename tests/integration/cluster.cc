#include "tests/integration/cluster.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <functional>

namespace paradnn::testing {

using std::chrono::seconds;

namespace {

// Opens `db_path` read-only and steps `sql`; `read` gets the first row when
// there is one, or with `every_row` each row. False, with `error`, when the
// file or the statement fails.
bool ReadRows(const std::string& db_path, const std::string& sql, std::string* error,
              const std::function<void(sqlite3_stmt*)>& read, bool every_row = false) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK;
  if (ok) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* stmt = nullptr;
    ok = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK;
    while (ok && sqlite3_step(stmt) == SQLITE_ROW) {
      read(stmt);
      if (!every_row) break;
    }
    sqlite3_finalize(stmt);
  }
  if (!ok) *error = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  sqlite3_close(db);
  return ok;
}

bool ReadFirstRow(const std::string& db_path, const std::string& sql, std::string* error,
                  const std::function<void(sqlite3_stmt*)>& read) {
  return ReadRows(db_path, sql, error, read);
}

}  // namespace

int64_t QueryInt(const std::string& db_path, const std::string& sql) {
  int64_t value = -1;
  std::string error;
  EXPECT_TRUE(ReadFirstRow(db_path, sql, &error,
                           [&](sqlite3_stmt* stmt) { value = sqlite3_column_int64(stmt, 0); }))
      << sql << ": " << error;
  return value;
}

std::optional<int64_t> TryQueryInt(const std::string& db_path, const std::string& sql) {
  std::optional<int64_t> value;
  std::string error;
  ReadFirstRow(db_path, sql, &error,
               [&](sqlite3_stmt* stmt) { value = sqlite3_column_int64(stmt, 0); });
  return value;
}

std::string QueryText(const std::string& db_path, const std::string& sql) {
  std::string value;
  std::string error;
  EXPECT_TRUE(ReadFirstRow(db_path, sql, &error,
                           [&](sqlite3_stmt* stmt) {
                             if (sqlite3_column_text(stmt, 0) != nullptr) {
                               value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
                             }
                           }))
      << sql << ": " << error;
  return value;
}

std::vector<std::pair<int64_t, v1::Measurement>> QueryMeasurements(const std::string& db_path,
                                                                   const std::string& sql) {
  std::vector<std::pair<int64_t, v1::Measurement>> rows;
  std::string error;
  EXPECT_TRUE(ReadRows(
      db_path, sql, &error,
      [&](sqlite3_stmt* stmt) {
        v1::Measurement m;
        EXPECT_TRUE(m.ParseFromArray(sqlite3_column_blob(stmt, 1), sqlite3_column_bytes(stmt, 1)));
        rows.emplace_back(sqlite3_column_int64(stmt, 0), std::move(m));
      },
      /*every_row=*/true))
      << sql << ": " << error;
  return rows;
}

void Cluster::StartCoordinator(const std::vector<std::string>& extra) {
  std::remove(dir_.File("addr").c_str());
  // A restarted coordinator keeps the port, so workers find it again.
  const std::string listen = address_.empty() ? "127.0.0.1:0" : address_;
  coordinator_ = std::make_unique<ChildProcess>();
  std::vector<std::string> argv = {BinDir() + "/paradnn-coordinator",
                                   "--listen",
                                   listen,
                                   "--db",
                                   db_path_,
                                   "--address-file",
                                   dir_.File("addr"),
                                   "--heartbeat-ms",
                                   "500",
                                   "--lease-timeout-ms",
                                   "5000",
                                   "--log-level",
                                   "debug"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  coordinator_->Start(argv,
                      dir_.File("coordinator-" + std::to_string(coordinator_starts_++) + ".log"));
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(dir_.File("addr")).empty(); }, seconds(20)))
      << ReadFile(coordinator_->log_path());
  address_ = ReadFile(dir_.File("addr"));
  while (!address_.empty() && (address_.back() == '\n' || address_.back() == ' '))
    address_.pop_back();
}

void Cluster::KillCoordinator() {
  coordinator_->Signal(SIGKILL);
  ASSERT_TRUE(coordinator_->Wait(seconds(10)).has_value());
}

std::optional<int> Cluster::TerminateCoordinator(seconds timeout) {
  coordinator_->Signal(SIGTERM);
  std::optional<int> status = coordinator_->Wait(timeout);
  if (!status) {
    coordinator_->Signal(SIGKILL);
    coordinator_->Wait(seconds(10));
  }
  return status;
}

std::string Cluster::CoordinatorLogs() const {
  std::string all;
  for (int start = 0; start < coordinator_starts_; ++start) {
    all += ReadFile(dir_.File("coordinator-" + std::to_string(start) + ".log"));
  }
  return all;
}

void Cluster::StartWorker(const std::string& id, const std::vector<std::string>& extra) {
  workers_.push_back(std::make_unique<ChildProcess>());
  std::vector<std::string> argv = {BinDir() + "/paradnn-worker",
                                   "--coordinator",
                                   address_,
                                   "--worker-id",
                                   id,
                                   "--device",
                                   "cpu",
                                   "--log-level",
                                   "debug",
                                   "--max-backoff-ms",
                                   "500"};
  // A calibration (about 20 s per worker) is not what these tests measure.
  if (std::find(extra.begin(), extra.end(), "--calibrate") == extra.end()) {
    argv.insert(argv.end(), {"--calibrate", "never"});
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  workers_.back()->Start(argv, dir_.File(id + "-" + std::to_string(workers_.size()) + ".log"));
}

std::optional<int> Cluster::WaitWorker(size_t index, seconds timeout) {
  std::optional<int> status = workers_.at(index)->Wait(timeout);
  if (status.has_value()) {
    exit_expected_.resize(workers_.size(), false);
    exit_expected_[index] = true;
  }
  return status;
}

std::string Cluster::WorkerLog(size_t index) { return ReadFile(workers_.at(index)->log_path()); }

void Cluster::KillWorker(size_t index) {
  workers_.at(index)->Signal(SIGKILL);
  ASSERT_TRUE(workers_.at(index)->Wait(seconds(10)).has_value());
}

void Cluster::SignalWorker(size_t index, int signal_number) {
  workers_.at(index)->Signal(signal_number);
}

CommandResult Cluster::Cli(std::vector<std::string> args, seconds timeout) {
  std::vector<std::string> argv = {BinDir() + "/paradnn", "--coordinator", address_};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, timeout);
}

void Cluster::ExpectSubmitRefused(const std::string& name, const std::string& text,
                                  const std::string& words) {
  const std::string path = dir_.File(name);
  std::ofstream(path) << text;
  const CommandResult submit = Cli({"submit", path});
  EXPECT_EQ(submit.exit_code, 2) << submit.err;
  EXPECT_NE(submit.err.find(words), std::string::npos) << submit.err;
}

void Cluster::SubmitAndWatch(const std::string& path, seconds timeout, std::string* sweep_id,
                             const std::vector<std::string>& extra, CommandResult* watched) {
  std::vector<std::string> args = {"submit", path, "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult submit = Cli(args);
  ASSERT_EQ(submit.exit_code, 0) << submit.out << submit.err << Logs();
  *sweep_id = submit.out.substr(0, submit.out.find_first_of("\n "));
  const CommandResult watch = Cli({"watch", *sweep_id}, timeout);
  if (watched != nullptr) *watched = watch;
  ASSERT_EQ(watch.exit_code, 0) << watch.out << watch.err << Logs();
}

void Cluster::Stop() {
  for (auto& worker : workers_) {
    if (worker->running()) worker->Signal(SIGTERM);
  }
  exit_expected_.resize(workers_.size(), false);
  for (size_t i = 0; i < workers_.size(); ++i) {
    auto& worker = workers_[i];
    std::optional<int> status = worker->Wait(seconds(40));
    ASSERT_TRUE(status.has_value()) << "worker did not stop: " << ReadFile(worker->log_path());
    if (WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) continue;  // killed by the test
    if (exit_expected_[i]) continue;  // the test waited for it to exit on its own
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ReadFile(worker->log_path());
  }
  workers_.clear();
  exit_expected_.clear();
  coordinator_->Signal(SIGTERM);
  std::optional<int> status = coordinator_->Wait(seconds(20));
  ASSERT_TRUE(status.has_value()) << "coordinator did not stop";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << ReadFile(coordinator_->log_path());
}

std::string Cluster::Logs() {
  std::string all = "--- coordinator\n" + ReadFile(coordinator_->log_path());
  for (auto& worker : workers_) all += "--- worker\n" + ReadFile(worker->log_path());
  return all;
}

}  // namespace paradnn::testing
