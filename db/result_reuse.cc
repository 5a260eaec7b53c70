#include "db/result_reuse.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "db/stores_internal.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::db::internal {

absl::StatusOr<std::optional<ReuseKey>> ReuseKeyOfWorker(sqlite3* db,
                                                         const std::string& worker_id) {
  Statement find(db,
                 "SELECT w.harness, COALESCE(p.fingerprint, '') FROM workers w "
                 "LEFT JOIN platforms p ON p.id = w.platform_id WHERE w.id = ?");
  find.Bind(1, worker_id);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  if (!*found) return std::optional<ReuseKey>();
  ReuseKey key{find.ColumnText(1), find.ColumnText(0)};
  if (key.fingerprint.empty() || key.harness.empty()) return std::optional<ReuseKey>();
  return std::optional<ReuseKey>(std::move(key));
}

bool SameMeasurementSettings(const v1::RunSettings& a, const v1::RunSettings& b) {
  auto measured_part = [](v1::RunSettings settings) {
    settings.clear_timeout_seconds();
    settings.clear_budget_seconds();
    settings.clear_fresh();
    // A sweep without a seed gets one of its own; synthetic data and initial
    // weights do not move a step's time (subnormal gradients, which would,
    // make a result suspect, and suspect results are not reused).
    settings.clear_seed();
    return settings.SerializeAsString();  // no maps: deterministic
  };
  return measured_part(a) == measured_part(b);
}

absl::StatusOr<std::optional<ReusableResult>> FindReusableResult(sqlite3* db,
                                                                 const JobIdentity& job,
                                                                 const ReuseKey& key) {
  // A result flagged suspect (other load, reference BLAS, ...) is not worth
  // copying: the job measures afresh.
  Statement find(db,
                 "SELECT r.id, COALESCE(r.reused_from_job_id, r.job_id), js.settings "
                 "FROM jobs js JOIN results r ON r.job_id = js.id "
                 "JOIN platforms p ON p.id = r.platform_id "
                 "WHERE js.config_id = ?1 AND js.precision = ?2 AND js.optimizer = ?3 "
                 "AND js.repeat = ?4 AND js.sweep_id != ?5 AND r.outcome = ?6 "
                 "AND r.harness = ?7 AND p.fingerprint = ?8 AND COALESCE(r.suspect, '') = '' "
                 "ORDER BY r.id DESC LIMIT 16");
  find.Bind(1, job.config_id).Bind(2, job.precision).Bind(3, job.optimizer).Bind(4, job.repeat);
  find.Bind(5, job.sweep_id).Bind(6, static_cast<int>(v1::OK)).Bind(7, key.harness);
  find.Bind(8, key.fingerprint);
  for (;;) {
    absl::StatusOr<bool> row = find.Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<ReusableResult>();
    v1::RunSettings settings;
    if (!settings.ParseFromString(find.ColumnBlob(2))) continue;  // unreadable: not a match
    if (!SameMeasurementSettings(settings, job.settings)) continue;
    return std::optional<ReusableResult>(ReusableResult{find.ColumnInt(0), find.ColumnInt(1)});
  }
}

absl::Status StoreReusedResult(sqlite3* db, int64_t job_id, int64_t attempt_id,
                               const std::string& worker_id, const ReusableResult& source,
                               int64_t now_unix_ms) {
  v1::Measurement measurement;
  std::string measured_by;
  std::string harness;
  int64_t platform_id = 0;
  {
    Statement read(db,
                   "SELECT measurement, worker_id, harness, COALESCE(platform_id, 0) "
                   "FROM results WHERE id = ?");
    read.Bind(1, source.result_id);
    absl::StatusOr<bool> found = read.Step();
    if (!found.ok()) return found.status();
    if (!*found) {
      return absl::NotFoundError(absl::StrCat("result ", source.result_id, " to reuse is gone"));
    }
    if (absl::Status s = ParseBlob(read.ColumnBlob(0), &measurement, "results", source.result_id);
        !s.ok()) {
      return s;
    }
    measured_by = read.ColumnText(1);
    harness = read.ColumnText(2);
    platform_id = read.ColumnInt(3);
  }
  if (absl::Status s = AppendSamples(db, source.result_id, &measurement); !s.ok()) return s;
  absl::StatusOr<StoreOutcome> stored = StoreResultInTransaction(
      db, job_id, attempt_id, worker_id, platform_id, measurement, now_unix_ms);
  if (!stored.ok()) return stored.status();
  Statement mark(db,
                 "UPDATE results SET worker_id = ?1, harness = ?2, reused_from_job_id = ?3 "
                 "WHERE job_id = ?4");
  mark.Bind(1, measured_by).Bind(2, harness).Bind(3, source.origin_job_id).Bind(4, job_id);
  if (absl::Status s = mark.Run(); !s.ok()) return s;
  Statement attempt(db, "UPDATE attempts SET outcome = 'reused' WHERE id = ?");
  attempt.Bind(1, attempt_id);
  return attempt.Run();
}

}  // namespace paradnn::db::internal
