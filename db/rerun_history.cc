#include "db/rerun_history.h"

#include "common/host_sentinel.h"
#include "db/statement.h"
#include "db/stores_internal.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::db {

absl::StatusOr<std::vector<StoredRun>> LoadStoredRuns(const Database& database,
                                                      const std::string& fingerprint,
                                                      size_t limit) {
  std::vector<StoredRun> runs;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    Statement query(
        db,
        "SELECT j.config_id || '/' || j.precision || '/' || j.optimizer || '/' || "
        "COALESCE(r.intra_op_threads, 0) || '/' || COALESCE(r.inter_op_threads, 0) || '/' || "
        "r.blas_core || '/' || r.aten_capability || '/' || r.harness, "
        "r.step_median_s, COALESCE(r.ci95_rel, 0), r.measurement, r.id, r.job_id "
        "FROM results r JOIN jobs j ON j.id = r.job_id JOIN platforms p ON p.id = r.platform_id "
        "WHERE p.fingerprint = ?1 AND r.outcome = ?2 AND r.reused_from_job_id IS NULL "
        "AND r.step_median_s > 0 ORDER BY r.id DESC LIMIT ?3");
    query.Bind(1, fingerprint).Bind(2, static_cast<int>(v1::OK));
    query.Bind(3, static_cast<int64_t>(limit));
    return query.ForEachRow([&]() -> absl::Status {
      StoredRun& run = runs.emplace_back();
      run.group = query.ColumnText(0);
      run.step_s = query.ColumnDouble(1);
      run.within_rel = query.ColumnDouble(2);
      run.job_id = query.ColumnInt(5);
      v1::Measurement measurement;
      if (absl::Status s =
              internal::ParseBlob(query.ColumnBlob(3), &measurement, "results", query.ColumnInt(4));
          !s.ok()) {
        return s;
      }
      run.sentinel = common::OwnHostSpeed(measurement.sentinel()).value_or(0);
      return absl::OkStatus();
    });
  });
  if (!status.ok()) return status;
  return runs;
}

}  // namespace paradnn::db
