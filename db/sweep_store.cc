// SweepStore: sweeps and the bulk insertion of their jobs.
#include "db/sweep_store.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "db/config_intern.h"
#include "db/stores_internal.h"
#include "platform/stack_findings.h"

namespace paradnn::db {
namespace {

using internal::ParseBlob;

#define PARADNN_SELECT_SWEEP \
  "SELECT id, name, family, device, state, spec, created_unix_ms, finished_unix_ms FROM sweeps"
// State 0 is a sweep whose jobs are still being inserted (Create): not
// shown until complete.
constexpr const char kSelectSweepById[] = PARADNN_SELECT_SWEEP " WHERE id = ? AND state != 0";
constexpr const char kSelectAllSweeps[] = PARADNN_SELECT_SWEEP " WHERE state != 0 ORDER BY id";
#undef PARADNN_SELECT_SWEEP

// A budgeted sweep's end: its first lease plus the budget
// (server/budget_planner.h); unset before the first lease.
absl::Status FillBudgetEnd(sqlite3* db, v1::SweepStatus* status) {
  const double budget_seconds = status->spec().run().budget_seconds();
  if (!(budget_seconds > 0)) return absl::OkStatus();
  absl::StatusOr<int64_t> first_start = internal::FirstAttemptStartUnixMs(db, status->sweep_id());
  if (!first_start.ok()) return first_start.status();
  if (*first_start > 0) {
    status->set_budget_ends_unix_ms(*first_start + static_cast<int64_t>(budget_seconds * 1000));
  }
  return absl::OkStatus();
}

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
  absl::Status walked = counts.ForEachRow([&] {
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
      case v1::JOB_HELD:
        status.set_held_jobs(n);
        break;
      case v1::JOB_PREDICTED:
        status.set_predicted_jobs(n);
        break;
      default:
        break;  // counted in total only
    }
  });
  if (!walked.ok()) return walked;
  status.set_total_jobs(total);

  Statement ok(db,
               "SELECT COUNT(*), COUNT(r.reused_from_job_id) FROM results r "
               "JOIN jobs j ON j.id = r.job_id WHERE j.sweep_id = ? AND r.outcome = ?");
  ok.Bind(1, status.sweep_id()).Bind(2, static_cast<int>(v1::OK));
  absl::StatusOr<bool> counted = ok.Step();
  if (!counted.ok()) return counted.status();
  status.set_ok_results(*counted ? ok.ColumnInt(0) : 0);
  status.set_reused_results(*counted ? ok.ColumnInt(1) : 0);
  if (absl::Status s = FillBudgetEnd(db, &status); !s.ok()) return s;
  return status;
}

// A configuration's text-valued hyper-parameters: its options and its
// stack settings (under platform::kStackKeyPrefix).
std::map<std::string, std::string> TextParams(const v1::ModelConfig& config) {
  std::map<std::string, std::string> values(config.options().begin(), config.options().end());
  for (const auto& [key, value] : config.stack()) {
    values[absl::StrCat(platform::kStackKeyPrefix, key)] = value;
  }
  return values;
}

// The two inserts of one table of hyper-parameter rows (config_params,
// job_params): an integer row and a text row, each (owner id, key, value).
struct ParamRowInserts {
  const char* integer;
  const char* text;
};
constexpr ParamRowInserts kConfigParamRows = {
    "INSERT INTO config_params (config_id, key, int_value, text_value) VALUES (?, ?, ?, NULL)",
    "INSERT INTO config_params (config_id, key, int_value, text_value) VALUES (?, ?, NULL, ?)"};
constexpr ParamRowInserts kJobParamRows = {
    "INSERT INTO job_params (job_id, key, int_value, text_value) VALUES (?, ?, ?, NULL)",
    "INSERT INTO job_params (job_id, key, int_value, text_value) VALUES (?, ?, NULL, ?)"};

// Writes every hyper-parameter of `config` (params, then TextParams) as a
// row of `table` owned by `owner_id`.
absl::Status InsertParamRows(sqlite3* db, const ParamRowInserts& table, int64_t owner_id,
                             const v1::ModelConfig& config) {
  for (const auto& [key, value] : config.params()) {
    Statement param(db, table.integer);
    param.Bind(1, owner_id).Bind(2, key).Bind(3, value);
    if (absl::Status s = param.Run(); !s.ok()) return s;
  }
  for (const auto& [key, value] : TextParams(config)) {
    Statement option(db, table.text);
    option.Bind(1, owner_id).Bind(2, key).Bind(3, value);
    if (absl::Status s = option.Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::string ConfigCanonical(const v1::ModelConfig& config) {
  // Params, options and stack settings share one key space (InsertJob
  // refuses a clash; stack keys are prefixed), so merging them into one
  // sorted map gives SQL's ORDER BY key.
  std::map<std::string, std::string> values = TextParams(config);
  for (const auto& [key, value] : config.params()) values[key] = absl::StrCat(value);
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
  if (absl::Status s = InsertParamRows(db, kConfigParamRows, config_id, config); !s.ok()) return s;
  return config_id;
}

namespace {

bool CreatedHeld(const NewJob& job) {
  return job.held || (job.settings.budget_seconds() > 0 && !(job.settings.target_interval() > 0));
}

// Inserts one job and its hyper-parameters; returns the job id.
absl::StatusOr<int64_t> InsertJob(sqlite3* db, int64_t sweep_id, const std::string& default_device,
                                  const NewJob& job, int64_t expansion_index, int64_t now_unix_ms) {
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
                     "peak_memory_estimate_bytes, repeat, config_id, expansion_index) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)");
    insert.Bind(1, sweep_id)
        .Bind(2, job.ordinal)
        .Bind(3, device)
        .Bind(4, static_cast<int>(CreatedHeld(job) ? v1::JOB_HELD : v1::JOB_PENDING))
        .BindBlob(5, config.SerializeAsString())
        .BindBlob(6, job.settings.SerializeAsString())
        .Bind(7, config.precision())
        .Bind(8, config.optimizer())
        .Bind(9, now_unix_ms)
        .Bind(13, job.repeat)
        .Bind(14, *config_id)
        .Bind(15, expansion_index);
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
  if (absl::Status s = InsertParamRows(db, kJobParamRows, job_id, config); !s.ok()) return s;
  return job_id;
}

}  // namespace

namespace {

// A sweep whose jobs are still being inserted: not leasable (leases need
// SWEEP_RUNNING) and hidden from Get, List and Cancel.
constexpr int kCreating = v1::SWEEP_STATE_UNSPECIFIED;

// Jobs inserted per write function. Inserting a job costs ~20 us on the
// writer thread, so 50,000 jobs in one transaction held every lease and
// result commit for about a second; in chunks, each write batch carries one
// chunk and the leases and results queued meanwhile (bench/load_bench.cc,
// docs/operations.md).
constexpr size_t kJobsPerWrite = 200;

// Sweeps being created, per database; touched on the writer thread only
// (inside write functions), the mutex is for several databases in one
// process (tests).
// NOLINTNEXTLINE(bugprone-throwing-static-initialization): constant-initialized, no code runs
ABSL_CONST_INIT absl::Mutex creating_mu(absl::kConstInit);
std::map<const Database*, std::set<int64_t>>& CreatingSweeps()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(creating_mu) {
  static auto* creating = new std::map<const Database*, std::set<int64_t>>();
  return *creating;
}

bool IsCreating(const Database* database, int64_t sweep_id) {
  absl::MutexLock lock(&creating_mu);
  auto it = CreatingSweeps().find(database);
  return it != CreatingSweeps().end() && it->second.count(sweep_id) != 0;
}

void SetCreating(const Database* database, int64_t sweep_id, bool creating) {
  absl::MutexLock lock(&creating_mu);
  std::set<int64_t>& ids = CreatingSweeps()[database];
  if (creating) {
    ids.insert(sweep_id);
  } else {
    ids.erase(sweep_id);
    if (ids.empty()) CreatingSweeps().erase(database);
  }
}

// Deletes (with their jobs) the sweeps a previous process left half created
// when it died between two chunks.
absl::Status DeleteAbandonedSweeps(sqlite3* db, const Database* database) {
  std::vector<int64_t> abandoned;
  {
    Statement find(db, "SELECT id FROM sweeps WHERE state = ?");
    find.Bind(1, kCreating);
    absl::Status walked = find.ForEachRow([&] {
      if (!IsCreating(database, find.ColumnInt(0))) abandoned.push_back(find.ColumnInt(0));
    });
    if (!walked.ok()) return walked;
  }
  for (int64_t id : abandoned) {
    Statement del(db, "DELETE FROM sweeps WHERE id = ? AND state = ?");
    del.Bind(1, id).Bind(2, kCreating);
    if (absl::Status s = del.Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// One sweep being created: the sweep row first, then its jobs in chunks,
// each chunk queued when the previous one has committed (so other writes
// queued meanwhile go first), then the state flips to RUNNING.
struct Creation {
  Database* database;
  std::shared_ptr<const v1::SweepSpec> spec;
  std::shared_ptr<const std::vector<NewJob>> jobs;
  // Indexes into `jobs` by ordinal: jobs are inserted in the order they
  // run, so the ones leased together share pages (docs/design.md).
  std::vector<size_t> run_order;
  int64_t now_unix_ms;
  Callback<int64_t> done;
  int64_t sweep_id = 0;
  size_t next = 0;  // first job of the next chunk
};

// What InsertJob would refuse, checked for every job before anything is
// written, so that a bad job leaves nothing behind.
absl::Status CheckJobs(const std::vector<NewJob>& jobs, const std::string& default_device) {
  for (const NewJob& job : jobs) {
    for (const auto& [key, value] : job.config.options()) {
      if (job.config.params().contains(key)) {
        return absl::InvalidArgumentError(
            absl::StrCat("job ordinal ", job.ordinal, ": hyper-parameter \"", key,
                         "\" is both an integer param and an option; names must be unique"));
      }
    }
    if (job.device.empty() && default_device.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("job ordinal ", job.ordinal, ": device is empty (and so is the sweep's)"));
    }
  }
  return absl::OkStatus();
}

void InsertNextChunk(const std::shared_ptr<Creation>& creation);

// Removes a sweep whose creation failed after its first chunks committed,
// then reports `error`.
void Abandon(const std::shared_ptr<Creation>& creation, const absl::Status& error) {
  const int64_t sweep_id = creation->sweep_id;
  const Database* database = creation->database;
  creation->database->Write(
      [sweep_id, database](sqlite3* db) -> absl::Status {
        SetCreating(database, sweep_id, false);
        Statement del(db, "DELETE FROM sweeps WHERE id = ? AND state = ?");
        del.Bind(1, sweep_id).Bind(2, kCreating);
        return del.Run();  // if this fails, the next Create deletes it
      },
      [creation, error](const absl::Status&) {
        if (creation->done) creation->done(error);
      });
}

void InsertNextChunk(const std::shared_ptr<Creation>& creation) {
  // Ahead of the queue: every batch then carries one chunk, instead of a
  // chunk waiting behind every queued lease and result (at 1,000 busy
  // workers that made a 50,000-job submit take minutes).
  creation->database->WriteNext(
      [creation](sqlite3* db) -> absl::Status {
        const std::vector<NewJob>& jobs = *creation->jobs;
        const size_t end = std::min(jobs.size(), creation->next + kJobsPerWrite);
        for (size_t k = creation->next; k < end; ++k) {
          const size_t i = creation->run_order[k];
          absl::StatusOr<int64_t> job_id =
              InsertJob(db, creation->sweep_id, creation->spec->device(), jobs[i],
                        static_cast<int64_t>(i), creation->now_unix_ms);
          if (!job_id.ok()) return job_id.status();
        }
        if (end < jobs.size()) return absl::OkStatus();
        // The last chunk: the sweep becomes leasable in the same commit.
        Statement run(db, "UPDATE sweeps SET state = ? WHERE id = ? AND state = ?");
        run.Bind(1, static_cast<int>(v1::SWEEP_RUNNING))
            .Bind(2, creation->sweep_id)
            .Bind(3, kCreating);
        if (absl::Status s = run.Run(); !s.ok()) return s;
        // A sweep without jobs has nothing left to run.
        return internal::FinishSweepIfDone(db, creation->sweep_id, creation->now_unix_ms);
      },
      [creation](const absl::Status& status) {
        if (!status.ok()) {
          Abandon(creation, status);
          return;
        }
        creation->next = std::min(creation->jobs->size(), creation->next + kJobsPerWrite);
        if (creation->next < creation->jobs->size()) {
          InsertNextChunk(creation);
          return;
        }
        SetCreating(creation->database, creation->sweep_id, false);
        if (creation->done) creation->done(creation->sweep_id);
      });
}

}  // namespace

void SweepStore::Create(const v1::SweepSpec& spec, std::vector<NewJob> jobs, int64_t now_unix_ms,
                        Callback<int64_t> done) {
  // Shared, not copied: the write functions may be moved between queues, and
  // a sweep can hold tens of thousands of configs.
  auto creation = std::make_shared<Creation>();
  creation->database = db_;
  creation->spec = std::make_shared<const v1::SweepSpec>(spec);
  creation->jobs = std::make_shared<const std::vector<NewJob>>(std::move(jobs));
  creation->run_order.resize(creation->jobs->size());
  std::iota(creation->run_order.begin(), creation->run_order.end(), size_t{0});
  std::stable_sort(
      creation->run_order.begin(), creation->run_order.end(),
      [&jobs = *creation->jobs](size_t a, size_t b) { return jobs[a].ordinal < jobs[b].ordinal; });
  creation->now_unix_ms = now_unix_ms;
  creation->done = std::move(done);
  db_->Write(
      [creation](sqlite3* db) -> absl::Status {
        const v1::SweepSpec& spec = *creation->spec;
        if (absl::Status s = CheckJobs(*creation->jobs, spec.device()); !s.ok()) return s;
        if (absl::Status s = DeleteAbandonedSweeps(db, creation->database); !s.ok()) return s;
        Statement insert(db,
                         "INSERT INTO sweeps (name, family, device, state, spec, "
                         "created_unix_ms, finished_unix_ms, run_predicted_oom) "
                         "VALUES (?, ?, ?, ?, ?, ?, NULL, ?)");
        insert.Bind(1, spec.name())
            .Bind(2, spec.family())
            .Bind(3, spec.device())
            .Bind(4, kCreating)
            .BindBlob(5, spec.SerializeAsString())
            .Bind(6, creation->now_unix_ms)
            .Bind(7, spec.run_predicted_oom() ? 1 : 0);
        if (absl::Status s = insert.Run(); !s.ok()) return s;
        creation->sweep_id = sqlite3_last_insert_rowid(db);
        SetCreating(creation->database, creation->sweep_id, true);
        return absl::OkStatus();
      },
      [creation](absl::Status status) {
        if (!status.ok()) {
          // Rolled back (or never inserted): nothing to delete.
          if (creation->sweep_id != 0) SetCreating(creation->database, creation->sweep_id, false);
          if (creation->done) creation->done(std::move(status));
          return;
        }
        InsertNextChunk(creation);
      });
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
    return rows.ForEachRow([&]() -> absl::Status {
      absl::StatusOr<v1::SweepStatus> sweep = SweepFromRow(db, rows, now_unix_ms);
      if (!sweep.ok()) return sweep.status();
      sweeps.push_back(*std::move(sweep));
      return absl::OkStatus();
    });
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
          // A sweep still being created is not there yet.
          if (!*found || sweep.ColumnInt(0) == v1::SWEEP_STATE_UNSPECIFIED) {
            return absl::NotFoundError(absl::StrCat("sweep ", sweep_id, " not found"));
          }
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
                         "WHERE sweep_id = ? AND state IN (?, ?)");
          jobs.Bind(1, static_cast<int>(v1::JOB_CANCELLED))
              .Bind(2, now_unix_ms)
              .Bind(3, sweep_id)
              .Bind(4, static_cast<int>(v1::JOB_PENDING))
              .Bind(5, static_cast<int>(v1::JOB_HELD));
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
        absl::Status walked = open.ForEachRow([&] {
          live.push_back({open.ColumnInt(0), open.ColumnInt(1), open.ColumnText(2)});
        });
        if (!walked.ok()) return walked;
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

absl::StatusOr<bool> SweepStore::MoveStateSync(int64_t sweep_id, v1::SweepState from,
                                               v1::SweepState to) {
  bool moved = false;
  absl::Status status = db_->WriteSync([&](sqlite3* db) -> absl::Status {
    {
      Statement exists(db, "SELECT 1 FROM sweeps WHERE id = ? AND state != ?");
      exists.Bind(1, sweep_id).Bind(2, static_cast<int>(v1::SWEEP_STATE_UNSPECIFIED));
      absl::StatusOr<bool> found = exists.Step();
      if (!found.ok()) return found.status();
      if (!*found) return absl::NotFoundError(absl::StrCat("sweep ", sweep_id, " not found"));
    }
    Statement move(db, "UPDATE sweeps SET state = ? WHERE id = ? AND state = ?");
    move.Bind(1, static_cast<int>(to)).Bind(2, sweep_id).Bind(3, static_cast<int>(from));
    if (absl::Status s = move.Run(); !s.ok()) return s;
    moved = sqlite3_changes(db) > 0;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return moved;
}

}  // namespace paradnn::db
