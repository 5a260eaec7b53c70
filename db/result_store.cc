// ResultStore: exactly-once results, their per-step samples, and queries.
#include "db/result_store.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/result_fields.h"
#include "db/result_reuse.h"
#include "db/stores_internal.h"

namespace paradnn::db {
namespace {

struct JobRow {
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  int64_t sweep_id = 0;
  bool has_result = false;
};

struct AttemptRow {
  int64_t job_id = 0;
  bool open = false;
  std::string worker_id;  // who the attempt was leased to
};

absl::StatusOr<JobRow> FindJob(sqlite3* db, int64_t job_id) {
  Statement find(db,
                 "SELECT state, sweep_id, EXISTS (SELECT 1 FROM results WHERE job_id = ?1) "
                 "FROM jobs WHERE id = ?1");
  find.Bind(1, job_id);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  if (!*found) return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
  JobRow row;
  row.state = static_cast<v1::JobState>(find.ColumnInt(0));
  row.sweep_id = find.ColumnInt(1);
  row.has_result = find.ColumnInt(2) != 0;
  return row;
}

absl::StatusOr<AttemptRow> FindAttempt(sqlite3* db, int64_t attempt_id, int64_t job_id) {
  Statement find(db,
                 "SELECT job_id, finished_unix_ms IS NULL, worker_id FROM attempts WHERE id = ?");
  find.Bind(1, attempt_id);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  if (!*found || find.ColumnInt(0) != job_id) {
    return absl::InvalidArgumentError(
        absl::StrCat("attempt ", attempt_id, " does not belong to job ", job_id));
  }
  return AttemptRow{find.ColumnInt(0), find.ColumnInt(1) != 0, find.ColumnText(2)};
}

// Closes the attempt and, for a gang's attempt, its open siblings: one
// rank's result (or cancellation) settles the whole gang.
absl::Status CloseAttempt(sqlite3* db, int64_t attempt_id, const std::string& outcome,
                          int64_t now_unix_ms) {
  {
    Statement close(db,
                    "UPDATE attempts SET finished_unix_ms = ?, outcome = ? "
                    "WHERE id = ? AND finished_unix_ms IS NULL");
    close.Bind(1, now_unix_ms).Bind(2, outcome).Bind(3, attempt_id);
    if (absl::Status s = close.Run(); !s.ok()) return s;
  }
  return internal::CloseGangSiblings(db, attempt_id, absl::StrCat("gang: ", outcome), now_unix_ms);
}

absl::Status SetJobState(sqlite3* db, int64_t job_id, v1::JobState state, int64_t now_unix_ms) {
  Statement update(db, "UPDATE jobs SET state = ?, updated_unix_ms = ? WHERE id = ?");
  update.Bind(1, static_cast<int>(state)).Bind(2, now_unix_ms).Bind(3, job_id);
  return update.Run();
}

absl::Status CheckPlatform(sqlite3* db, int64_t platform_id) {
  if (platform_id <= 0) return absl::OkStatus();
  Statement find(db, "SELECT 1 FROM platforms WHERE id = ?");
  find.Bind(1, platform_id);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  if (!*found) {
    return absl::InvalidArgumentError(absl::StrCat("platform_id ", platform_id, " is unknown"));
  }
  return absl::OkStatus();
}

// Writes the results row and its samples; returns the result id.
absl::StatusOr<int64_t> InsertResult(sqlite3* db, int64_t job_id, int64_t attempt_id,
                                     const std::string& worker_id, int64_t platform_id,
                                     const v1::Measurement& m, int64_t now_unix_ms) {
  // The samples live in their own table; keeping them out of the blob keeps
  // result rows small for the queries that only want statistics.
  v1::Measurement without_samples = m;
  without_samples.clear_step_seconds();
  {
    // The row's identity, then every stored field of the measurement
    // (db/result_fields.h): a new field is one entry there, not a column
    // and a bind here.
    Statement insert(db, ResultInsertSql().c_str());
    insert.Bind(1, job_id).Bind(2, attempt_id).Bind(3, worker_id);
    internal::BindOptionalId(insert, 4, platform_id);
    insert.BindBlob(5, without_samples.SerializeAsString()).Bind(6, now_unix_ms);
    BindStoredFields(m, insert);
    if (absl::Status s = insert.Run(); !s.ok()) return s;
  }
  const int64_t result_id = sqlite3_last_insert_rowid(db);
  for (int step = 0; step < m.step_seconds_size(); ++step) {
    Statement sample(db, "INSERT INTO samples (result_id, step, seconds) VALUES (?, ?, ?)");
    sample.Bind(1, result_id).Bind(2, step).Bind(3, m.step_seconds(step));
    if (absl::Status s = sample.Run(); !s.ok()) return s;
  }
  return result_id;
}

}  // namespace

namespace internal {

absl::StatusOr<StoreOutcome> StoreResultInTransaction(sqlite3* db, int64_t job_id,
                                                      int64_t attempt_id,
                                                      const std::string& worker_id,
                                                      int64_t platform_id, const v1::Measurement& m,
                                                      int64_t now_unix_ms) {
  absl::StatusOr<JobRow> job = FindJob(db, job_id);
  if (!job.ok()) return job.status();
  absl::StatusOr<AttemptRow> attempt = FindAttempt(db, attempt_id, job_id);
  if (!attempt.ok()) return attempt.status();
  // Only the worker the attempt was leased to reports it: another worker's
  // result, CANCELLED or duplicate must not close, cancel or answer it.
  if (attempt->worker_id != worker_id) {
    return absl::PermissionDeniedError(
        absl::StrCat("attempt ", attempt_id, " of job ", job_id, " is held by worker '",
                     attempt->worker_id, "', not '", worker_id, "'; its result is refused"));
  }

  if (job->has_result) {
    // The worker re-sent a result we already hold (its ack was lost), or a
    // second attempt finished the same job. The result stands; the
    // reporting attempt is closed so its lease is not extended forever.
    if (absl::Status s = CloseAttempt(db, attempt_id, "duplicate", now_unix_ms); !s.ok()) {
      return s;
    }
    return StoreOutcome::kDuplicate;
  }

  if (m.outcome() == v1::CANCELLED) {
    // A stopped run is not a measurement: no results row. Only the attempt
    // that holds the lease moves the job; a CANCELLED from an attempt that
    // was already released must not cancel the job's retry.
    if (!attempt->open) return StoreOutcome::kDuplicate;
    if (absl::Status s = CloseAttempt(db, attempt_id, "cancelled", now_unix_ms); !s.ok()) {
      return s;
    }
    if (job->state == v1::JOB_LEASED) {
      if (absl::Status s = SetJobState(db, job_id, v1::JOB_CANCELLED, now_unix_ms); !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = internal::FinishSweepIfDone(db, job->sweep_id, now_unix_ms); !s.ok()) {
      return s;
    }
    return StoreOutcome::kStored;
  }

  if (absl::Status s = CheckPlatform(db, platform_id); !s.ok()) return s;
  absl::StatusOr<int64_t> result_id =
      InsertResult(db, job_id, attempt_id, worker_id, platform_id, m, now_unix_ms);
  if (!result_id.ok()) return result_id.status();
  if (absl::Status s = JudgeSpotCheck(db, job_id, worker_id, m, now_unix_ms); !s.ok()) return s;
  // An attempt released earlier (lease expired) keeps its release reason.
  if (absl::Status s = CloseAttempt(db, attempt_id, v1::Outcome_Name(m.outcome()), now_unix_ms);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = SetJobState(db, job_id, v1::JOB_DONE, now_unix_ms); !s.ok()) return s;
  if (absl::Status s = internal::FinishSweepIfDone(db, job->sweep_id, now_unix_ms); !s.ok()) {
    return s;
  }
  return StoreOutcome::kStored;
}

}  // namespace internal

void ResultStore::Store(int64_t job_id, int64_t attempt_id, const std::string& worker_id,
                        int64_t platform_id, const v1::Measurement& measurement,
                        int64_t now_unix_ms, Callback<StoreOutcome> done) {
  auto shared = std::make_shared<const v1::Measurement>(measurement);
  internal::WriteValue<StoreOutcome>(
      db_,
      [job_id, attempt_id, worker_id, platform_id, shared,
       now_unix_ms](sqlite3* db) -> absl::StatusOr<StoreOutcome> {
        return internal::StoreResultInTransaction(db, job_id, attempt_id, worker_id, platform_id,
                                                  *shared, now_unix_ms);
      },
      std::move(done));
}

void ResultStore::StoreThenLease(int64_t job_id, int64_t attempt_id, const std::string& worker_id,
                                 int64_t platform_id, const v1::Measurement& measurement,
                                 int64_t now_unix_ms, const std::string& device,
                                 int64_t lease_deadline_unix_ms, Callback<StoredThenLeased> done,
                                 const GangCandidates& candidates) {
  auto shared = std::make_shared<const v1::Measurement>(measurement);
  internal::WriteValue<StoredThenLeased>(
      db_,
      [job_id, attempt_id, worker_id, platform_id, shared, now_unix_ms, device,
       lease_deadline_unix_ms, candidates, every = db_->options().reuse_spot_check_every](
          sqlite3* db) -> absl::StatusOr<StoredThenLeased> {
        absl::StatusOr<StoreOutcome> stored = internal::StoreResultInTransaction(
            db, job_id, attempt_id, worker_id, platform_id, *shared, now_unix_ms);
        if (!stored.ok()) return stored.status();
        StoredThenLeased out;
        out.outcome = *stored;
        // A savepoint of its own, inside the write's: a lease that fails
        // leaves the stored result alone.
        if (absl::Status s = Exec(db, "SAVEPOINT paradnn_lease_next"); !s.ok()) return s;
        out.next = internal::LeaseNextInTransaction(db, device, worker_id, now_unix_ms,
                                                    lease_deadline_unix_ms, every, candidates);
        if (!out.next.ok()) {
          if (absl::Status s = Exec(db, "ROLLBACK TO paradnn_lease_next"); !s.ok()) return s;
        }
        if (absl::Status s = Exec(db, "RELEASE paradnn_lease_next"); !s.ok()) return s;
        return out;
      },
      std::move(done));
}

absl::StatusOr<StoreOutcome> ResultStore::StoreSync(int64_t job_id, int64_t attempt_id,
                                                    const std::string& worker_id,
                                                    int64_t platform_id,
                                                    const v1::Measurement& measurement,
                                                    int64_t now_unix_ms) {
  return internal::Await<StoreOutcome>(db_, [&](Callback<StoreOutcome> done) {
    Store(job_id, attempt_id, worker_id, platform_id, measurement, now_unix_ms, std::move(done));
  });
}

absl::StatusOr<std::vector<v1::ResultRow>> ResultStore::Query(int64_t sweep_id,
                                                              bool include_samples) const {
  std::vector<v1::ResultRow> rows;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
    {
      Statement sweep(db, "SELECT 1 FROM sweeps WHERE id = ?");
      sweep.Bind(1, sweep_id);
      absl::StatusOr<bool> found = sweep.Step();
      if (!found.ok()) return found.status();
      if (!*found) return absl::NotFoundError(absl::StrCat("sweep ", sweep_id, " not found"));
    }
    Statement query(db,
                    "SELECT j.id, j.sweep_id, j.state, j.config, j.attempts, r.id, r.measurement, "
                    "r.worker_id, r.attempt_id, p.fingerprint, j.repeat, pr.details, "
                    "COALESCE(r.reused_from_job_id, 0), COALESCE(r.harness, '') "
                    "FROM jobs j LEFT JOIN results r ON r.job_id = j.id "
                    "LEFT JOIN platforms p ON p.id = r.platform_id "
                    "LEFT JOIN predictions pr ON pr.job_id = j.id "
                    "WHERE j.sweep_id = ? ORDER BY COALESCE(j.expansion_index, j.id), j.id");
    query.Bind(1, sweep_id);
    return query.ForEachRow([&]() -> absl::Status {
      v1::ResultRow& row = rows.emplace_back();
      row.set_job_id(query.ColumnInt(0));
      row.set_sweep_id(query.ColumnInt(1));
      row.set_state(static_cast<v1::JobState>(query.ColumnInt(2)));
      if (absl::Status s =
              internal::ParseBlob(query.ColumnBlob(3), row.mutable_config(), "jobs", row.job_id());
          !s.ok()) {
        return s;
      }
      row.set_attempts(static_cast<int32_t>(query.ColumnInt(4)));
      row.set_repeat(static_cast<int32_t>(query.ColumnInt(10)));
      if (!query.ColumnIsNull(11)) {
        if (absl::Status s = internal::ParseBlob(query.ColumnBlob(11), row.mutable_prediction(),
                                                 "predictions", row.job_id());
            !s.ok()) {
          return s;
        }
        row.set_platform_fingerprint(row.prediction().platform_fingerprint());
      }
      if (query.ColumnIsNull(5)) return absl::OkStatus();  // no result yet: measurement unset
      const int64_t result_id = query.ColumnInt(5);
      if (absl::Status s = internal::ParseBlob(query.ColumnBlob(6), row.mutable_measurement(),
                                               "results", result_id);
          !s.ok()) {
        return s;
      }
      row.set_worker_id(query.ColumnText(7));
      row.set_attempt_id(query.ColumnInt(8));
      row.set_platform_fingerprint(query.ColumnText(9));
      row.set_reused_from_job_id(query.ColumnInt(12));
      row.set_harness(query.ColumnText(13));
      if (!include_samples) return absl::OkStatus();
      return internal::AppendSamples(db, result_id, row.mutable_measurement());
    });
  });
  if (!status.ok()) return status;
  return rows;
}

absl::StatusOr<std::optional<v1::Measurement>> ReadMeasurementOfJob(const Database& database,
                                                                    int64_t job_id) {
  std::optional<v1::Measurement> measurement;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    Statement find(db, "SELECT measurement FROM results WHERE job_id = ?");
    find.Bind(1, job_id);
    absl::StatusOr<bool> row = find.Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
    measurement.emplace();
    if (!measurement->ParseFromString(find.ColumnBlob(0))) {
      return absl::DataLossError(
          absl::StrCat("the measurement of job ", job_id, " does not parse"));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return measurement;
}

absl::StatusOr<int64_t> ResultStore::CountForJob(int64_t job_id) const {
  return internal::ReadCount(db_, "SELECT COUNT(*) FROM results WHERE job_id = ?",
                             [&](Statement& s) { s.Bind(1, job_id); });
}

}  // namespace paradnn::db
