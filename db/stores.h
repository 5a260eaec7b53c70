// Typed stores over one Database: sweeps, jobs + attempts (leases),
// results + samples, workers, platforms.
//
// Every mutating method goes through Database::Write (the writer thread) and
// has an async form taking a callback that runs after commit, plus a
// blocking *Sync form for tests and start-up. Reads run on the caller's
// thread. All stores are thread-safe.
#ifndef PARADNN_DB_STORES_H_
#define PARADNN_DB_STORES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/metrics.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::db {

template <typename T>
using Callback = std::function<void(absl::StatusOr<T>)>;

// ---- configurations -------------------------------------------------------

// A configuration's identity (configs.canonical): the family, then every
// param and option as key=value sorted by key, space-separated, e.g.
// "fc batch=64 layer=4 node=32". Precision, optimizer and repeat are not
// part of it.
std::string ConfigCanonical(const v1::ModelConfig& config);

// The configs row of `config`, inserted with its config_params when new.
// Runs inside the caller's write transaction.
absl::StatusOr<int64_t> InternConfig(sqlite3* db, const v1::ModelConfig& config);

// ---- sweeps ---------------------------------------------------------------

struct NewJob {
  v1::ModelConfig config;
  v1::RunSettings settings;
  std::string device;
  int32_t ordinal = 0;  // position in the sweep's (shuffled) run order
  int32_t repeat = 0;   // which of the sweep's repeats of this configuration
  // The runner core's analytic estimates of one training step; 0 means
  // unknown and is stored as NULL.
  int64_t params = 0;
  double model_flops = 0;
  double peak_memory_estimate_bytes = 0;
};

class SweepStore {
 public:
  explicit SweepStore(Database* db) : db_(db) {}

  // Inserts the sweep and all its jobs (pending), plus each job's
  // hyper-parameters into job_params and its estimates (NewJob) into jobs;
  // spec.run_predicted_oom is kept in its own column for leases. Returns the
  // sweep id. A job with an empty device takes spec.device; a key in both
  // config.params and config.options is InvalidArgument (nothing is
  // inserted). A sweep without jobs is done at once.
  //
  // The jobs go in in chunks of a few hundred, one write each, so that a
  // large sweep does not hold the writer (and every lease and result
  // commit) for its whole insertion. Until the last chunk commits, the sweep
  // is in state SWEEP_STATE_UNSPECIFIED: not leasable, and NotFound / not
  // listed for Get, List and Cancel; the last chunk makes it RUNNING. If a
  // chunk fails, the sweep and its jobs are deleted and `done` gets the
  // error; a sweep left half created by a process that died is deleted by
  // the next Create.
  void Create(const v1::SweepSpec& spec, std::vector<NewJob> jobs, int64_t now_unix_ms,
              Callback<int64_t> done);
  absl::StatusOr<int64_t> CreateSync(const v1::SweepSpec& spec, std::vector<NewJob> jobs,
                                     int64_t now_unix_ms);

  // Status with job counts by state; NotFound for an unknown id.
  // elapsed_seconds is computed against `now_unix_ms` while running.
  absl::StatusOr<v1::SweepStatus> Get(int64_t sweep_id, int64_t now_unix_ms) const;
  absl::StatusOr<std::vector<v1::SweepStatus>> List(int64_t now_unix_ms) const;

  // Marks the sweep cancelled and its pending jobs cancelled. Returns the
  // attempts still leased (job_id, attempt_id, worker_id) so the caller can
  // tell their workers to stop; those jobs end when their workers report
  // (CANCELLED or a result) or are released. Cancelling again returns the
  // still-leased attempts again; a sweep that is already done stays done
  // (empty list). NotFound for an unknown id.
  struct LiveAttempt {
    int64_t job_id;
    int64_t attempt_id;
    std::string worker_id;
  };
  void Cancel(int64_t sweep_id, int64_t now_unix_ms, Callback<std::vector<LiveAttempt>> done);
  absl::StatusOr<std::vector<LiveAttempt>> CancelSync(int64_t sweep_id, int64_t now_unix_ms);

 private:
  Database* db_;
};

// ---- jobs and leases ------------------------------------------------------

struct Lease {
  int64_t job_id = 0;
  int64_t attempt_id = 0;
  int64_t sweep_id = 0;
  int64_t lease_deadline_unix_ms = 0;  // as stored with the attempt
  v1::ModelConfig config;
  v1::RunSettings settings;
  std::string device;
  // The job's estimates as stored at submit (0 = unknown).
  int64_t params = 0;
  double model_flops = 0;
  double peak_memory_estimate_bytes = 0;
  // The sweep asked to run jobs whose estimate exceeds a worker's memory.
  bool run_predicted_oom = false;
};

class JobStore {
 public:
  explicit JobStore(Database* db) : db_(db) {}

  // Leases the next pending job for `device` (running sweeps, oldest sweep
  // first, then by ordinal): inserts an attempt for `worker_id` with
  // `lease_deadline_unix_ms`, sets the job leased and increments its attempt
  // count. nullopt when no job is pending for that device.
  void LeaseNext(const std::string& device, const std::string& worker_id, int64_t now_unix_ms,
                 int64_t lease_deadline_unix_ms, Callback<std::optional<Lease>> done);
  absl::StatusOr<std::optional<Lease>> LeaseNextSync(const std::string& device,
                                                     const std::string& worker_id,
                                                     int64_t now_unix_ms,
                                                     int64_t lease_deadline_unix_ms);

  // Moves the deadline of every open attempt of `worker_id`.
  void ExtendLeases(const std::string& worker_id, int64_t lease_deadline_unix_ms);
  // At start-up: no open attempt's deadline later than `latest_unix_ms` (a
  // previous process stored them generously, keeping the exact ones in
  // memory). Returns how many moved.
  absl::StatusOr<int64_t> CapLeaseDeadlinesSync(int64_t latest_unix_ms);

  // Closes an open attempt without a result (worker lost, lease expired,
  // coordinator restart): the attempt gets `reason`; the job goes back to
  // pending, or to failed once it has had `max_attempts` attempts (cancelled
  // if its sweep was cancelled). Closing an attempt that is already closed is
  // a no-op (returns OK with the job's state); so is the job side when the
  // job already has a result. NotFound for an unknown attempt,
  // InvalidArgument for max_attempts < 1. `holder` set (a worker handing its
  // job back): PermissionDenied, and nothing changes, unless the attempt
  // was leased to that worker.
  void Release(int64_t attempt_id, const std::string& reason, int64_t now_unix_ms,
               int max_attempts, Callback<v1::JobState> done, const std::string& holder = "");
  absl::StatusOr<v1::JobState> ReleaseSync(int64_t attempt_id, const std::string& reason,
                                           int64_t now_unix_ms, int max_attempts);

  // Open attempts whose lease deadline is before `now_unix_ms`.
  absl::StatusOr<std::vector<int64_t>> ExpiredAttempts(int64_t now_unix_ms) const;
  // Every open attempt (used at start-up to release what a previous process
  // had leased).
  absl::StatusOr<std::vector<int64_t>> OpenAttempts() const;
  // Open attempts of one worker.
  absl::StatusOr<std::vector<int64_t>> OpenAttemptsOf(const std::string& worker_id) const;
  // Count of pending jobs per device.
  absl::StatusOr<int64_t> PendingCount(const std::string& device) const;

 private:
  Database* db_;
};

// ---- results --------------------------------------------------------------

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
  void Store(int64_t job_id, int64_t attempt_id, const std::string& worker_id,
             int64_t platform_id, const v1::Measurement& measurement, int64_t now_unix_ms,
             Callback<StoreOutcome> done);
  absl::StatusOr<StoreOutcome> StoreSync(int64_t job_id, int64_t attempt_id,
                                         const std::string& worker_id, int64_t platform_id,
                                         const v1::Measurement& measurement,
                                         int64_t now_unix_ms);

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
                      int64_t platform_id, const v1::Measurement& measurement,
                      int64_t now_unix_ms, const std::string& device,
                      int64_t lease_deadline_unix_ms, Callback<StoredThenLeased> done);

  // One row per job of the sweep (jobs without a result have no
  // measurement, worker_id, attempt_id or platform_fingerprint), ordered by
  // job id. Samples filled when asked. NotFound for an unknown sweep.
  absl::StatusOr<std::vector<v1::ResultRow>> Query(int64_t sweep_id, bool include_samples) const;
  // How many result rows a job has (tests assert exactly one).
  absl::StatusOr<int64_t> CountForJob(int64_t job_id) const;

 private:
  Database* db_;
};

// ---- platforms and workers ------------------------------------------------

class PlatformStore {
 public:
  explicit PlatformStore(Database* db) : db_(db) {}
  // Inserts the platform if its fingerprint is new; returns its id either way
  // (the first report's facts are kept). The first reporter (`owner`, a
  // worker id) owns the row: only it replaces the roofs with a newer
  // calibration. A report whose facts (device, cores, libraries, ISA, stack
  // settings) differ from the stored ones under the same fingerprint is kept
  // apart, under "<fingerprint>~<owner>", and never replaces the first.
  // InvalidArgument for an empty fingerprint or a calibration time more than
  // a day ahead of the coordinator's clock.
  void Upsert(const v1::Platform& platform, Callback<int64_t> done,
              const std::string& owner = "");
  absl::StatusOr<int64_t> UpsertSync(const v1::Platform& platform,
                                     const std::string& owner = "");
  absl::StatusOr<v1::Platform> Get(int64_t platform_id) const;

 private:
  Database* db_;
};

class WorkerStore {
 public:
  explicit WorkerStore(Database* db) : db_(db) {}
  // Records a (re)connected worker. platform_id <= 0, or one that is not
  // stored, records no platform. These three writes are fire-and-forget:
  // failures are logged.
  void Connected(const std::string& worker_id, const std::string& device_kind,
                 const std::string& hostname, int64_t platform_id, int64_t now_unix_ms);
  void Disconnected(const std::string& worker_id, int64_t now_unix_ms);
  void Seen(const std::string& worker_id, int64_t now_unix_ms);
  // Every worker ever seen, with its platform and jobs_done (count of results).
  absl::StatusOr<std::vector<v1::WorkerInfo>> List() const;
  // Marks every worker disconnected (start-up: no stream survives a restart).
  absl::Status MarkAllDisconnectedSync(int64_t now_unix_ms);

 private:
  Database* db_;
};

}  // namespace paradnn::db

#endif  // PARADNN_DB_STORES_H_
