#include "server/fleet_goodput.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "db/fleet_activity.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::server {
namespace {

// Sum of the union of `spans` clipped to `window`, seconds.
double UnionSeconds(std::vector<TimeSpan> spans, const TimeSpan& window) {
  for (TimeSpan& s : spans) {
    s.from_unix_ms = std::max(s.from_unix_ms, window.from_unix_ms);
    s.to_unix_ms = std::min(s.to_unix_ms, window.to_unix_ms);
  }
  spans.erase(std::remove_if(spans.begin(), spans.end(),
                             [](const TimeSpan& s) { return s.to_unix_ms <= s.from_unix_ms; }),
              spans.end());
  std::sort(spans.begin(), spans.end(),
            [](const TimeSpan& a, const TimeSpan& b) { return a.from_unix_ms < b.from_unix_ms; });
  int64_t total = 0;
  int64_t end = INT64_MIN;
  for (const TimeSpan& s : spans) {
    const int64_t from = std::max(s.from_unix_ms, end);
    if (s.to_unix_ms > from) total += s.to_unix_ms - from;
    end = std::max(end, s.to_unix_ms);
  }
  return static_cast<double>(total) / 1000.0;
}

double Share(double part, double whole) { return whole > 0 ? part / whole : 0; }

struct Sums {
  int32_t workers = 0;
  double connected = 0, busy = 0, wall = 0, timed = 0, build = 0;
  int64_t jobs = 0;
  int64_t utilization_results = 0;
  double hfu_weighted = 0, hfu_weight = 0;

  void Add(const Sums& o) {
    workers += o.workers;
    connected += o.connected;
    busy += o.busy;
    wall += o.wall;
    timed += o.timed;
    build += o.build;
    jobs += o.jobs;
    utilization_results += o.utilization_results;
    hfu_weighted += o.hfu_weighted;
    hfu_weight += o.hfu_weight;
  }
  v1::Goodput Row(const std::string& device_kind, int64_t sweep_id) const {
    v1::Goodput g;
    g.set_device_kind(device_kind);
    g.set_sweep_id(sweep_id);
    g.set_workers(workers);
    g.set_connected_seconds(connected);
    g.set_busy_seconds(busy);
    g.set_scheduling(Share(busy, connected));
    g.set_job_wall_seconds(wall);
    g.set_timed_seconds(timed);
    g.set_build_seconds(build);
    g.set_runtime(Share(timed, wall));
    g.set_jobs(jobs);
    g.set_utilization_results(utilization_results);
    g.set_program(Share(hfu_weighted, hfu_weight));
    g.set_goodput(g.scheduling() * g.runtime() * g.program());
    return g;
  }
};

}  // namespace

v1::FleetGoodputResponse ComputeFleetGoodput(const GoodputTimeline& timeline) {
  const TimeSpan& window = timeline.window;
  std::map<std::string, Sums> by_kind;
  // Scheduling, per worker.
  struct WorkerSpans {
    std::string device_kind;
    std::vector<TimeSpan> connected, busy;
  };
  std::map<std::string, WorkerSpans> workers;
  for (const GoodputWorker& w : timeline.workers) {
    WorkerSpans& spans = workers[w.worker_id];
    if (spans.device_kind.empty()) spans.device_kind = w.device_kind;
    spans.connected.insert(spans.connected.end(), w.connected.begin(), w.connected.end());
  }
  for (const GoodputAttempt& a : timeline.attempts) {
    WorkerSpans& spans = workers[a.worker_id];
    if (spans.device_kind.empty()) spans.device_kind = a.device_kind;
    const TimeSpan span{a.started_unix_ms,
                        a.finished_unix_ms != 0 ? a.finished_unix_ms : window.to_unix_ms};
    spans.busy.push_back(span);
    spans.connected.push_back(span);
  }
  for (const auto& [worker_id, spans] : workers) {
    const double connected = UnionSeconds(spans.connected, window);
    if (connected <= 0) continue;
    Sums& sums = by_kind[spans.device_kind];
    ++sums.workers;
    sums.connected += connected;
    sums.busy += UnionSeconds(spans.busy, window);
  }
  // Runtime and program, per finished attempt.
  for (const GoodputAttempt& a : timeline.attempts) {
    if (a.finished_unix_ms == 0 || a.finished_unix_ms < window.from_unix_ms ||
        a.finished_unix_ms > window.to_unix_ms) {
      continue;
    }
    const std::string& kind =
        workers[a.worker_id].device_kind.empty() ? a.device_kind : workers[a.worker_id].device_kind;
    Sums& sums = by_kind[kind];
    ++sums.jobs;
    sums.wall +=
        static_cast<double>(std::max<int64_t>(0, a.finished_unix_ms - a.started_unix_ms)) / 1000.0;
    if (!a.has_result) continue;
    sums.timed += a.timed_seconds;
    sums.build += a.build_seconds;
    if (a.ok && a.hfu.has_value() && a.timed_seconds > 0) {
      ++sums.utilization_results;
      sums.hfu_weighted += *a.hfu * a.timed_seconds;
      sums.hfu_weight += a.timed_seconds;
    }
  }
  v1::FleetGoodputResponse response;
  response.set_from_unix_ms(window.from_unix_ms);
  response.set_to_unix_ms(window.to_unix_ms);
  Sums total;
  for (const auto& [kind, sums] : by_kind) {
    *response.add_device_kinds() = sums.Row(kind, timeline.sweep_id);
    total.Add(sums);
  }
  *response.mutable_total() = total.Row("", timeline.sweep_id);
  // The product of the total's shares is not the sum of the kinds'
  // products; per kind is what a reader compares, the total is the fleet.
  return response;
}

void ConnectionLedger::Connected(const std::string& worker_id, const std::string& device_kind) {
  const int64_t now = clock_->NowUnixMs();
  absl::MutexLock lock(&mu_);
  Entry& e = workers_[worker_id];
  if (!device_kind.empty()) e.device_kind = device_kind;
  if (e.open_streams++ == 0) e.spans.push_back(TimeSpan{now, 0});
}

void ConnectionLedger::Disconnected(const std::string& worker_id) {
  const int64_t now = clock_->NowUnixMs();
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end() || it->second.open_streams == 0) return;
  if (--it->second.open_streams == 0) it->second.spans.back().to_unix_ms = now;
}

std::vector<GoodputWorker> ConnectionLedger::Workers(int64_t now_unix_ms) const {
  absl::MutexLock lock(&mu_);
  std::vector<GoodputWorker> out;
  for (const auto& [worker_id, e] : workers_) {
    GoodputWorker w;
    w.worker_id = worker_id;
    w.device_kind = e.device_kind;
    w.connected = e.spans;
    if (e.open_streams > 0) w.connected.back().to_unix_ms = now_unix_ms;
    out.push_back(std::move(w));
  }
  return out;
}

absl::StatusOr<v1::FleetGoodputResponse> ReadFleetGoodput(const db::Database& database,
                                                          const ConnectionLedger* ledger,
                                                          const v1::FleetGoodputRequest& request,
                                                          int64_t now_unix_ms) {
  if (!std::isfinite(request.window_seconds()) || request.window_seconds() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("window_seconds: must be a finite number of seconds >= 0 (0 = all history), "
                     "not ",
                     request.window_seconds()));
  }
  if (request.sweep_id() < 0) {
    return absl::InvalidArgumentError("sweep_id: must be >= 0 (0 = the whole fleet)");
  }
  absl::StatusOr<db::FleetActivity> activity =
      db::ReadFleetActivity(database, request.sweep_id(), request.window_seconds(), now_unix_ms);
  if (!activity.ok()) return activity.status();
  const std::string& sweep_device = activity->sweep_device;
  GoodputTimeline timeline;
  timeline.sweep_id = request.sweep_id();
  timeline.window = TimeSpan{activity->from_unix_ms, activity->to_unix_ms};
  std::map<std::string, std::string> kind_of;  // worker -> device kind
  for (const db::FleetWorkerRow& row : activity->workers) {
    kind_of[row.worker_id] = row.device_kind;
    if (!sweep_device.empty() && row.device_kind != sweep_device) continue;
    GoodputWorker& w = timeline.workers.emplace_back();
    w.worker_id = row.worker_id;
    w.device_kind = row.device_kind;
    // The latest connection; earlier ones only the ledger knows.
    w.connected.push_back(
        TimeSpan{row.connected_unix_ms, row.connected ? now_unix_ms : row.last_seen_unix_ms});
  }
  timeline.attempts = std::move(activity->attempts);
  for (GoodputAttempt& a : timeline.attempts) {
    // The worker's kind where it is known, else the job's device.
    if (auto kind = kind_of.find(a.worker_id); kind != kind_of.end()) a.device_kind = kind->second;
  }
  if (ledger != nullptr) {
    for (GoodputWorker& w : ledger->Workers(now_unix_ms)) {
      if (!sweep_device.empty() && w.device_kind != sweep_device) continue;
      timeline.workers.push_back(std::move(w));
    }
  }
  return ComputeFleetGoodput(timeline);
}

}  // namespace paradnn::server
