// Results and their samples: stored exactly once per job, queried by sweep.
// Every mutating method goes through Database::Write (the writer thread) and
// has an async form taking a callback that runs after commit, plus a
// blocking *Sync form for tests and start-up. Reads run on the caller's
// thread. Thread-safe.
#ifndef PARADNN_DB_RESULT_STORE_H_
#define PARADNN_DB_RESULT_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "db/job_store.h"
#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::db {

enum class StoreOutcome { kStored, kDuplicate };

class ResultStore {
 public:
  explicit ResultStore(Database* db) : db_(db) {}

  // Stores the result of `attempt_id` for `job_id` exactly once per job: if
  // the job already has a result (any attempt), nothing changes and the
  // answer is kDuplicate. Otherwise writes the results row (columns for
  // every metric + the Measurement blob without samples), one samples row per
  // timed step, closes the attempt with the outcome, sets the job done and,
  // when it was the sweep's last unfinished job, the sweep done. A result for
  // an attempt that was released (lease expired) is still accepted while the
  // job has no result. NotFound for an unknown job, InvalidArgument if the
  // attempt does not belong to the job or platform_id (> 0) is unknown;
  // platform_id <= 0 stores no platform. PermissionDenied, and nothing
  // changes, when `worker_id` is not the worker the attempt was leased to.
  //
  // On kDuplicate the reporting attempt, if still open, is closed
  // ("duplicate") so its lease stops being extended. Outcome CANCELLED writes
  // no results row: the open attempt is closed ("cancelled"), the job becomes
  // JOB_CANCELLED and the answer is kStored; a CANCELLED from an attempt that
  // is already closed changes nothing (kDuplicate).
  void Store(int64_t job_id, int64_t attempt_id, const std::string& worker_id, int64_t platform_id,
             const v1::Measurement& measurement, int64_t now_unix_ms, Callback<StoreOutcome> done);
  absl::StatusOr<StoreOutcome> StoreSync(int64_t job_id, int64_t attempt_id,
                                         const std::string& worker_id, int64_t platform_id,
                                         const v1::Measurement& measurement, int64_t now_unix_ms);

  // Store, then, in the same transaction and only when the store succeeded,
  // JobStore::LeaseNext for `device` and the reporting worker: a worker that
  // reports a result gets its next job after one commit instead of two. A
  // failed lease is rolled back alone and reported in `next`; the result
  // stands.
  struct StoredThenLeased {
    StoreOutcome outcome = StoreOutcome::kStored;
    absl::StatusOr<std::optional<Lease>> next;
  };
  void StoreThenLease(int64_t job_id, int64_t attempt_id, const std::string& worker_id,
                      int64_t platform_id, const v1::Measurement& measurement, int64_t now_unix_ms,
                      const std::string& device, int64_t lease_deadline_unix_ms,
                      Callback<StoredThenLeased> done, const GangCandidates& candidates = {});

  // One row per job of the sweep (jobs without a result have no
  // measurement, worker_id, attempt_id or platform_fingerprint), ordered by
  // job id. Samples filled when asked. NotFound for an unknown sweep.
  absl::StatusOr<std::vector<v1::ResultRow>> Query(int64_t sweep_id, bool include_samples) const;
  // How many result rows a job has (tests assert exactly one).
  absl::StatusOr<int64_t> CountForJob(int64_t job_id) const;

 private:
  Database* db_;
};

// The stored measurement of `job_id`'s result; nullopt when it has none.
// DataLoss when the stored bytes do not parse.
absl::StatusOr<std::optional<v1::Measurement>> ReadMeasurementOfJob(const Database& database,
                                                                    int64_t job_id);

}  // namespace paradnn::db

#endif  // PARADNN_DB_RESULT_STORE_H_
