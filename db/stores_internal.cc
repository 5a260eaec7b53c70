#include "db/stores_internal.h"

#include <string>
#include <utility>

#include "spdlog/spdlog.h"

namespace paradnn::db::internal {

Database::DoneFn LogIfFailed(std::string what) {
  return [what = std::move(what)](const absl::Status& status) {
    if (!status.ok()) spdlog::error("database write failed: {}: {}", what, status.ToString());
  };
}

absl::Status ParseBlob(const std::string& bytes, google::protobuf::MessageLite* message,
                       const char* table, int64_t id) {
  if (message->ParseFromString(bytes)) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("stored ", message->GetTypeName(), " of ", table, " row ",
                                          id, " does not parse"));
}

void BindOptionalId(Statement& stmt, int index, int64_t id) {
  if (id > 0) {
    stmt.Bind(index, id);
  } else {
    stmt.BindNull(index);
  }
}

absl::StatusOr<std::vector<int64_t>> ReadInts(const Database* database, const char* sql,
                                              const std::function<void(Statement&)>& bind) {
  std::vector<int64_t> values;
  absl::Status status = database->Read([&](sqlite3* db) -> absl::Status {
    Statement stmt(db, sql);
    bind(stmt);
    return stmt.ForEachRow([&] { values.push_back(stmt.ColumnInt(0)); });
  });
  if (!status.ok()) return status;
  return values;
}

absl::StatusOr<int64_t> ReadCount(const Database* database, const char* sql,
                                  const std::function<void(Statement&)>& bind) {
  absl::StatusOr<std::vector<int64_t>> count = ReadInts(database, sql, bind);
  if (!count.ok()) return count.status();
  return count->empty() ? 0 : count->front();
}

absl::Status AppendSamples(sqlite3* db, int64_t result_id, v1::Measurement* m) {
  Statement samples(db, "SELECT seconds FROM samples WHERE result_id = ? ORDER BY step");
  samples.Bind(1, result_id);
  return samples.ForEachRow([&] { m->add_step_seconds(samples.ColumnDouble(0)); });
}

absl::StatusOr<int64_t> FirstAttemptStartUnixMs(sqlite3* db, int64_t sweep_id) {
  Statement first(db,
                  "SELECT COALESCE(MIN(a.started_unix_ms), 0) FROM attempts a "
                  "JOIN jobs j ON j.id = a.job_id WHERE j.sweep_id = ?");
  first.Bind(1, sweep_id);
  absl::StatusOr<bool> row = first.Step();
  if (!row.ok()) return row.status();
  return *row ? first.ColumnInt(0) : int64_t{0};
}

absl::Status FinishSweepIfDone(sqlite3* db, int64_t sweep_id, int64_t now_unix_ms) {
  Statement stmt(db,
                 "UPDATE sweeps SET state = ?1, finished_unix_ms = ?2 "
                 "WHERE id = ?3 AND state = ?4 AND NOT EXISTS ("
                 "  SELECT 1 FROM jobs WHERE sweep_id = ?3 AND state IN (?5, ?6, ?7))");
  stmt.Bind(1, static_cast<int>(v1::SWEEP_DONE))
      .Bind(2, now_unix_ms)
      .Bind(3, sweep_id)
      .Bind(4, static_cast<int>(v1::SWEEP_RUNNING))
      .Bind(5, static_cast<int>(v1::JOB_PENDING))
      .Bind(6, static_cast<int>(v1::JOB_LEASED))
      .Bind(7, static_cast<int>(v1::JOB_HELD));  // a budgeted sweep's planner still holds it
  return stmt.Run();
}

}  // namespace paradnn::db::internal
