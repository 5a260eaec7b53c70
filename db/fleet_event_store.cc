#include "db/fleet_event_store.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/framing.h"
#include "db/stores_internal.h"

namespace paradnn::db {
void FleetEventStore::Add(const std::vector<v1::TrainingEvent>& events, Callback<int64_t> done) {
  // Serialized on the caller's thread: the writer thread only writes.
  auto rows = std::make_shared<std::vector<std::pair<std::string, std::string>>>();
  rows->reserve(events.size());
  for (const v1::TrainingEvent& e : events)
    rows->emplace_back(e.job(), common::DeterministicBytes(e));  // stored form and key
  internal::WriteValue<int64_t>(
      db_,
      [rows](sqlite3* db) -> absl::StatusOr<int64_t> {
        Statement insert(db,
                         "INSERT INTO fleet_events (job, event) VALUES (?, ?) "
                         "ON CONFLICT DO NOTHING");
        int64_t added = 0;
        for (const auto& [job, bytes] : *rows) {
          insert.Reset();
          insert.Bind(1, job).BindBlob(2, bytes);
          if (absl::Status s = insert.Run(); !s.ok()) return s;
          added += sqlite3_changes(db);
        }
        return added;
      },
      std::move(done));
}

absl::StatusOr<int64_t> FleetEventStore::AddSync(const std::vector<v1::TrainingEvent>& events) {
  return internal::Await<int64_t>(db_,
                                  [&](Callback<int64_t> done) { Add(events, std::move(done)); });
}

absl::Status ForEachFleetJob(
    const Database& database,
    const std::function<absl::Status(const std::string&, std::vector<v1::TrainingEvent>)>& visit) {
  return database.Read([&](sqlite3* db) -> absl::Status {
    Statement rows(db, "SELECT job, event FROM fleet_events ORDER BY job");
    std::string job;
    std::vector<v1::TrainingEvent> events;
    for (;;) {
      absl::StatusOr<bool> row = rows.Step();
      if (!row.ok()) return row.status();
      if (!*row || rows.ColumnText(0) != job) {
        if (!events.empty()) {
          if (absl::Status s = visit(job, std::move(events)); !s.ok()) return s;
          events.clear();
        }
        if (!*row) return absl::OkStatus();
        job = rows.ColumnText(0);
      }
      v1::TrainingEvent event;
      if (!event.ParseFromString(rows.ColumnBlob(1))) {
        return absl::DataLossError(
            absl::StrCat("fleet_events: an event of job ", job, " does not parse"));
      }
      events.push_back(std::move(event));
    }
  });
}

absl::StatusOr<int64_t> FleetEventStore::Count() const {
  return internal::ReadCount(db_, "SELECT COUNT(*) FROM fleet_events", [](Statement&) {});
}

}  // namespace paradnn::db
