// Sweeps and their jobs: created in chunks, listed, cancelled.
// Every mutating method goes through Database::Write (the writer thread) and
// has an async form taking a callback that runs after commit, plus a
// blocking *Sync form for tests and start-up. Reads run on the caller's
// thread. Thread-safe.
#ifndef PARADNN_DB_SWEEP_STORE_H_
#define PARADNN_DB_SWEEP_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::db {

struct NewJob {
  v1::ModelConfig config;
  v1::RunSettings settings;
  std::string device;
  int32_t ordinal = 0;  // position in the sweep's (shuffled) run order
  int32_t repeat = 0;   // which of the sweep's repeats of this configuration
  // Created held (JOB_HELD): a planner releases it when it is wanted. A job
  // of a budgeted sweep (settings.budget_seconds > 0) without a target
  // interval is held either way.
  bool held = false;
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

  // Moves the sweep from state `from` to `to` (SWEEP_RUNNING <->
  // SWEEP_INTERRUPTED: an interrupted sweep's jobs are not leased). Returns
  // whether it was in `from`; NotFound for an unknown id.
  absl::StatusOr<bool> MoveStateSync(int64_t sweep_id, v1::SweepState from, v1::SweepState to);

 private:
  Database* db_;
};

}  // namespace paradnn::db

#endif  // PARADNN_DB_SWEEP_STORE_H_
