#include "db/budget_store.h"

#include <string>

#include "db/result_reuse.h"
#include "db/statement.h"
#include "db/stores_internal.h"

namespace paradnn::db {

void BudgetStore::Release(const std::vector<int64_t>& job_ids, int64_t now_unix_ms,
                          Callback<int64_t> done) {
  internal::WriteValue<int64_t>(
      db_,
      [job_ids, now_unix_ms](sqlite3* db) -> absl::StatusOr<int64_t> {
        int64_t moved = 0;
        for (int64_t job_id : job_ids) {
          Statement release(db,
                            "UPDATE jobs SET state = ?, updated_unix_ms = ? "
                            "WHERE id = ? AND state = ?");
          release.Bind(1, static_cast<int>(v1::JOB_PENDING))
              .Bind(2, now_unix_ms)
              .Bind(3, job_id)
              .Bind(4, static_cast<int>(v1::JOB_HELD));
          if (absl::Status s = release.Run(); !s.ok()) return s;
          moved += sqlite3_changes(db);
        }
        return moved;
      },
      std::move(done));
}

absl::StatusOr<int64_t> BudgetStore::ReleaseSync(const std::vector<int64_t>& job_ids,
                                                 int64_t now_unix_ms) {
  return internal::Await<int64_t>(
      db_, [&](Callback<int64_t> done) { Release(job_ids, now_unix_ms, std::move(done)); });
}

namespace {

// The reuse keys of the connected workers of `device`.
absl::StatusOr<std::vector<internal::ReuseKey>> ConnectedReuseKeys(sqlite3* db,
                                                                   const std::string& device) {
  std::vector<internal::ReuseKey> keys;
  Statement find(db,
                 "SELECT DISTINCT p.fingerprint, w.harness, w.trust_domain FROM workers w "
                 "JOIN platforms p ON p.id = w.platform_id "
                 "WHERE w.connected = 1 AND w.device_kind = ? AND w.harness != '' "
                 "AND p.fingerprint != ''");
  find.Bind(1, device);
  absl::Status walked = find.ForEachRow([&] {
    keys.push_back({find.ColumnText(0), find.ColumnText(1), find.ColumnText(2)});
  });
  if (!walked.ok()) return walked;
  return keys;
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> BudgetStore::ReleaseReusableSync(int64_t sweep_id,
                                                                        int64_t now_unix_ms) {
  return internal::Await<std::optional<int64_t>>(db_, [&](Callback<std::optional<int64_t>> done) {
    internal::WriteValue<std::optional<int64_t>>(
        db_,
        [sweep_id, now_unix_ms](sqlite3* db) -> absl::StatusOr<std::optional<int64_t>> {
          Statement held(db,
                         "SELECT id, device, COALESCE(config_id, 0), precision, optimizer, "
                         "repeat, settings FROM jobs WHERE sweep_id = ? AND state = ?");
          held.Bind(1, sweep_id).Bind(2, static_cast<int>(v1::JOB_HELD));
          std::vector<internal::JobIdentity> jobs;
          std::vector<std::string> devices;
          absl::Status walked = held.ForEachRow([&] {
            internal::JobIdentity& job = jobs.emplace_back();
            job.job_id = held.ColumnInt(0);
            job.sweep_id = sweep_id;
            devices.push_back(held.ColumnText(1));
            job.config_id = held.ColumnInt(2);
            job.precision = held.ColumnText(3);
            job.optimizer = held.ColumnText(4);
            job.repeat = held.ColumnInt(5);
            if (!job.settings.ParseFromString(held.ColumnBlob(6))) job.settings.set_fresh(true);
          });
          if (!walked.ok()) return walked;
          if (jobs.empty()) return std::optional<int64_t>(0);
          absl::StatusOr<std::vector<internal::ReuseKey>> keys =
              ConnectedReuseKeys(db, devices.front());  // one device per sweep
          if (!keys.ok()) return keys.status();
          if (keys->empty()) return std::optional<int64_t>();
          int64_t moved = 0;
          for (const internal::JobIdentity& job : jobs) {
            if (job.settings.fresh() || job.config_id <= 0) continue;
            bool reusable = false;
            for (const internal::ReuseKey& key : *keys) {
              absl::StatusOr<std::optional<internal::ReusableResult>> found =
                  internal::FindReusableResult(db, job, key);
              if (!found.ok()) return found.status();
              if (found->has_value()) {
                reusable = true;
                break;
              }
            }
            if (!reusable) continue;
            Statement release(db, "UPDATE jobs SET state = ?, updated_unix_ms = ? WHERE id = ?");
            release.Bind(1, static_cast<int>(v1::JOB_PENDING)).Bind(2, now_unix_ms);
            release.Bind(3, job.job_id);
            if (absl::Status s = release.Run(); !s.ok()) return s;
            ++moved;
          }
          return std::optional<int64_t>(moved);
        },
        std::move(done));
  });
}

void BudgetStore::StorePredictions(int64_t sweep_id,
                                   std::vector<std::pair<int64_t, v1::PredictedStep>> predictions,
                                   int64_t now_unix_ms, Callback<int64_t> done) {
  internal::WriteValue<int64_t>(
      db_,
      [sweep_id, predictions = std::move(predictions),
       now_unix_ms](sqlite3* db) -> absl::StatusOr<int64_t> {
        int64_t stored = 0;
        for (const auto& [job_id, prediction] : predictions) {
          Statement mark(db,
                         "UPDATE jobs SET state = ?, updated_unix_ms = ? "
                         "WHERE id = ? AND sweep_id = ? AND state = ?");
          mark.Bind(1, static_cast<int>(v1::JOB_PREDICTED))
              .Bind(2, now_unix_ms)
              .Bind(3, job_id)
              .Bind(4, sweep_id)
              .Bind(5, static_cast<int>(v1::JOB_HELD));
          if (absl::Status s = mark.Run(); !s.ok()) return s;
          if (sqlite3_changes(db) == 0) continue;
          Statement insert(db,
                           "INSERT INTO predictions (job_id, details, created_unix_ms) "
                           "VALUES (?, ?, ?)");
          insert.Bind(1, job_id).BindBlob(2, prediction.SerializeAsString()).Bind(3, now_unix_ms);
          if (absl::Status s = insert.Run(); !s.ok()) return s;
          ++stored;
        }
        if (absl::Status s = internal::FinishSweepIfDone(db, sweep_id, now_unix_ms); !s.ok()) {
          return s;
        }
        return stored;
      },
      std::move(done));
}

absl::StatusOr<int64_t> BudgetStore::StorePredictionsSync(
    int64_t sweep_id, std::vector<std::pair<int64_t, v1::PredictedStep>> predictions,
    int64_t now_unix_ms) {
  return internal::Await<int64_t>(db_, [&](Callback<int64_t> done) {
    StorePredictions(sweep_id, std::move(predictions), now_unix_ms, std::move(done));
  });
}

absl::StatusOr<int64_t> BudgetStore::DropHeldSync(int64_t sweep_id,
                                                  const std::vector<int64_t>& job_ids,
                                                  int64_t now_unix_ms) {
  return internal::Await<int64_t>(db_, [&](Callback<int64_t> done) {
    internal::WriteValue<int64_t>(
        db_,
        [sweep_id, job_ids, now_unix_ms](sqlite3* db) -> absl::StatusOr<int64_t> {
          int64_t dropped = 0;
          for (int64_t job_id : job_ids) {
            // job_params go with it (ON DELETE CASCADE); a held job has
            // nothing else.
            Statement drop(db, "DELETE FROM jobs WHERE id = ? AND sweep_id = ? AND state = ?");
            drop.Bind(1, job_id).Bind(2, sweep_id).Bind(3, static_cast<int>(v1::JOB_HELD));
            if (absl::Status s = drop.Run(); !s.ok()) return s;
            dropped += sqlite3_changes(db);
          }
          if (absl::Status s = internal::FinishSweepIfDone(db, sweep_id, now_unix_ms); !s.ok()) {
            return s;
          }
          return dropped;
        },
        std::move(done));
  });
}

absl::StatusOr<int64_t> BudgetStore::HoldPendingSync(int64_t sweep_id, int64_t now_unix_ms) {
  return internal::Await<int64_t>(db_, [&](Callback<int64_t> done) {
    internal::WriteValue<int64_t>(
        db_,
        [sweep_id, now_unix_ms](sqlite3* db) -> absl::StatusOr<int64_t> {
          Statement hold(db,
                         "UPDATE jobs SET state = ?, updated_unix_ms = ? "
                         "WHERE sweep_id = ? AND state = ?");
          hold.Bind(1, static_cast<int>(v1::JOB_HELD))
              .Bind(2, now_unix_ms)
              .Bind(3, sweep_id)
              .Bind(4, static_cast<int>(v1::JOB_PENDING));
          if (absl::Status s = hold.Run(); !s.ok()) return s;
          return static_cast<int64_t>(sqlite3_changes(db));
        },
        std::move(done));
  });
}

absl::StatusOr<int64_t> BudgetStore::FirstStartUnixMs(int64_t sweep_id) const {
  int64_t first = 0;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
    absl::StatusOr<int64_t> started = internal::FirstAttemptStartUnixMs(db, sweep_id);
    if (!started.ok()) return started.status();
    first = *started;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return first;
}

namespace {

// The sweeps `sql` selects (id, created_unix_ms, spec; its ?1 the running
// state, ?2 when `binds_held` the held job state).
absl::StatusOr<std::vector<BudgetedSweep>> ReadSweeps(const Database* database, const char* sql,
                                                      bool binds_held) {
  std::vector<BudgetedSweep> sweeps;
  absl::Status status = database->Read([&](sqlite3* db) -> absl::Status {
    Statement query(db, sql);
    query.Bind(1, static_cast<int>(v1::SWEEP_RUNNING));
    if (binds_held) query.Bind(2, static_cast<int>(v1::JOB_HELD));
    return query.ForEachRow([&] {
      BudgetedSweep& sweep = sweeps.emplace_back();
      sweep.sweep_id = query.ColumnInt(0);
      sweep.created_unix_ms = query.ColumnInt(1);
      return internal::ParseBlob(query.ColumnBlob(2), &sweep.spec, "sweeps", sweep.sweep_id);
    });
  });
  if (!status.ok()) return status;
  return sweeps;
}

}  // namespace

absl::StatusOr<std::vector<BudgetedSweep>> BudgetStore::HoldingSweeps() const {
  return ReadSweeps(db_,
                    "SELECT s.id, s.created_unix_ms, s.spec FROM sweeps s WHERE s.state = ?1 AND "
                    "EXISTS (SELECT 1 FROM jobs j WHERE j.sweep_id = s.id AND j.state = ?2) "
                    "ORDER BY s.id",
                    /*binds_held=*/true);
}

absl::StatusOr<std::vector<BudgetedSweep>> BudgetStore::RunningSweeps() const {
  return ReadSweeps(db_,
                    "SELECT s.id, s.created_unix_ms, s.spec FROM sweeps s WHERE s.state = ?1 "
                    "ORDER BY s.id",
                    /*binds_held=*/false);
}

}  // namespace paradnn::db
