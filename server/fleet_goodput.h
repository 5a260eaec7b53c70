// Fleet goodput: how much of the benchmarking fleet's time became
// measurement, as three shares and their product (docs/observability.md):
//
//   scheduling = worker time holding a job ÷ worker time connected
//   runtime    = timed-step seconds ÷ job wall seconds (lease granted ..
//                result stored, so runner start-up, build, warm-up, probes
//                and the result's trip back all count against it)
//   program    = HFU (executed FLOP/s ÷ the worker's calibrated roof),
//                averaged over OK results weighted by their timed seconds
//   goodput    = scheduling × runtime × program
//
// ComputeFleetGoodput is the arithmetic over a timeline (pure, unit-tested
// on made-up timelines); ReadFleetGoodput gathers the timeline from the
// database and the coordinator's ConnectionLedger.
#ifndef PARADNN_SERVER_FLEET_GOODPUT_H_
#define PARADNN_SERVER_FLEET_GOODPUT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "db/database.h"
#include "db/fleet_activity.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::server {

// [from, to) in Unix milliseconds.
struct TimeSpan {
  int64_t from_unix_ms = 0;
  int64_t to_unix_ms = 0;
};

// One attempt (a lease of a job to a worker) and what its result reported;
// device_kind is its worker's.
using GoodputAttempt = db::FleetAttemptRow;

// A worker and the spans it was connected (each may be open-ended: to =
// the window's end).
struct GoodputWorker {
  std::string worker_id;
  std::string device_kind;
  std::vector<TimeSpan> connected;
};

struct GoodputTimeline {
  TimeSpan window;
  int64_t sweep_id = 0;  // copied into the rows
  std::vector<GoodputAttempt> attempts;
  std::vector<GoodputWorker> workers;
};

// The goodput rows of `timeline`, one per device kind (sorted) and a total.
//
// Scheduling: per worker, busy = the union of its attempts' spans (an open
// attempt runs to the window's end) and connected = the union of its
// connected spans and its busy spans (a worker running a job is connected,
// whatever the ledger missed), both clipped to the window; a worker counts
// once it has connected time in the window.
// Runtime: attempts that finished inside the window; job wall = finished -
// started; timed = the result's timed_seconds (0 for an attempt without a
// result: a lost worker's time is all badput).
// Program: OK results of those attempts with an HFU, weighted by timed
// seconds. Shares whose denominator is 0 are 0. Pure.
v1::FleetGoodputResponse ComputeFleetGoodput(const GoodputTimeline& timeline);

// ConnectionLedger remembers when each worker stream was open, since the
// coordinator started (the database keeps only the latest connection).
// A worker may have more than one stream open at once (a reconnect before
// the old stream closed): it is connected while any is. Thread-safe.
class ConnectionLedger {
 public:
  // `clock` must outlive the ledger.
  explicit ConnectionLedger(const common::Clock* clock) : clock_(clock) {}

  void Connected(const std::string& worker_id, const std::string& device_kind)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Disconnected(const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);

  // Every worker seen, its open span ending at `now_unix_ms`.
  std::vector<GoodputWorker> Workers(int64_t now_unix_ms) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    std::string device_kind;
    int open_streams = 0;
    std::vector<TimeSpan> spans;  // the last is open while open_streams > 0
  };
  const common::Clock* const clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> workers_ ABSL_GUARDED_BY(mu_);
};

// Reads the timeline for `request` from `database` (attempts, results,
// workers' latest connection) merged with `ledger` (may be null) and
// computes it. A sweep's window is its lifetime (created .. finished, or
// now), its attempts are its own and its workers those of its device kind.
// NotFound for an unknown sweep; InvalidArgument for a negative window.
absl::StatusOr<v1::FleetGoodputResponse> ReadFleetGoodput(const db::Database& database,
                                                          const ConnectionLedger* ledger,
                                                          const v1::FleetGoodputRequest& request,
                                                          int64_t now_unix_ms);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_FLEET_GOODPUT_H_
