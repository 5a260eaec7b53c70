// Database owns one SQLite file: schema migrations, the single writer thread
// and read connections.
//
// Writes: Write() queues a function that runs on the writer thread inside a
// BEGIN IMMEDIATE transaction. Functions queued close together share one
// transaction (batched commit); each caller's callback runs only after that
// transaction has committed, so an acknowledgement sent from the callback is
// never ahead of the disk. A function that returns an error has its own
// changes rolled back (SAVEPOINT per function) without failing the batch.
//
// Reads: Read() runs a function on a read connection from a small pool on
// the caller's thread (WAL lets readers proceed while the writer writes).
//
// Thread-safe.
#ifndef PARADNN_DB_DATABASE_H_
#define PARADNN_DB_DATABASE_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/statement.h"  // Statement, Exec, SqliteError: every store uses them with Database

namespace paradnn::db {

// What an async store method calls after its transaction commits (or fails).
template <typename T>
using Callback = std::function<void(absl::StatusOr<T>)>;

// Schema version this binary writes. A file with a higher user_version is
// refused (written by a newer paradnn).
int SchemaVersion();

struct DatabaseOptions {
  int busy_timeout_ms = 5000;
  int max_batch = 256;  // most write functions per transaction
  int read_connections = 4;
  // Bytes of the file each connection reads through a memory map instead
  // of read() calls (PRAGMA mmap_size): a scan of a million results spent
  // a fifth of its time copying pages out of the kernel. 0 turns it off.
  // Readers only: the writer reads through its own page cache.
  int64_t mmap_bytes = int64_t{1} << 30;
  // The writer connection's page cache (PRAGMA cache_size), KiB: the hot
  // pages of the job queue, attempts and results indexes.
  int writer_cache_kib = 16384;
  // WAL pages after which a commit copies them into the file
  // (PRAGMA wal_autocheckpoint; SQLite's default is 1,000). Each checkpoint
  // syncs twice and copies a page once however often it changed, so under
  // a stream of results fewer, larger ones cost the writer less; the WAL
  // file grows to about this many pages of 4 KiB. 10,000 against 1,000:
  // +8 to +12 % results/s at 5,000 saturated workers (docs/operations.md).
  int wal_checkpoint_pages = 10000;
  // Opens an existing file for reads only: no writer connection, no
  // migrations (the file must be at SchemaVersion()), and Write() fails
  // with FailedPrecondition. Another process may write the file meanwhile.
  // For analyses of a database file without its coordinator.
  bool read_only = false;
  // How long one Read() may run its statements, in ms (0: no limit): past
  // it SQLite interrupts the statement and Read returns DeadlineExceeded.
  // A file handed to us may hold queries that never end; our own reads of
  // a million results take seconds.
  int64_t read_time_limit_ms = 300'000;
  // One in this many results handed to a job by reuse (db/result_reuse.h)
  // is measured again instead, and the source refused if the two disagree
  // (1: every one; 0: none).
  int reuse_spot_check_every = 20;
};

// Refuses a database the coordinator cannot keep: FailedPrecondition when
// it is read-only (file, directory or file system) or a write lock cannot
// be taken; DataLoss naming what PRAGMA quick_check found when its pages
// are damaged. Database::Open runs it before the migrations.
absl::Status CheckWritableAndIntact(sqlite3* db, const std::string& path);

// One coordinator per database file: an exclusive flock on <db>.lock, which
// holds the holder's pid, for as long as this object lives. Two
// coordinators on one file would interleave their sweeps' jobs.
class DatabaseFileLock {
 public:
  // FailedPrecondition naming the holder's pid when another process holds
  // the lock.
  static absl::StatusOr<DatabaseFileLock> Acquire(const std::string& db_path);
  DatabaseFileLock(DatabaseFileLock&& other) noexcept;
  DatabaseFileLock& operator=(DatabaseFileLock&& other) noexcept;
  DatabaseFileLock(const DatabaseFileLock&) = delete;
  DatabaseFileLock& operator=(const DatabaseFileLock&) = delete;
  ~DatabaseFileLock();

 private:
  DatabaseFileLock() = default;
  int fd_ = -1;
};

class Database {
 public:
  using WriteFn = std::function<absl::Status(sqlite3* db)>;
  using DoneFn = std::function<void(absl::Status)>;
  using ReadFn = std::function<absl::Status(sqlite3* db)>;

  // Opens (creating if needed) `path`, applies pending migrations, and starts
  // the writer thread. FailedPrecondition if the file is from a newer schema.
  // With options.read_only: NotFound for a missing file, FailedPrecondition
  // for a schema other than SchemaVersion(), and no writer.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path,
                                                        DatabaseOptions options = {});
  ~Database();  // drains queued writes, then stops the writer

  // Queues `fn`; `done` (optional) runs on the writer thread after commit
  // (or with the error). Never blocks on I/O. If COMMIT fails, every
  // function of the batch that had succeeded gets the commit's error. `fn`
  // must not COMMIT or ROLLBACK itself (the batch would then fail, Aborted).
  // `done` must not block on the writer (no WriteSync / *Sync writes).
  void Write(WriteFn fn, DoneFn done = nullptr);
  // Like Write, but queued before every write not yet started: for the next
  // part of an operation split over several writes (a large sweep's jobs),
  // which must not wait behind the whole queue again for each part.
  void WriteNext(WriteFn fn, DoneFn done = nullptr);
  // Queues `fn` and waits for its commit. For tests, start-up and the CLI.
  absl::Status WriteSync(WriteFn fn);

  // OK, or the storage failure of the last write transaction (a read-only
  // file, a full disk, an I/O error) until a later one commits: what
  // /readyz reports.
  absl::Status StorageHealth() const;
  // OK when a read connection answers a trivial query.
  absl::Status ReadHealth() const;
  // Runs `fn` on a read connection, inside one read transaction (a single
  // snapshot). Waits while every pooled connection is borrowed; the
  // connection refuses writes (query_only). DeadlineExceeded when `fn` runs
  // past options.read_time_limit_ms.
  absl::Status Read(const ReadFn& fn) const;

  const std::string& path() const;

  // True on the writer thread (inside write functions and their callbacks),
  // where a *Sync call would wait on itself.
  bool OnWriterThread() const;

  // Counters since Open, for metrics and for tests that check batching.
  struct WriterStats {
    int64_t transactions = 0;  // BEGIN IMMEDIATE ... COMMIT attempts
    int64_t writes = 0;        // write functions run
  };
  WriterStats writer_stats() const;
  const DatabaseOptions& options() const;

 private:
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace paradnn::db

#endif  // PARADNN_DB_DATABASE_H_
