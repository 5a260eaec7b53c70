// Helpers shared by the store implementations (db/*_store.cc). Not part of
// the public db API.
#ifndef PARADNN_DB_STORES_INTERNAL_H_
#define PARADNN_DB_STORES_INTERNAL_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "db/database.h"
#include "db/job_store.h"
#include "db/result_store.h"
#include "google/protobuf/message_lite.h"

namespace paradnn::db::internal {

// Queues `fn` on the writer; `done` gets the value `fn` produced once the
// transaction holding it has committed, or the error (fn's own, or the
// commit's). The value is handed from fn to done through shared state
// because both run on the writer thread, fn strictly first.
template <typename T>
void WriteValue(Database* db, std::function<absl::StatusOr<T>(sqlite3*)> fn, Callback<T> done) {
  auto value = std::make_shared<std::optional<T>>();
  db->Write(
      [fn = std::move(fn), value](sqlite3* conn) -> absl::Status {
        absl::StatusOr<T> result = fn(conn);
        if (!result.ok()) return result.status();
        *value = *std::move(result);
        return absl::OkStatus();
      },
      [value, done = std::move(done)](absl::Status status) {
        if (!done) return;
        if (!status.ok()) {
          done(std::move(status));
          return;
        }
        done(std::move(**value));
      });
}

// Runs an async store method and waits for its callback. Refused on the
// writer thread, where the wait would never end.
template <typename T>
absl::StatusOr<T> Await(Database* db, const std::function<void(Callback<T>)>& start) {
  if (db->OnWriterThread()) {
    return absl::FailedPreconditionError(
        "a *Sync store method was called on the database writer thread (it would wait for "
        "itself); use the callback form");
  }
  std::promise<absl::StatusOr<T>> promise;
  std::future<absl::StatusOr<T>> future = promise.get_future();
  start([&promise](absl::StatusOr<T> result) { promise.set_value(std::move(result)); });
  return future.get();
}

// Callback for fire-and-forget writes: nobody waits, so failures are logged.
Database::DoneFn LogIfFailed(std::string what);

// Parses a stored proto blob; DataLoss names the table and row when the
// bytes do not parse.
absl::Status ParseBlob(const std::string& bytes, google::protobuf::MessageLite* message,
                       const char* table, int64_t id);

// Binds an optional foreign key: ids <= 0 mean "none" and become NULL.
void BindOptionalId(Statement& stmt, int index, int64_t id);

// Runs a read whose rows are one integer each (ids, or a count); `bind`
// binds its parameters.
absl::StatusOr<std::vector<int64_t>> ReadInts(const Database* database, const char* sql,
                                              const std::function<void(Statement&)>& bind);

// The single integer a COUNT(*) read returns (0 without a row).
absl::StatusOr<int64_t> ReadCount(const Database* database, const char* sql,
                                  const std::function<void(Statement&)>& bind);

// Marks the sweep SWEEP_DONE (finished at `now_unix_ms`) when none of its
// jobs is pending or leased, unless it is already done or cancelled.
// Called by every write that can finish a sweep's last job.
absl::Status FinishSweepIfDone(sqlite3* db, int64_t sweep_id, int64_t now_unix_ms);

// Appends result `result_id`'s samples (table samples, in step order) to
// `m`'s step_seconds.
absl::Status AppendSamples(sqlite3* db, int64_t result_id, v1::Measurement* m);

// When the sweep's first attempt started (a budgeted sweep's budget counts
// from then); 0 before any.
absl::StatusOr<int64_t> FirstAttemptStartUnixMs(sqlite3* db, int64_t sweep_id);

// JobStore::LeaseNext's work inside a write function, for writes that lease
// as one step of something larger (a result stored, then the reporting
// worker's next job). `spot_check_every`: DatabaseOptions'
// reuse_spot_check_every.
absl::StatusOr<std::optional<Lease>> LeaseNextInTransaction(
    sqlite3* db, const std::string& device, const std::string& worker_id, int64_t now_unix_ms,
    int64_t lease_deadline_unix_ms, int spot_check_every, const GangCandidates& candidates);
// Closes the open attempts of `attempt_id`'s gang other than it, with
// `outcome`; nothing for a single attempt.
absl::Status CloseGangSiblings(sqlite3* db, int64_t attempt_id, const std::string& outcome,
                               int64_t now_unix_ms);

// ResultStore::Store's work inside a write function: exactly once per job,
// only from the worker the attempt is leased to (db/result_store.cc).
absl::StatusOr<StoreOutcome> StoreResultInTransaction(sqlite3* db, int64_t job_id,
                                                      int64_t attempt_id,
                                                      const std::string& worker_id,
                                                      int64_t platform_id, const v1::Measurement& m,
                                                      int64_t now_unix_ms);

}  // namespace paradnn::db::internal

#endif  // PARADNN_DB_STORES_INTERNAL_H_
