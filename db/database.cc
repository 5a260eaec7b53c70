#include "db/database.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <future>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "db/migrations.h"
#include "db/statement.h"
#include "db/statement_cache.h"
#include "spdlog/spdlog.h"

namespace paradnn::db {
namespace {

// One open connection and its statement cache.
struct Connection {
  sqlite3* db = nullptr;
  std::unique_ptr<internal::StatementCache> cache;
  // A reader's statements stop past this (the progress handler below); the
  // handler reads it on the reader's own thread.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

  ~Connection() {
    if (db == nullptr) return;
    cache.reset();  // finalize cached statements first, or close fails busy
    int rc = sqlite3_close(db);
    if (rc != SQLITE_OK) {
      // A Statement outlived its Database; let SQLite free the handle once
      // that statement is finalized rather than leaking the file lock.
      spdlog::error("closing sqlite connection: {}", sqlite3_errstr(rc));
      sqlite3_close_v2(db);
    }
  }
};

enum class Role { kWriter, kReader };

// SQLite virtual-machine steps between two checks of a reader's deadline
// (a check is a clock read: well under 1 % of the steps' time).
constexpr int kProgressSteps = 10000;

// Our schema is tables and indexes only (db/migrations.cc). A view or a
// trigger in a file handed to us (`--db` of a colleague's copy) runs its
// query whenever we read the name it shadows: an endless recursive view
// named `results` hung every reader. Refused, naming it.
absl::Status CheckOnlyTablesAndIndexes(sqlite3* db, const std::string& path) {
  Statement other(db,
                  "SELECT type, name FROM sqlite_master WHERE type NOT IN ('table', 'index') "
                  "ORDER BY name LIMIT 5");
  std::vector<std::string> found;
  absl::Status walked = other.ForEachRow([&] {
    found.push_back(absl::StrCat(other.ColumnText(0), " '",
                                 absl::CHexEscape(other.ColumnText(1).substr(0, 64)), "'"));
  });
  if (!walked.ok()) return walked;
  if (found.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "open ", path, ": holds ", absl::StrJoin(found, ", "),
      "; a paradnn database holds only tables and indexes, and a view or trigger would run its "
      "own query whenever paradnn reads (refused; copy the tables into a fresh file)"));
}

// A reader refuses writes (see the flags in OpenConnection) and stops a
// statement past its Read's deadline.
absl::Status MakeReader(Connection* conn) {
  if (absl::Status s = Exec(conn->db, "PRAGMA query_only=ON"); !s.ok()) return s;
  // Every few thousand virtual-machine steps: is the Read past its time?
  sqlite3_progress_handler(
      conn->db, kProgressSteps,
      [](void* connection) -> int {
        return std::chrono::steady_clock::now() > static_cast<Connection*>(connection)->deadline
                   ? 1
                   : 0;
      },
      conn);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Connection>> OpenConnection(const std::string& path, Role role,
                                                           const DatabaseOptions& options) {
  auto conn = std::make_unique<Connection>();
  // NOMUTEX: a connection is only ever used by one thread at a time (the
  // writer thread, or the reader that borrowed it from the pool).
  // A read-only file (a colleague's copy) is opened SQLITE_OPEN_READONLY;
  // otherwise readers open it read-write, so that WAL recovery and shared
  // memory work in every case, and refuse changes with query_only.
  const bool read_only_file = options.read_only && ::access(path.c_str(), W_OK) != 0;
  int flags = (read_only_file ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX;
  if (role == Role::kWriter) flags |= SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &conn->db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteError(conn->db, rc, absl::StrCat("open ", path).c_str());
    return status;  // ~Connection closes the half-open handle
  }
  sqlite3_extended_result_codes(conn->db, 1);
  sqlite3_busy_timeout(conn->db, options.busy_timeout_ms);

  // The first read of the file is where SQLite notices it is not a
  // database; say so plainly instead of failing on a pragma later.
  absl::StatusOr<int> version = ReadUserVersion(conn->db);
  if (!version.ok()) {
    if (sqlite3_errcode(conn->db) == SQLITE_NOTADB) {
      return absl::FailedPreconditionError(absl::StrCat("open ", path, ": not an SQLite database (",
                                                        version.status().message(), ")"));
    }
    return version.status();
  }
  // A file is data, not code: functions in its schema run only where they
  // are harmless, and nothing may write the schema itself.
  sqlite3_db_config(conn->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(conn->db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  if (absl::Status s = CheckOnlyTablesAndIndexes(conn->db, path); !s.ok()) return s;

  if (role == Role::kWriter) {
    // journal_mode is persistent in the file, so setting it once on the
    // writer covers the readers; readers must not try (query_only).
    Statement wal(conn->db, "PRAGMA journal_mode=WAL");
    absl::StatusOr<bool> row = wal.Step();
    if (!row.ok()) return row.status();
    std::string mode = *row ? absl::AsciiStrToLower(wal.ColumnText(0)) : "";
    if (mode != "wal") {
      return absl::FailedPreconditionError(
          absl::StrCat("open ", path, ": could not enable WAL journal mode (got \"", mode, "\")"));
    }
  }
  for (const char* pragma : {"PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
    if (absl::Status s = Exec(conn->db, pragma); !s.ok()) return s;
  }
  // Only readers map the file. Pages a mapping has touched stay resident
  // and count in the process's RSS; the writer touches the tails of every
  // table and index as they grow, so under a steady stream of results its
  // mapping grew the coordinator's RSS by the size of everything written
  // (bench/load_bench.cc). Its working set is small and lives in its own,
  // bounded page cache instead.
  const int64_t mmap_bytes = role == Role::kReader ? options.mmap_bytes : 0;
  // PRAGMA takes no parameters; the values are numbers from our options.
  if (absl::Status s = Exec(conn->db, absl::StrCat("PRAGMA mmap_size=", mmap_bytes).c_str());
      !s.ok()) {
    return s;
  }
  if (role == Role::kWriter) {
    if (absl::Status s =
            Exec(conn->db, absl::StrCat("PRAGMA cache_size=-", options.writer_cache_kib).c_str());
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            Exec(conn->db,
                 absl::StrCat("PRAGMA wal_autocheckpoint=", options.wal_checkpoint_pages).c_str());
        !s.ok()) {
      return s;
    }
  }
  if (role == Role::kReader) {
    if (absl::Status s = MakeReader(conn.get()); !s.ok()) return s;
  }
  conn->cache = std::make_unique<internal::StatementCache>(conn->db);
  return conn;
}

}  // namespace

// ---- Database --------------------------------------------------------------

struct Database::Impl {
  struct PendingWrite {
    WriteFn fn;
    DoneFn done;
  };

  std::string path;
  DatabaseOptions options;
  std::unique_ptr<Connection> writer;

  std::vector<std::unique_ptr<Connection>> readers;  // fixed once opened
  absl::Mutex read_mu;
  absl::CondVar read_cv;  // a reader was handed back
  std::vector<Connection*> free_readers ABSL_GUARDED_BY(read_mu);

  absl::Mutex mu;
  absl::CondVar cv;  // a write queued, or stopping
  std::deque<PendingWrite> queue ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;
  std::thread thread;
  std::atomic<std::thread::id> writer_id{};
  // The last write transaction's storage failure (a read-only file, a full
  // disk, an I/O error), cleared by the next commit.
  mutable absl::Mutex health_mu;
  absl::Status storage_error ABSL_GUARDED_BY(health_mu);
  void SetStorageError(absl::Status status) ABSL_LOCKS_EXCLUDED(health_mu) {
    absl::MutexLock lock(&health_mu);
    storage_error = std::move(status);
  }

  std::atomic<int64_t> transactions{0};
  std::atomic<int64_t> writes{0};

  ~Impl() {
    readers.clear();  // the writer closes last, so it checkpoints the WAL
    writer.reset();
  }

  void RunWriter() ABSL_LOCKS_EXCLUDED(mu);
  // Runs batch[begin, end) in one transaction, or a prefix of it if the
  // transaction is lost part-way. Returns the index after the last function
  // it ran (whose callbacks it has called).
  size_t RunTransaction(std::vector<PendingWrite>& batch, size_t begin);
};

void Database::Impl::RunWriter() {
  writer_id = std::this_thread::get_id();
  internal::ScopedStatementCache scope(writer->cache.get());
  std::vector<PendingWrite> batch;
  batch.reserve(static_cast<size_t>(options.max_batch));
  for (;;) {
    {
      absl::MutexLock lock(&mu);
      while (!stopping && queue.empty()) cv.Wait(&mu);
      // Stop only once drained: every queued write gets committed and its
      // callback run, even during destruction.
      if (queue.empty()) return;
      while (!queue.empty() && batch.size() < static_cast<size_t>(options.max_batch)) {
        batch.push_back(std::move(queue.front()));
        queue.pop_front();
      }
    }
    size_t next = 0;
    while (next < batch.size()) next = RunTransaction(batch, next);
    batch.clear();
  }
}

size_t Database::Impl::RunTransaction(std::vector<PendingWrite>& batch, size_t begin) {
  sqlite3* db = writer->db;
  ++transactions;
  std::vector<absl::Status> statuses;
  statuses.reserve(batch.size() - begin);
  auto finish = [&](size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (batch[i].done) batch[i].done(std::move(statuses[i - begin]));
    }
    return end;
  };

  if (absl::Status s = Exec(db, "BEGIN IMMEDIATE"); !s.ok()) {
    SetStorageError(s);
    statuses.assign(batch.size() - begin, s);
    return finish(batch.size());
  }

  for (size_t i = begin; i < batch.size(); ++i) {
    ++writes;
    absl::Status status = Exec(db, "SAVEPOINT paradnn_write");
    bool broken = !status.ok();
    if (!broken) {
      // Out of memory in one write fails that write (rolled back to its
      // savepoint), not the writer thread and with it the process.
      try {
        status = batch[i].fn(db);
      } catch (const std::bad_alloc&) {
        status = absl::ResourceExhaustedError("out of memory in a write function");
      }
      // A function that ran COMMIT/ROLLBACK, or an error after which SQLite
      // rolled the whole transaction back (disk full, I/O error), leaves no
      // transaction: the earlier functions' changes are gone with it.
      broken = sqlite3_get_autocommit(db) != 0;
      if (broken) {
        status = absl::AbortedError(absl::StrCat(
            "write transaction ended inside a write function; its batch was rolled back",
            status.ok() ? "" : absl::StrCat(": ", status.ToString())));
      } else if (status.ok()) {
        if (absl::Status s = Exec(db, "RELEASE paradnn_write"); !s.ok()) {
          status = s;
          broken = true;
        }
      } else {
        absl::Status s = Exec(db, "ROLLBACK TO paradnn_write");
        if (s.ok()) s = Exec(db, "RELEASE paradnn_write");
        if (!s.ok()) {
          spdlog::error("database {}: rolling back a failed write: {}", path, s.ToString());
          broken = true;
        }
      }
    }
    if (broken) {
      if (sqlite3_get_autocommit(db) == 0) Exec(db, "ROLLBACK").IgnoreError();
      const absl::Status lost =
          status.ok() ? absl::AbortedError("write batch rolled back") : status;
      SetStorageError(lost);
      for (absl::Status& earlier : statuses) {
        if (earlier.ok()) earlier = lost;
      }
      statuses.push_back(lost);
      return finish(i + 1);
    }
    statuses.push_back(std::move(status));
  }

  if (absl::Status s = Exec(db, "COMMIT"); !s.ok()) {
    // A failed COMMIT (e.g. a deferred constraint) may leave the
    // transaction open; nothing of it is durable.
    if (sqlite3_get_autocommit(db) == 0) Exec(db, "ROLLBACK").IgnoreError();
    SetStorageError(s);
    for (absl::Status& status : statuses) {
      if (status.ok()) status = s;
    }
  } else {
    SetStorageError(absl::OkStatus());
  }
  return finish(batch.size());
}

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::Status Database::ReadHealth() const {
  return Read([](sqlite3* db) { return Exec(db, "SELECT 1"); });
}

absl::Status Database::StorageHealth() const {
  absl::MutexLock lock(&impl_->health_mu);
  return impl_->storage_error;
}

absl::Status CheckWritableAndIntact(sqlite3* db, const std::string& path) {
  if (sqlite3_db_readonly(db, "main") == 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("database ", path,
                     " is read-only (the file's or its directory's permissions, or a "
                     "read-only file system); the coordinator must write it"));
  }
  // A write lock proves the journal files can be created next to it too.
  if (absl::Status s = Exec(db, "BEGIN IMMEDIATE"); !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("database ", path, " cannot be written: ", s.message()));
  }
  Exec(db, "ROLLBACK").IgnoreError();
  Statement check(db, "PRAGMA quick_check(5)");
  std::vector<std::string> problems;
  while (true) {
    absl::StatusOr<bool> row = check.Step();
    if (!row.ok()) {
      return absl::DataLossError(absl::StrCat(
          "database ", path, " cannot be checked (PRAGMA quick_check): ", row.status().message(),
          "; restore it from a backup"));
    }
    if (!*row) break;
    if (check.ColumnText(0) != "ok") problems.push_back(check.ColumnText(0));
  }
  if (!problems.empty()) {
    return absl::DataLossError(absl::StrCat(
        "database ", path, " is damaged (PRAGMA quick_check: ", absl::StrJoin(problems, "; "),
        "); restore it from a backup"));
  }
  return absl::OkStatus();
}

absl::StatusOr<DatabaseFileLock> DatabaseFileLock::Acquire(const std::string& db_path) {
  const std::string path = db_path + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, " to lock the database: ", std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char text[32] = {0};
    const ssize_t got = ::pread(fd, text, sizeof(text) - 1, 0);
    ::close(fd);
    std::string holder = got > 0 ? std::string(text, static_cast<size_t>(got)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return absl::FailedPreconditionError(
        absl::StrCat("database ", db_path, " is in use by another coordinator (pid ",
                     holder.empty() ? std::string("unknown") : holder, ", lock ", path,
                     "); stop it, or give this one another --db"));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    spdlog::warn("{}: cannot record our pid: {}", path, std::strerror(errno));
  }
  DatabaseFileLock lock;
  lock.fd_ = fd;
  return lock;
}

DatabaseFileLock::DatabaseFileLock(DatabaseFileLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

DatabaseFileLock& DatabaseFileLock::operator=(DatabaseFileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DatabaseFileLock::~DatabaseFileLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

Database::~Database() {
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.SignalAll();
  if (impl_->thread.joinable()) impl_->thread.join();
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path,
                                                         DatabaseOptions options) {
  if (options.max_batch < 1 || options.read_connections < 1 || options.busy_timeout_ms < 0 ||
      options.mmap_bytes < 0 || options.writer_cache_kib < 1 || options.wal_checkpoint_pages < 1 ||
      options.read_time_limit_ms < 0 || options.reuse_spot_check_every < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DatabaseOptions: max_batch (", options.max_batch, "), read_connections (",
        options.read_connections, "), writer_cache_kib (", options.writer_cache_kib,
        ") and wal_checkpoint_pages (", options.wal_checkpoint_pages,
        ") must be >= 1, busy_timeout_ms (", options.busy_timeout_ms, "), mmap_bytes (",
        options.mmap_bytes, "), read_time_limit_ms (", options.read_time_limit_ms,
        ") and reuse_spot_check_every (", options.reuse_spot_check_every, ") >= 0"));
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;

  if (options.read_only) {
    if (::access(path.c_str(), F_OK) != 0) {
      return absl::NotFoundError(absl::StrCat("database ", path, ": no such file"));
    }
  } else {
    absl::StatusOr<std::unique_ptr<Connection>> writer =
        OpenConnection(path, Role::kWriter, options);
    if (!writer.ok()) return writer.status();
    impl->writer = *std::move(writer);
    if (absl::Status s = CheckWritableAndIntact(impl->writer->db, path); !s.ok()) return s;
    if (absl::Status s = ApplyMigrations(impl->writer->db, path); !s.ok()) return s;
  }

  for (int i = 0; i < options.read_connections; ++i) {
    absl::StatusOr<std::unique_ptr<Connection>> reader =
        OpenConnection(path, Role::kReader, options);
    if (!reader.ok()) return reader.status();
    {
      absl::MutexLock lock(&impl->read_mu);  // no other thread yet: for the analysis
      impl->free_readers.push_back(reader->get());
    }
    impl->readers.push_back(*std::move(reader));
  }
  if (options.read_only) {
    // Without a writer nothing migrates the file: read only what this
    // binary's queries understand.
    absl::StatusOr<int> version = ReadUserVersion(impl->readers.front()->db);
    if (!version.ok()) return version.status();
    if (*version != SchemaVersion()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "database ", path, " has schema ", *version, ", this paradnn reads schema ",
          SchemaVersion(),
          *version < SchemaVersion()
              ? ": open it once with this paradnn's coordinator (paradnn-coordinator --db or "
                "paradnn local), which migrates it"
              : ": it was written by a newer paradnn"));
    }
    return std::unique_ptr<Database>(new Database(std::move(impl)));
  }

  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->RunWriter(); });
  return std::unique_ptr<Database>(new Database(std::move(impl)));
}

void Database::Write(WriteFn fn, DoneFn done) {
  if (impl_->options.read_only) {
    if (done)
      done(absl::FailedPreconditionError(
          absl::StrCat("database ", impl_->path, " is open read-only")));
    return;
  }
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->queue.push_back({std::move(fn), std::move(done)});
  }
  impl_->cv.Signal();
}

void Database::WriteNext(WriteFn fn, DoneFn done) {
  if (impl_->options.read_only) {
    Write(std::move(fn), std::move(done));
    return;
  }
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->queue.push_front({std::move(fn), std::move(done)});
  }
  impl_->cv.Signal();
}

absl::Status Database::WriteSync(WriteFn fn) {
  if (OnWriterThread()) {
    return absl::FailedPreconditionError(
        "WriteSync called on the database writer thread (it would wait for itself)");
  }
  std::promise<absl::Status> committed;
  std::future<absl::Status> result = committed.get_future();
  Write(std::move(fn), [&committed](absl::Status s) { committed.set_value(std::move(s)); });
  return result.get();
}

absl::Status Database::Read(const ReadFn& fn) const {
  Connection* conn = nullptr;
  {
    absl::MutexLock lock(&impl_->read_mu);
    while (impl_->free_readers.empty()) impl_->read_cv.Wait(&impl_->read_mu);
    conn = impl_->free_readers.back();
    impl_->free_readers.pop_back();
  }
  absl::Status status;
  {
    internal::ScopedStatementCache scope(conn->cache.get());
    const int64_t limit_ms = impl_->options.read_time_limit_ms;
    const auto start = std::chrono::steady_clock::now();
    conn->deadline = limit_ms > 0 ? start + std::chrono::milliseconds(limit_ms)
                                  : std::chrono::steady_clock::time_point::max();
    // One read transaction per Read: every query of `fn` sees the same
    // snapshot, so counts computed by several statements agree.
    status = Exec(conn->db, "BEGIN");
    if (status.ok()) {
      status = fn(conn->db);
      absl::Status end = Exec(conn->db, status.ok() ? "COMMIT" : "ROLLBACK");
      if (status.ok()) status = end;
    }
    const bool timed_out = limit_ms > 0 && std::chrono::steady_clock::now() > conn->deadline;
    conn->deadline = std::chrono::steady_clock::time_point::max();  // the ROLLBACK must run
    if (sqlite3_get_autocommit(conn->db) == 0) Exec(conn->db, "ROLLBACK").IgnoreError();
    if (!status.ok() && timed_out) {
      status = absl::DeadlineExceededError(
          absl::StrCat("reading ", impl_->path, ": stopped after the ", limit_ms / 1000.0,
                       " s a read may take (", status.message(), ")"));
    }
  }
  {
    absl::MutexLock lock(&impl_->read_mu);
    impl_->free_readers.push_back(conn);
  }
  impl_->read_cv.Signal();
  return status;
}

const std::string& Database::path() const { return impl_->path; }

bool Database::OnWriterThread() const {
  return impl_->writer_id.load() == std::this_thread::get_id();
}

const DatabaseOptions& Database::options() const { return impl_->options; }

Database::WriterStats Database::writer_stats() const {
  WriterStats stats;
  stats.transactions = impl_->transactions.load();
  stats.writes = impl_->writes.load();
  return stats;
}

}  // namespace paradnn::db
