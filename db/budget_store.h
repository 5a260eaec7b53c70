// The jobs of budgeted sweeps (docs/prediction.md): held until the sweep's
// planner chooses to measure them, or predicted when its budget ends.
// Predictions live in their own table, never in results, so nothing that
// counts measurements can count one. Every mutating method goes through
// Database::Write (the writer thread) and has an async form taking a
// callback that runs after commit, plus a blocking *Sync form. Thread-safe.
#ifndef PARADNN_DB_BUDGET_STORE_H_
#define PARADNN_DB_BUDGET_STORE_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::db {

// A running sweep with held jobs.
struct BudgetedSweep {
  int64_t sweep_id = 0;
  int64_t created_unix_ms = 0;
  v1::SweepSpec spec;
};

class BudgetStore {
 public:
  explicit BudgetStore(Database* db) : db_(db) {}

  // Moves those of `job_ids` that are still held to pending (the planner
  // chose to measure them); returns how many moved.
  void Release(const std::vector<int64_t>& job_ids, int64_t now_unix_ms, Callback<int64_t> done);
  absl::StatusOr<int64_t> ReleaseSync(const std::vector<int64_t>& job_ids, int64_t now_unix_ms);

  // Stores each prediction for its job if the job is still held, the job
  // becoming JOB_PREDICTED; then finishes the sweep when nothing of it is
  // left to run. Returns how many were stored (a job measured in the
  // meantime keeps its result and gets none).
  void StorePredictions(int64_t sweep_id,
                        std::vector<std::pair<int64_t, v1::PredictedStep>> predictions,
                        int64_t now_unix_ms, Callback<int64_t> done);
  absl::StatusOr<int64_t> StorePredictionsSync(
      int64_t sweep_id, std::vector<std::pair<int64_t, v1::PredictedStep>> predictions,
      int64_t now_unix_ms);

  // Moves the sweep's held jobs that an earlier sweep measured on the
  // fingerprint and with the harness of a connected worker of their device
  // (db/result_reuse.h) to pending, unless the sweep asked for fresh
  // measurements: leasing gives them those results at no cost, so the
  // planner starts from what is known. nullopt when no connected worker
  // of the device has a fingerprint and a harness yet (ask again later).
  absl::StatusOr<std::optional<int64_t>> ReleaseReusableSync(int64_t sweep_id, int64_t now_unix_ms);

  // Deletes those of `job_ids` that are still held jobs of the sweep (a
  // target interval's repeats their configuration did not need), then
  // finishes the sweep when nothing of it is left to run. Returns how many
  // were deleted.
  absl::StatusOr<int64_t> DropHeldSync(int64_t sweep_id, const std::vector<int64_t>& job_ids,
                                       int64_t now_unix_ms);

  // Moves the sweep's pending jobs back to held (its budget ended before a
  // worker took them); returns how many moved.
  absl::StatusOr<int64_t> HoldPendingSync(int64_t sweep_id, int64_t now_unix_ms);

  // When the sweep's first attempt started (its budget counts from then);
  // 0 before any.
  absl::StatusOr<int64_t> FirstStartUnixMs(int64_t sweep_id) const;

  // Running sweeps that still hold jobs, oldest first.
  absl::StatusOr<std::vector<BudgetedSweep>> HoldingSweeps() const;
  // Every running sweep, oldest first (budgeted or not).
  absl::StatusOr<std::vector<BudgetedSweep>> RunningSweeps() const;

 private:
  Database* db_;
};

}  // namespace paradnn::db

#endif  // PARADNN_DB_BUDGET_STORE_H_
