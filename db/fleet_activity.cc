#include "db/fleet_activity.h"

#include "absl/strings/str_cat.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::db {
namespace {

// The window: the sweep's life, the last window_seconds, or all history.
absl::Status ReadWindow(sqlite3* db, int64_t sweep_id, double window_seconds, int64_t now_unix_ms,
                        FleetActivity* activity) {
  activity->to_unix_ms = now_unix_ms;
  if (sweep_id != 0) {
    Statement sweep(db,
                    "SELECT device, created_unix_ms, finished_unix_ms FROM sweeps WHERE id = ?");
    sweep.Bind(1, sweep_id);
    absl::StatusOr<bool> row = sweep.Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::NotFoundError(absl::StrCat("sweep ", sweep_id, " does not exist"));
    activity->sweep_device = sweep.ColumnText(0);
    activity->from_unix_ms = sweep.ColumnInt(1);
    if (!sweep.ColumnIsNull(2)) activity->to_unix_ms = sweep.ColumnInt(2);
    return absl::OkStatus();
  }
  // A window reaching back before the epoch is all history (and would
  // overflow int64 milliseconds).
  if (window_seconds > 0 && window_seconds * 1000 < static_cast<double>(now_unix_ms)) {
    activity->from_unix_ms = now_unix_ms - static_cast<int64_t>(window_seconds * 1000);
    return absl::OkStatus();
  }
  Statement first(db, "SELECT MIN(started_unix_ms) FROM attempts");
  absl::StatusOr<bool> row = first.Step();
  if (!row.ok()) return row.status();
  activity->from_unix_ms = *row && !first.ColumnIsNull(0) ? first.ColumnInt(0) : now_unix_ms;
  return absl::OkStatus();
}

absl::Status ReadWorkers(sqlite3* db, FleetActivity* activity) {
  Statement workers(db,
                    "SELECT id, device_kind, connected, connected_unix_ms, last_seen_unix_ms "
                    "FROM workers");
  return workers.ForEachRow([&] {
    FleetWorkerRow& w = activity->workers.emplace_back();
    w.worker_id = workers.ColumnText(0);
    w.device_kind = workers.ColumnText(1);
    w.connected = workers.ColumnInt(2) != 0;
    w.connected_unix_ms = workers.ColumnInt(3);
    w.last_seen_unix_ms = workers.ColumnInt(4);
  });
}

// Attempts overlapping the window (open ones included). An attempt that
// took an earlier sweep's result (db/result_reuse.h) did no work: left out.
absl::Status ReadAttempts(sqlite3* db, int64_t sweep_id, FleetActivity* activity) {
  const char* const kAttempts =
      "SELECT a.worker_id, j.device, a.started_unix_ms, a.finished_unix_ms, r.id, r.outcome, "
      "r.timed_seconds, r.build_seconds, r.hfu "
      "FROM attempts a JOIN jobs j ON j.id = a.job_id LEFT JOIN results r ON r.attempt_id = a.id "
      "WHERE a.started_unix_ms <= ?1 AND (a.finished_unix_ms IS NULL OR a.finished_unix_ms >= ?2) "
      "AND r.reused_from_job_id IS NULL";
  const char* const kSweepAttempts =
      "SELECT a.worker_id, j.device, a.started_unix_ms, a.finished_unix_ms, r.id, r.outcome, "
      "r.timed_seconds, r.build_seconds, r.hfu "
      "FROM jobs j JOIN attempts a ON a.job_id = j.id LEFT JOIN results r ON r.attempt_id = a.id "
      "WHERE j.sweep_id = ?3 AND a.started_unix_ms <= ?1 "
      "AND (a.finished_unix_ms IS NULL OR a.finished_unix_ms >= ?2) "
      "AND r.reused_from_job_id IS NULL";
  Statement attempts(db, sweep_id != 0 ? kSweepAttempts : kAttempts);
  attempts.Bind(1, activity->to_unix_ms).Bind(2, activity->from_unix_ms);
  if (sweep_id != 0) attempts.Bind(3, sweep_id);
  return attempts.ForEachRow([&] {
    FleetAttemptRow& a = activity->attempts.emplace_back();
    a.worker_id = attempts.ColumnText(0);
    a.device_kind = attempts.ColumnText(1);
    a.started_unix_ms = attempts.ColumnInt(2);
    a.finished_unix_ms = attempts.ColumnIsNull(3) ? 0 : attempts.ColumnInt(3);
    a.has_result = !attempts.ColumnIsNull(4);
    if (a.has_result) {
      a.ok = attempts.ColumnInt(5) == v1::OK;
      a.timed_seconds = attempts.ColumnIsNull(6) ? 0 : attempts.ColumnDouble(6);
      a.build_seconds = attempts.ColumnIsNull(7) ? 0 : attempts.ColumnDouble(7);
      if (!attempts.ColumnIsNull(8)) a.hfu = attempts.ColumnDouble(8);
    }
  });
}

}  // namespace

absl::StatusOr<FleetActivity> ReadFleetActivity(const Database& database, int64_t sweep_id,
                                                double window_seconds, int64_t now_unix_ms) {
  FleetActivity activity;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    if (absl::Status s = ReadWindow(db, sweep_id, window_seconds, now_unix_ms, &activity);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ReadWorkers(db, &activity); !s.ok()) return s;
    return ReadAttempts(db, sweep_id, &activity);
  });
  if (!status.ok()) return status;
  return activity;
}

absl::StatusOr<StateCounts> ReadStateCounts(const Database& database) {
  StateCounts counts;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    Statement jobs(db, "SELECT state, COUNT(*) FROM jobs GROUP BY state");
    absl::Status walked = jobs.ForEachRow(
        [&] { counts.jobs.emplace_back(static_cast<int>(jobs.ColumnInt(0)), jobs.ColumnInt(1)); });
    if (!walked.ok()) return walked;
    Statement sweeps(db, "SELECT state, COUNT(*) FROM sweeps GROUP BY state");
    walked = sweeps.ForEachRow([&] {
      counts.sweeps.emplace_back(static_cast<int>(sweeps.ColumnInt(0)), sweeps.ColumnInt(1));
    });
    if (!walked.ok()) return walked;
    Statement workers(db, "SELECT id, device_kind FROM workers");
    return workers.ForEachRow(
        [&] { counts.workers.emplace_back(workers.ColumnText(0), workers.ColumnText(1)); });
  });
  if (!status.ok()) return status;
  return counts;
}

}  // namespace paradnn::db
