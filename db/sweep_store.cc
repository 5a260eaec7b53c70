// SweepStore: sweeps and the bulk insertion of their jobs.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/stores.h"
#include "db/stores_internal.h"

namespace paradnn::db {
namespace {

using internal::ParseBlob;

#define PARADNN_SELECT_SWEEP \
  "SELECT id, name, family, device, state, spec, created_unix_ms, finished_unix_ms FROM sweeps"
constexpr const char kSelectSweepById[] = PARADNN_SELECT_SWEEP " WHERE id = ?";
constexpr const char kSelectAllSweeps[] = PARADNN_SELECT_SWEEP " ORDER BY id";
#undef PARADNN_SELECT_SWEEP

// Builds a SweepStatus from a row of kSelectSweep* plus the job counts.
absl::StatusOr<v1::SweepStatus> SweepFromRow(sqlite3* db, const Statement& row,
                                             int64_t now_unix_ms) {
  v1::SweepStatus status;
  status.set_sweep_id(row.ColumnInt(0));
  status.set_name(row.ColumnText(1));
  status.set_family(row.ColumnText(2));
  status.set_device(row.ColumnText(3));
  status.set_state(static_cast<v1::SweepState>(row.ColumnInt(4)));
  if (absl::Status s =
          ParseBlob(row.ColumnBlob(5), status.mutable_spec(), "sweeps", status.sweep_id());
      !s.ok()) {
    return s;
  }
  status.set_created_unix_ms(row.ColumnInt(6));
  status.set_finished_unix_ms(row.ColumnIsNull(7) ? 0 : row.ColumnInt(7));
  const int64_t end = status.finished_unix_ms() > 0 ? status.finished_unix_ms() : now_unix_ms;
  status.set_elapsed_seconds(
      static_cast<double>(std::max<int64_t>(0, end - status.created_unix_ms())) / 1000.0);

  Statement counts(db, "SELECT state, COUNT(*) FROM jobs WHERE sweep_id = ? GROUP BY state");
  counts.Bind(1, status.sweep_id());
  int64_t total = 0;
  for (;;) {
    absl::StatusOr<bool> more = counts.Step();
    if (!more.ok()) return more.status();
    if (!*more) break;
    const int64_t n = counts.ColumnInt(1);
    total += n;
    switch (static_cast<v1::JobState>(counts.ColumnInt(0))) {
      case v1::JOB_PENDING:
        status.set_pending_jobs(n);
        break;
      case v1::JOB_LEASED:
        status.set_leased_jobs(n);
        break;
      case v1::JOB_DONE:
        status.set_done_jobs(n);
        break;
      case v1::JOB_FAILED:
        status.set_failed_jobs(n);
        break;
      case v1::JOB_CANCELLED:
        status.set_cancelled_jobs(n);
        break;
      default:
        break;  // counted in total only
    }
  }
  status.set_total_jobs(total);

  Statement ok(db,
               "SELECT COUNT(*) FROM results r JOIN jobs j ON j.id = r.job_id "
               "WHERE j.sweep_id = ? AND r.outcome = ?");
  ok.Bind(1, status.sweep_id()).Bind(2, static_cast<int>(v1::OK));
  absl::StatusOr<bool> counted = ok.Step();
  if (!counted.ok()) return counted.status();
  status.set_ok_results(*counted ? ok.ColumnInt(0) : 0);
  return status;
}

}  // namespace

std::string ConfigCanonical(const v1::ModelConfig& config) {
  // Params and options share one key space (InsertJob refuses a clash), so
  // merging them into one sorted map gives SQL's ORDER BY key.
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : config.params()) values[key] = absl::StrCat(value);
  for (const auto& [key, value] : config.options()) values[key] = value;
  std::string canonical = config.family();
  for (const auto& [key, value] : values) absl::StrAppend(&canonical, " ", key, "=", value);
  return canonical;
}

absl::StatusOr<int64_t> InternConfig(sqlite3* db, const v1::ModelConfig& config) {
  const std::string canonical = ConfigCanonical(config);
  Statement insert(db, "INSERT INTO configs (canonical) VALUES (?) ON CONFLICT DO NOTHING");
  insert.Bind(1, canonical);
  if (absl::Status s = insert.Run(); !s.ok()) return s;
  if (sqlite3_changes(db) == 0) {
    Statement existing(db, "SELECT id FROM configs WHERE canonical = ?");
    existing.Bind(1, canonical);
    absl::StatusOr<bool> row = existing.Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::InternalError("configs: a conflicting row vanished");
    return existing.ColumnInt(0);
  }
  const int64_t config_id = sqlite3_last_insert_rowid(db);
  for (const auto& [key, value] : config.params()) {
    Statement param(db,
                    "INSERT INTO config_params (config_id, key, int_value, text_value) "
                    "VALUES (?, ?, ?, NULL)");
    param.Bind(1, config_id).Bind(2, key).Bind(3, value);
    if (absl::Status s = param.Run(); !s.ok()) return s;
  }
  for (const auto& [key, value] : config.options()) {
    Statement option(db,
                     "INSERT INTO config_params (config_id, key, int_value, text_value) "
                     "VALUES (?, ?, NULL, ?)");
    option.Bind(1, config_id).Bind(2, key).Bind(3, value);
    if (absl::Status s = option.Run(); !s.ok()) return s;
  }
  return config_id;
}

namespace {

// Inserts one job and its hyper-parameters; returns the job id.
absl::StatusOr<int64_t> InsertJob(sqlite3* db, int64_t sweep_id, const std::string& default_device,
                                  const NewJob& job, int64_t now_unix_ms) {
  const v1::ModelConfig& config = job.config;
  for (const auto& [key, value] : config.options()) {
    if (config.params().contains(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("job ordinal ", job.ordinal, ": hyper-parameter \"", key,
                       "\" is both an integer param and an option; names must be unique"));
    }
  }
  const std::string& device = job.device.empty() ? default_device : job.device;
  if (device.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ordinal ", job.ordinal, ": device is empty (and so is the sweep's)"));
  }
  absl::StatusOr<int64_t> config_id = InternConfig(db, config);
  if (!config_id.ok()) return config_id.status();
  {
    Statement insert(db,
                     "INSERT INTO jobs (sweep_id, ordinal, device, state, config, settings, "
                     "precision, optimizer, attempts, updated_unix_ms, params, model_flops, "
                     "peak_memory_estimate_bytes, repeat, config_id) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)");
    insert.Bind(1, sweep_id)
        .Bind(2, job.ordinal)
        .Bind(3, device)
        .Bind(4, static_cast<int>(v1::JOB_PENDING))
        .BindBlob(5, config.SerializeAsString())
        .BindBlob(6, job.settings.SerializeAsString())
        .Bind(7, config.precision())
        .Bind(8, config.optimizer())
        .Bind(9, now_unix_ms)
        .Bind(13, job.repeat)
        .Bind(14, *config_id);
    if (job.params > 0) {
      insert.Bind(10, job.params);
    } else {
      insert.BindNull(10);
    }
    if (job.model_flops > 0) {
      insert.Bind(11, job.model_flops);
    } else {
      insert.BindNull(11);
    }
    if (job.peak_memory_estimate_bytes > 0) {
      insert.Bind(12, job.peak_memory_estimate_bytes);
    } else {
      insert.BindNull(12);
    }
    if (absl::Status s = insert.Run(); !s.ok()) return s;
  }
  const int64_t job_id = sqlite3_last_insert_rowid(db);
  for (const auto& [key, value] : config.params()) {
    Statement param(db,
                    "INSERT INTO job_params (job_id, key, int_value, text_value) "
                    "VALUES (?, ?, ?, NULL)");
    param.Bind(1, job_id).Bind(2, key).Bind(3, value);
    if (absl::Status s = param.Run(); !s.ok()) return s;
  }
  for (const auto& [key, value] : config.options()) {
    Statement option(db,
                     "INSERT INTO job_params (job_id, key, int_value, text_value) "
                     "VALUES (?, ?, NULL, ?)");
    option.Bind(1, job_id).Bind(2, key).Bind(3, value);
    if (absl::Status s = option.Run(); !s.ok()) return s;
  }
  return job_id;
}

}  // namespace

void SweepStore::Create(const v1::SweepSpec& spec, std::vector<NewJob> jobs, int64_t now_unix_ms,
                        Callback<int64_t> done) {
  // Shared, not copied: the write function may be moved between queues, and
  // a sweep can hold tens of thousands of configs.
  auto shared_spec = std::make_shared<const v1::SweepSpec>(spec);
  auto shared_jobs = std::make_shared<const std::vector<NewJob>>(std::move(jobs));
  internal::WriteValue<int64_t>(
      db_,
      [shared_spec, shared_jobs, now_unix_ms](sqlite3* db) -> absl::StatusOr<int64_t> {
        const v1::SweepSpec& spec = *shared_spec;
        {
          Statement insert(db,
                           "INSERT INTO sweeps (name, family, device, state, spec, "
                           "created_unix_ms, finished_unix_ms, run_predicted_oom) "
                           "VALUES (?, ?, ?, ?, ?, ?, NULL, ?)");
          insert.Bind(1, spec.name())
              .Bind(2, spec.family())
              .Bind(3, spec.device())
              .Bind(4, static_cast<int>(v1::SWEEP_RUNNING))
              .BindBlob(5, spec.SerializeAsString())
              .Bind(6, now_unix_ms)
              .Bind(7, spec.run_predicted_oom() ? 1 : 0);
          if (absl::Status s = insert.Run(); !s.ok()) return s;
        }
        const int64_t sweep_id = sqlite3_last_insert_rowid(db);
        for (const NewJob& job : *shared_jobs) {
          absl::StatusOr<int64_t> job_id = InsertJob(db, sweep_id, spec.device(), job, now_unix_ms);
          if (!job_id.ok()) return job_id.status();
        }
        // A sweep without jobs has nothing left to run.
        if (absl::Status s = internal::FinishSweepIfDone(db, sweep_id, now_unix_ms); !s.ok()) {
          return s;
        }
        return sweep_id;
      },
      std::move(done));
}

absl::StatusOr<int64_t> SweepStore::CreateSync(const v1::SweepSpec& spec, std::vector<NewJob> jobs,
                                               int64_t now_unix_ms) {
  return internal::Await<int64_t>(db_, [&](Callback<int64_t> done) {
    Create(spec, std::move(jobs), now_unix_ms, std::move(done));
  });
}

absl::StatusOr<v1::SweepStatus> SweepStore::Get(int64_t sweep_id, int64_t now_unix_ms) const {
  absl::StatusOr<v1::SweepStatus> result;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
    Statement row(db, kSelectSweepById);
    row.Bind(1, sweep_id);
    absl::StatusOr<bool> found = row.Step();
    if (!found.ok()) return found.status();
    if (!*found) return absl::NotFoundError(absl::StrCat("sweep ", sweep_id, " not found"));
    result = SweepFromRow(db, row, now_unix_ms);
    return result.status();
  });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<std::vector<v1::SweepStatus>> SweepStore::List(int64_t now_unix_ms) const {
  std::vector<v1::SweepStatus> sweeps;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
    Statement rows(db, kSelectAllSweeps);
    for (;;) {
      absl::StatusOr<bool> more = rows.Step();
      if (!more.ok()) return more.status();
      if (!*more) return absl::OkStatus();
      absl::StatusOr<v1::SweepStatus> sweep = SweepFromRow(db, rows, now_unix_ms);
      if (!sweep.ok()) return sweep.status();
      sweeps.push_back(*std::move(sweep));
    }
  });
  if (!status.ok()) return status;
  return sweeps;
}

void SweepStore::Cancel(int64_t sweep_id, int64_t now_unix_ms,
                        Callback<std::vector<LiveAttempt>> done) {
  internal::WriteValue<std::vector<LiveAttempt>>(
      db_,
      [sweep_id, now_unix_ms](sqlite3* db) -> absl::StatusOr<std::vector<LiveAttempt>> {
        int64_t state = 0;
        {
          Statement sweep(db, "SELECT state FROM sweeps WHERE id = ?");
          sweep.Bind(1, sweep_id);
          absl::StatusOr<bool> found = sweep.Step();
          if (!found.ok()) return found.status();
          if (!*found) return absl::NotFoundError(absl::StrCat("sweep ", sweep_id, " not found"));
          state = sweep.ColumnInt(0);
        }
        std::vector<LiveAttempt> live;
        // A finished sweep keeps its outcome: cancelling it changes nothing.
        if (state == v1::SWEEP_DONE) return live;
        if (state != v1::SWEEP_CANCELLED) {
          Statement mark(db, "UPDATE sweeps SET state = ?, finished_unix_ms = ? WHERE id = ?");
          mark.Bind(1, static_cast<int>(v1::SWEEP_CANCELLED))
              .Bind(2, now_unix_ms)
              .Bind(3, sweep_id);
          if (absl::Status s = mark.Run(); !s.ok()) return s;
        }
        {
          Statement jobs(db,
                         "UPDATE jobs SET state = ?, updated_unix_ms = ? "
                         "WHERE sweep_id = ? AND state = ?");
          jobs.Bind(1, static_cast<int>(v1::JOB_CANCELLED))
              .Bind(2, now_unix_ms)
              .Bind(3, sweep_id)
              .Bind(4, static_cast<int>(v1::JOB_PENDING));
          if (absl::Status s = jobs.Run(); !s.ok()) return s;
        }
        // Leased jobs stay leased until their workers report CANCELLED (or
        // a result that beat the cancel); a repeated Cancel returns them
        // again so their stop can be re-sent.
        Statement open(db,
                       "SELECT a.job_id, a.id, a.worker_id FROM attempts a "
                       "JOIN jobs j ON j.id = a.job_id "
                       "WHERE j.sweep_id = ? AND a.finished_unix_ms IS NULL ORDER BY a.id");
        open.Bind(1, sweep_id);
        for (;;) {
          absl::StatusOr<bool> more = open.Step();
          if (!more.ok()) return more.status();
          if (!*more) break;
          live.push_back({open.ColumnInt(0), open.ColumnInt(1), open.ColumnText(2)});
        }
        return live;
      },
      std::move(done));
}

absl::StatusOr<std::vector<SweepStore::LiveAttempt>> SweepStore::CancelSync(int64_t sweep_id,
                                                                            int64_t now_unix_ms) {
  return internal::Await<std::vector<LiveAttempt>>(db_,
                                                   [&](Callback<std::vector<LiveAttempt>> done) {
                                                     Cancel(sweep_id, now_unix_ms, std::move(done));
                                                   });
}

}  // namespace paradnn::db
