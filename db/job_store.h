// Jobs and their attempts (leases): lease, extend, release, expire.
// Every mutating method goes through Database::Write (the writer thread) and
// has an async form taking a callback that runs after commit, plus a
// blocking *Sync form for tests and start-up. Reads run on the caller's
// thread. Thread-safe.
#ifndef PARADNN_DB_JOB_STORE_H_
#define PARADNN_DB_JOB_STORE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::db {

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
  // Jobs this lease gave an earlier sweep's result instead of running them
  // (db/result_reuse.h). job_id 0: they were the last pending ones and
  // there is no job to run.
  int reused_results = 0;
  // A gang job (params.hosts > 1): its ranks' workers and attempts, rank 0
  // first (the leasing worker, attempt_id). Empty for a single-worker job.
  struct GangMember {
    std::string worker_id;
    int64_t attempt_id = 0;
  };
  std::vector<GangMember> gang;
  // No job leased because the first job in run order is a gang job that
  // waits for more idle workers of this platform (all or nothing, in order:
  // single-worker jobs behind it do not overtake it), or because pending
  // gang jobs need more workers than the platform's group has: why, one
  // line each, each beginning "sweep N: ". Set only with job_id 0.
  std::vector<std::string> waiting;
  // The most workers any pending job of the device asks for (params.hosts;
  // 1 without gang jobs): how many idle peers the next lease should bring.
  int64_t max_pending_hosts = 1;
};

// The workers a lease may take for a gang job beside the leasing one: the
// idle workers of its platform (one fingerprint), their lease slots claimed
// by the caller, and how many workers of that platform are connected
// (idle or busy). The default: a worker alone, which never leases a gang.
struct GangCandidates {
  std::vector<std::string> idle_peers;
  int64_t platform_workers = 1;
  int64_t platform_id = 0;  // named in waiting lines
};
// GangCandidates.platform_workers of a lease that did not count its
// platform's workers (no gang was pending when it began): every gang may be
// held, and one found first in run order waits while the caller leases
// again, counting.
inline constexpr int64_t kPlatformWorkersNotCounted = std::numeric_limits<int64_t>::max();

// Whether `lease` holds a job to run (not only reused results).
inline bool HasJob(const std::optional<Lease>& lease) {
  return lease.has_value() && lease->job_id != 0;
}

class JobStore {
 public:
  explicit JobStore(Database* db) : db_(db) {}

  // Leases the next pending job for `device` (running sweeps, oldest sweep
  // first, then by ordinal): inserts an attempt for `worker_id` with
  // `lease_deadline_unix_ms`, sets the job leased and increments its attempt
  // count. nullopt when no job is pending for that device. Jobs whose
  // configuration an earlier sweep measured on the worker's fingerprint
  // with its harness take that result on the way (Lease::reused_results).
  // A gang job (params.hosts N) is leased only with N - 1 of `candidates`'
  // idle peers, one attempt each in the same commit (rank order: the
  // leasing worker, then the peers in the order given); the job counts one
  // attempt. While the first job in run order waits for its gang, nothing
  // is leased (Lease::waiting says why).
  void LeaseNext(const std::string& device, const std::string& worker_id, int64_t now_unix_ms,
                 int64_t lease_deadline_unix_ms, Callback<std::optional<Lease>> done,
                 const GangCandidates& candidates = {});
  absl::StatusOr<std::optional<Lease>> LeaseNextSync(const std::string& device,
                                                     const std::string& worker_id,
                                                     int64_t now_unix_ms,
                                                     int64_t lease_deadline_unix_ms,
                                                     const GangCandidates& candidates = {});

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
  // was leased to that worker. A gang's attempt releases the whole gang:
  // every open attempt of it is closed with `reason`.
  void Release(int64_t attempt_id, const std::string& reason, int64_t now_unix_ms, int max_attempts,
               Callback<v1::JobState> done, const std::string& holder = "");
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

}  // namespace paradnn::db

#endif  // PARADNN_DB_JOB_STORE_H_
