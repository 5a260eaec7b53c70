#include "db/migrations.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/database.h"
#include "spdlog/spdlog.h"

namespace paradnn::db {
namespace {

// Version 1: the data model of docs/design.md.
//
// Enums (sweeps.state, jobs.state, results.outcome) are stored as their
// proto numbers so that SQL can filter on them; messages that are only ever
// read whole (specs, configs, platforms, measurements) are serialized proto
// blobs, with the fields analyses filter and aggregate on copied into
// columns (results.*) or the job_params key/value table.
constexpr const char kSchemaV1[] = R"sql(
CREATE TABLE sweeps (
  id               INTEGER PRIMARY KEY,
  name             TEXT    NOT NULL,
  family           TEXT    NOT NULL,
  device           TEXT    NOT NULL,
  state            INTEGER NOT NULL,   -- v1::SweepState
  spec             BLOB    NOT NULL,   -- v1::SweepSpec
  created_unix_ms  INTEGER NOT NULL,
  finished_unix_ms INTEGER             -- NULL while running
);

CREATE TABLE platforms (
  id               INTEGER PRIMARY KEY,
  fingerprint      TEXT    NOT NULL UNIQUE,
  device_kind      TEXT    NOT NULL,
  device_name      TEXT    NOT NULL,
  hostname         TEXT    NOT NULL,
  libtorch_version TEXT    NOT NULL,
  blas_backend     TEXT    NOT NULL,
  details          BLOB    NOT NULL,   -- v1::Platform
  created_unix_ms  INTEGER NOT NULL
);

CREATE TABLE jobs (
  id              INTEGER PRIMARY KEY,
  sweep_id        INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  ordinal         INTEGER NOT NULL,    -- position in the sweep's run order
  device          TEXT    NOT NULL,
  state           INTEGER NOT NULL,    -- v1::JobState
  config          BLOB    NOT NULL,    -- v1::ModelConfig
  settings        BLOB    NOT NULL,    -- v1::RunSettings
  precision       TEXT    NOT NULL,
  optimizer       TEXT    NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  updated_unix_ms INTEGER NOT NULL
);
-- The lease queue: equality on (state, device), then walked in run order.
CREATE INDEX jobs_queue ON jobs(state, device, sweep_id, ordinal);
-- Per-sweep counts by state and the "is the sweep finished" check.
CREATE INDEX jobs_sweep_state ON jobs(sweep_id, state);

-- Hyper-parameters one row each (ModelConfig.params as int_value,
-- ModelConfig.options as text_value) so analyses filter and pivot in SQL.
CREATE TABLE job_params (
  job_id     INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  key        TEXT    NOT NULL,
  int_value  INTEGER,
  text_value TEXT,
  PRIMARY KEY (job_id, key)
) WITHOUT ROWID;
CREATE INDEX job_params_key ON job_params(key, int_value);

CREATE TABLE attempts (
  id                     INTEGER PRIMARY KEY,
  job_id                 INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  worker_id              TEXT    NOT NULL,
  started_unix_ms        INTEGER NOT NULL,
  lease_deadline_unix_ms INTEGER NOT NULL,
  finished_unix_ms       INTEGER,          -- NULL while the attempt is open
  outcome                TEXT              -- outcome name or release reason
);
CREATE INDEX attempts_job ON attempts(job_id);
-- Partial indexes: only open attempts are ever searched by deadline/worker.
CREATE INDEX attempts_open_deadline ON attempts(lease_deadline_unix_ms)
  WHERE finished_unix_ms IS NULL;
CREATE INDEX attempts_open_worker ON attempts(worker_id)
  WHERE finished_unix_ms IS NULL;

CREATE TABLE results (
  id                     INTEGER PRIMARY KEY,
  job_id                 INTEGER NOT NULL UNIQUE REFERENCES jobs(id) ON DELETE CASCADE,
  attempt_id             INTEGER NOT NULL UNIQUE REFERENCES attempts(id),
  worker_id              TEXT    NOT NULL,
  platform_id            INTEGER REFERENCES platforms(id),
  outcome                INTEGER NOT NULL,  -- v1::Outcome
  error                  TEXT    NOT NULL,
  examples_per_sec       REAL,
  step_median_s          REAL,
  step_mean_s            REAL,
  step_stddev_s          REAL,
  step_p10_s             REAL,
  step_p90_s             REAL,
  step_cv                REAL,
  ci95_rel               REAL,
  steps                  INTEGER,
  warmup_steps           INTEGER,
  stop_reason            TEXT,
  params                 INTEGER,
  macs_per_example       INTEGER,
  model_flops            REAL,
  executed_flops         REAL,
  bytes_per_step         REAL,
  model_flops_per_sec    REAL,
  executed_flops_per_sec REAL,
  intra_op_threads       INTEGER,
  inter_op_threads       INTEGER,
  peak_rss_bytes         INTEGER,
  build_seconds          REAL,
  timed_seconds          REAL,
  measurement            BLOB    NOT NULL,  -- v1::Measurement without step_seconds
  created_unix_ms        INTEGER NOT NULL
);
CREATE INDEX results_worker ON results(worker_id);
CREATE INDEX results_platform ON results(platform_id);

CREATE TABLE samples (
  result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
  step      INTEGER NOT NULL,
  seconds   REAL    NOT NULL,
  PRIMARY KEY (result_id, step)
) WITHOUT ROWID;

CREATE TABLE workers (
  id                TEXT    PRIMARY KEY,
  device_kind       TEXT    NOT NULL,
  hostname          TEXT    NOT NULL,
  platform_id       INTEGER REFERENCES platforms(id),
  connected         INTEGER NOT NULL,
  connected_unix_ms INTEGER NOT NULL,
  last_seen_unix_ms INTEGER NOT NULL
);
)sql";

// Version 2: the runner core's analytic estimates of every job, stored at
// submit (NULL for jobs of older sweeps, or where the core had no count),
// and the sweep's choice to run jobs predicted not to fit anyway.
constexpr const char kSchemaV2[] = R"sql(
ALTER TABLE jobs ADD COLUMN params INTEGER;                     -- trainable parameters
ALTER TABLE jobs ADD COLUMN model_flops REAL;                   -- per training step
ALTER TABLE jobs ADD COLUMN peak_memory_estimate_bytes REAL;    -- of one training step
ALTER TABLE sweeps ADD COLUMN run_predicted_oom INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 3: user TorchScript models (family torchscript), stored once by
// the SHA-256 of their bytes; sweeps and jobs keep only the hash.
constexpr const char kSchemaV3[] = R"sql(
CREATE TABLE models (
  sha256          TEXT    PRIMARY KEY,  -- lowercase hex of the content's SHA-256
  content         BLOB    NOT NULL,     -- the .pt file
  file_name       TEXT    NOT NULL,     -- as first uploaded
  size_bytes      INTEGER NOT NULL,
  created_unix_ms INTEGER NOT NULL
);  -- a rowid table: rows of large blobs do not belong in a WITHOUT ROWID b-tree
)sql";

// Version 4: utilization against the worker's calibrated matmul roof of the
// job's compute dtype (Measurement.mfu / hfu); NULL where the worker had no
// roof for it.
constexpr const char kSchemaV4[] = R"sql(
ALTER TABLE results ADD COLUMN mfu REAL;  -- model_flops_per_sec / roof
ALTER TABLE results ADD COLUMN hfu REAL;  -- executed_flops_per_sec / roof
)sql";

// Version 5: the conditions that make a result suspect (Measurement.suspect:
// reference BLAS, a busy host, frequency scaling, noisy steps) joined with
// "; "; "" when none held, NULL for results stored before this version.
constexpr const char kSchemaV5[] = R"sql(
ALTER TABLE results ADD COLUMN suspect TEXT;
)sql";

// Version 6: which of the sweep's repeats a job measures (SweepSpec.repeats;
// jobs of one configuration differ only in this).
constexpr const char kSchemaV6[] = R"sql(
ALTER TABLE jobs ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 7: configurations, one row per distinct family + hyper-parameters
// across all jobs and sweeps (precision, optimizer and repeat stay job
// columns). Analyses read one config id per result and each configuration's
// hyper-parameters once, instead of one job_params lookup per result and
// hyper-parameter (most of a heat map's time over a million results), and
// equal configurations of different sweeps share an id. canonical is the
// family, then "key=value" sorted by key, space-separated (db::ConfigCanonical);
// existing jobs are filled in from job_params.
constexpr const char kSchemaV7[] = R"sql(
CREATE TABLE configs (
  id        INTEGER PRIMARY KEY,
  canonical TEXT    NOT NULL UNIQUE
);
CREATE TABLE config_params (
  config_id  INTEGER NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
  key        TEXT    NOT NULL,
  int_value  INTEGER,
  text_value TEXT,
  PRIMARY KEY (config_id, key)
) WITHOUT ROWID;
ALTER TABLE jobs ADD COLUMN config_id INTEGER REFERENCES configs(id);
CREATE INDEX jobs_sweep_config ON jobs(sweep_id, config_id);

CREATE TEMP TABLE job_canonical (job_id INTEGER PRIMARY KEY, canonical TEXT NOT NULL);
INSERT INTO job_canonical
  SELECT j.id, s.family || COALESCE(
           (SELECT ' ' || group_concat(kv, ' ') FROM
              (SELECT jp.key || '=' || COALESCE(CAST(jp.int_value AS TEXT), jp.text_value) AS kv
                 FROM job_params jp WHERE jp.job_id = j.id ORDER BY jp.key)), '')
    FROM jobs j JOIN sweeps s ON s.id = j.sweep_id;
INSERT OR IGNORE INTO configs (canonical) SELECT canonical FROM job_canonical ORDER BY job_id;
UPDATE jobs SET config_id = (SELECT c.id FROM job_canonical jc JOIN configs c
                               ON c.canonical = jc.canonical WHERE jc.job_id = jobs.id);
INSERT OR IGNORE INTO config_params (config_id, key, int_value, text_value)
  SELECT j.config_id, jp.key, jp.int_value, jp.text_value
    FROM jobs j JOIN job_params jp ON jp.job_id = j.id
   WHERE j.id IN (SELECT MIN(id) FROM jobs GROUP BY config_id);
DROP TABLE job_canonical;
)sql";

// Version 8: utilization against the silicon's theoretical peak
// (Measurement.silicon_mfu / silicon_hfu; NULL where the platform had no
// peak), and the OpenBLAS core of each platform (Platform.blas_core) for
// stack comparisons ("" for platforms stored before this version).
constexpr const char kSchemaV8[] = R"sql(
ALTER TABLE results ADD COLUMN silicon_mfu REAL;  -- model_flops_per_sec / theoretical peak
ALTER TABLE results ADD COLUMN silicon_hfu REAL;  -- executed_flops_per_sec / theoretical peak
ALTER TABLE platforms ADD COLUMN blas_core TEXT NOT NULL DEFAULT '';
)sql";

// Version 9: the stack each result's process ran with (Measurement.stack:
// its OpenBLAS core and ATen CPU capability, which a sweep's stack axis
// varies on one platform; "" for results stored before this version or on
// other devices), and each platform's ATen capability.
constexpr const char kSchemaV9[] = R"sql(
ALTER TABLE results ADD COLUMN blas_core TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN aten_capability TEXT NOT NULL DEFAULT '';
ALTER TABLE platforms ADD COLUMN aten_capability TEXT NOT NULL DEFAULT '';
)sql";

// Version 10: who first announced each platform (a worker id; "" before
// this version): only it may replace the platform's roofs.
constexpr const char kSchemaV10[] = R"sql(
ALTER TABLE platforms ADD COLUMN owner TEXT NOT NULL DEFAULT '';
)sql";

// Jobs are inserted in run order, so that the ones leased together lie
// together in the table and its indexes (a commit then writes a few pages,
// not one per job); the expansion order listings use is kept beside it.
// NULL for jobs inserted before: they went in expansion order, by id.
constexpr const char kSchemaV11[] = R"sql(
ALTER TABLE jobs ADD COLUMN expansion_index INTEGER;
)sql";

// Budgeted sweeps (docs/prediction.md): the predicted step time of each job
// the budget left unmeasured (JOB_PREDICTED), apart from results so that
// nothing that counts measurements (goodput, exactly-once, analyses) can
// take one for a measurement.
constexpr const char kSchemaV12[] = R"sql(
CREATE TABLE predictions (
  job_id          INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
  details         BLOB    NOT NULL,   -- v1::PredictedStep
  created_unix_ms INTEGER NOT NULL
);
)sql";

// Version 13: result reuse across sweeps (docs/prediction.md, "Reusing
// results"). A worker's timing harness (WorkerHello.harness) is kept with
// it and with each result it measured; a result taken from an earlier
// sweep's job names that job. jobs_reuse finds a configuration's results of
// other sweeps in one seek.
constexpr const char kSchemaV13[] = R"sql(
ALTER TABLE workers ADD COLUMN harness TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN harness TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN reused_from_job_id INTEGER;
CREATE INDEX jobs_reuse ON jobs(config_id, precision, optimizer, repeat);
)sql";

// Version 14: the trust policy of result reuse (docs/prediction.md,
// "Whose results are reused"). A worker's trust domain (the worker-id
// patterns of its token; '' without tokens or with an unrestricted one) is
// kept with it and with each result it measured: results are reused only
// within their domain, and a platform row belongs to a domain ('' for every
// row stored before: those were the fleet's). spot_checks holds each reuse
// measured again instead, who measured the result (source_worker) and who
// measured it again (checker), and the verdict; a worker contradicted by
// two others is refused as a source (reuse_refused says why).
constexpr const char kSchemaV14[] = R"sql(
ALTER TABLE workers ADD COLUMN trust_domain TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN reuse_refused TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN trust_domain TEXT NOT NULL DEFAULT '';
UPDATE platforms SET owner = '';
CREATE TABLE spot_checks (
  job_id           INTEGER PRIMARY KEY REFERENCES jobs(id),
  source_result_id INTEGER NOT NULL REFERENCES results(id),
  source_worker    TEXT    NOT NULL,
  checker          TEXT    NOT NULL DEFAULT '',
  verdict          TEXT    NOT NULL DEFAULT '',
  created_unix_ms  INTEGER NOT NULL
);
)sql";

// A data-parallel job's gang: one attempt per rank, leased together; the
// gang is named by its rank 0 attempt's id (NULL for a single attempt).
constexpr const char kSchemaV15[] = R"sql(
ALTER TABLE attempts ADD COLUMN gang_id INTEGER;
ALTER TABLE attempts ADD COLUMN gang_rank INTEGER NOT NULL DEFAULT 0;
CREATE INDEX attempts_open_gang ON attempts(gang_id)
  WHERE finished_unix_ms IS NULL AND gang_id IS NOT NULL;
)sql";

// Version 16: a user's own fleet's training-job events (docs/fleet-events.md),
// each stored once: the key is the event's deterministic serialization.
constexpr const char kSchemaV16[] = R"sql(
CREATE TABLE fleet_events (
  job   TEXT NOT NULL,
  event BLOB NOT NULL,
  PRIMARY KEY (job, event)
) WITHOUT ROWID;
)sql";

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration>* const kMigrations = new std::vector<Migration>{
      {1, "sweeps, jobs, job_params, attempts, results, samples, workers, platforms", kSchemaV1},
      {2, "jobs: params, model_flops, peak_memory_estimate_bytes; sweeps: run_predicted_oom",
       kSchemaV2},
      {3, "models: TorchScript models by content hash", kSchemaV3},
      {4, "results: mfu, hfu against the calibrated roof", kSchemaV4},
      {5, "results: suspect conditions", kSchemaV5},
      {6, "jobs: repeat", kSchemaV6},
      {7, "configs, config_params: configurations shared by jobs and sweeps", kSchemaV7},
      {8, "results: silicon_mfu, silicon_hfu; platforms: blas_core", kSchemaV8},
      {9, "results: blas_core, aten_capability; platforms: aten_capability", kSchemaV9},
      {10, "platforms: owner", kSchemaV10},
      {11, "jobs: expansion_index (jobs inserted in run order)", kSchemaV11},
      {12, "predictions: budgeted sweeps' predicted step times", kSchemaV12},
      {13, "workers, results: harness; results: reused_from_job_id", kSchemaV13},
      {14, "workers, results: trust_domain; spot_checks: re-measured reuses", kSchemaV14},
      {15, "attempts: gang_id, gang_rank (data-parallel gangs)", kSchemaV15},
      {16, "fleet_events: a user's training jobs' events", kSchemaV16},
  };
  return *kMigrations;
}

int SchemaVersion() { return static_cast<int>(Migrations().size()); }

absl::StatusOr<int> ReadUserVersion(sqlite3* db) {
  Statement stmt(db, "PRAGMA user_version");
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError("PRAGMA user_version returned no row");
  return static_cast<int>(stmt.ColumnInt(0));
}

absl::Status ApplyMigrations(sqlite3* db, const std::string& path) {
  const int target = SchemaVersion();
  // Lock-free look first, so reopening a current file takes no write lock
  // and a newer file is refused before anything is written to it.
  absl::StatusOr<int> current = ReadUserVersion(db);
  if (!current.ok()) return current.status();
  if (*current > target) {
    return absl::FailedPreconditionError(absl::StrCat("database ", path,
                                                      " was written by a newer paradnn (schema ",
                                                      *current, " > ", target, ")"));
  }
  if (*current == target) return absl::OkStatus();
  for (const Migration& migration : Migrations()) {
    if (absl::Status s = Exec(db, "BEGIN IMMEDIATE"); !s.ok()) return s;
    // Read under the write lock: another process may have migrated the file
    // since we last looked.
    absl::StatusOr<int> version = ReadUserVersion(db);
    absl::Status status = version.status();
    if (status.ok() && *version > target) {
      status = absl::FailedPreconditionError(
          absl::StrCat("database ", path, " was written by a newer paradnn (schema ", *version,
                       " > ", target, ")"));
    }
    if (status.ok() && *version >= migration.version) {
      status = Exec(db, "COMMIT");
      if (!status.ok()) {
        Exec(db, "ROLLBACK").IgnoreError();
        return status;
      }
      continue;
    }
    if (status.ok() && *version != migration.version - 1) {
      status = absl::DataLossError(absl::StrCat("database ", path, " is at schema ", *version,
                                                " but migration ", migration.version, " expects ",
                                                migration.version - 1));
    }
    if (status.ok()) status = Exec(db, migration.sql);
    if (status.ok()) {
      // PRAGMA takes no parameters; the value is our own constant, not input.
      status = Exec(db, absl::StrCat("PRAGMA user_version = ", migration.version).c_str());
    }
    if (status.ok()) status = Exec(db, "COMMIT");
    if (!status.ok()) {
      Exec(db, "ROLLBACK").IgnoreError();
      return status;
    }
    spdlog::info("database {}: applied migration {} ({})", path, migration.version,
                 migration.description);
  }
  return absl::OkStatus();
}

}  // namespace paradnn::db
