// What the fleet did over a time window, as stored: every worker's latest
// connection and every attempt overlapping the window, with its result's
// timing. server/fleet_goodput.h turns it into goodput.
#ifndef PARADNN_DB_FLEET_ACTIVITY_H_
#define PARADNN_DB_FLEET_ACTIVITY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"

namespace paradnn::db {

struct FleetWorkerRow {
  std::string worker_id;
  std::string device_kind;
  bool connected = false;
  int64_t connected_unix_ms = 0;  // the latest connection
  int64_t last_seen_unix_ms = 0;
};

// One attempt (a lease of a job to a worker) and what its result reported.
struct FleetAttemptRow {
  std::string worker_id;
  std::string device_kind;  // as read: the job's device
  int64_t started_unix_ms = 0;
  int64_t finished_unix_ms = 0;  // 0 while the attempt is open
  bool has_result = false;
  bool ok = false;  // outcome OK
  double timed_seconds = 0;
  double build_seconds = 0;
  std::optional<double> hfu;  // OK results measured against a roof
};

struct FleetActivity {
  int64_t from_unix_ms = 0;
  int64_t to_unix_ms = 0;
  std::string sweep_device;  // the sweep's device; empty for the whole fleet
  std::vector<FleetWorkerRow> workers;
  std::vector<FleetAttemptRow> attempts;
};

// The window is the sweep's life (sweep_id > 0; NotFound for an unknown
// one), else the last `window_seconds` (> 0), else all history (from the
// first attempt). Only attempts of the sweep's jobs when sweep_id > 0. One
// snapshot.
absl::StatusOr<FleetActivity> ReadFleetActivity(const Database& database, int64_t sweep_id,
                                                double window_seconds, int64_t now_unix_ms);

// Jobs and sweeps by state (v1::JobState / v1::SweepState numbers) and
// every worker's id and device kind, for /metrics. One snapshot.
struct StateCounts {
  std::vector<std::pair<int, int64_t>> jobs;
  std::vector<std::pair<int, int64_t>> sweeps;
  std::vector<std::pair<std::string, std::string>> workers;
};
absl::StatusOr<StateCounts> ReadStateCounts(const Database& database);

}  // namespace paradnn::db

#endif  // PARADNN_DB_FLEET_ACTIVITY_H_
