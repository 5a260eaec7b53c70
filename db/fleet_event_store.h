// FleetEventStore: a user's own fleet's training-job events
// (docs/fleet-events.md) in the `fleet_events` table, each stored once: an
// event equal in every field to a stored one is the same event, so a file
// ingested twice changes nothing. Thread-safe (as every store over one
// Database).
#ifndef PARADNN_DB_FLEET_EVENT_STORE_H_
#define PARADNN_DB_FLEET_EVENT_STORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/fleet_events.pb.h"

namespace paradnn::db {

class FleetEventStore {
 public:
  explicit FleetEventStore(Database* db) : db_(db) {}

  // Stores `events` in one transaction; `done` gets how many were new.
  void Add(const std::vector<v1::TrainingEvent>& events, Callback<int64_t> done);
  absl::StatusOr<int64_t> AddSync(const std::vector<v1::TrainingEvent>& events);

  absl::StatusOr<int64_t> Count() const;

 private:
  Database* db_;
};

// Every stored fleet event, job by job in job order, from one snapshot:
// `visit(job, its events)`. Stops at and returns visit's first error.
absl::Status ForEachFleetJob(
    const Database& database,
    const std::function<absl::Status(const std::string& job,
                                     std::vector<v1::TrainingEvent> events)>& visit);

}  // namespace paradnn::db

#endif  // PARADNN_DB_FLEET_EVENT_STORE_H_
