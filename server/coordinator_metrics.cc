#include "server/coordinator_metrics.h"

#include <spdlog/spdlog.h>

#include <map>
#include <utility>

#include "common/state_names.h"
#include "db/fleet_activity.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::server {
namespace {}  // namespace

CoordinatorMetrics::CoordinatorMetrics(const db::Database* database, const Scheduler* scheduler,
                                       const ConnectionLedger* ledger, const common::Clock* clock,
                                       CoordinatorMetricsOptions options)
    : database_(database),
      scheduler_(scheduler),
      ledger_(ledger),
      clock_(clock),
      options_(options),
      results_rate_(options.rate_window_ms) {}

void CoordinatorMetrics::Tick() {
  results_rate_.Sample(clock_->NowUnixMs(), scheduler_->results_stored());
}

std::string CoordinatorMetrics::Render() {
  const int64_t now = clock_->NowUnixMs();
  const std::string live_text = RenderLiveCounters();
  {
    absl::MutexLock lock(&mu_);
    if (cached_at_ms_ != INT64_MIN && now - cached_at_ms_ < options_.cache_ms) {
      return live_text + cached_db_text_;
    }
  }
  PrometheusText db_out;
  RenderStateCounts(&db_out);
  RenderGoodput(now, &db_out);
  absl::MutexLock lock(&mu_);
  cached_at_ms_ = now;
  cached_db_text_ = db_out.text();
  return live_text + cached_db_text_;
}

std::string CoordinatorMetrics::RenderLiveCounters() {
  PrometheusText out;
  out.Family("paradnn_up", "gauge", "1 while the coordinator serves");
  out.Sample("paradnn_up", {}, 1);
  out.Family("paradnn_lease_expiries_total", "counter",
             "Leases released because their worker went silent past the deadline (since start)");
  out.Sample("paradnn_lease_expiries_total", {}, static_cast<double>(scheduler_->lease_expiries()));
  out.Family("paradnn_results_stored_total", "counter",
             "Results committed to the database (since start; duplicates not counted)");
  out.Sample("paradnn_results_stored_total", {}, static_cast<double>(scheduler_->results_stored()));
  out.Family("paradnn_results_per_second", "gauge",
             "Results stored per second over the last minute");
  out.Sample("paradnn_results_per_second", {}, results_rate_.PerSecond());
  // How well the single writer batches: writes per transaction is what
  // the page writes of a commit are shared by.
  const db::Database::WriterStats writer = database_->writer_stats();
  out.Family("paradnn_db_write_transactions_total", "counter",
             "Write transactions the database's single writer ran (since start)");
  out.Sample("paradnn_db_write_transactions_total", {}, static_cast<double>(writer.transactions));
  out.Family("paradnn_db_writes_total", "counter",
             "Write functions (a result, a lease, a chunk of a sweep...) those transactions "
             "carried (since start)");
  out.Sample("paradnn_db_writes_total", {}, static_cast<double>(writer.writes));
  rpc_.Write(&out);
  return out.text();
}

void CoordinatorMetrics::RenderStateCounts(PrometheusText* out) {
  std::map<int, int64_t> jobs = {{v1::JOB_PENDING, 0},  {v1::JOB_LEASED, 0},    {v1::JOB_DONE, 0},
                                 {v1::JOB_FAILED, 0},   {v1::JOB_CANCELLED, 0}, {v1::JOB_HELD, 0},
                                 {v1::JOB_PREDICTED, 0}};
  std::map<int, int64_t> sweeps = {{v1::SWEEP_RUNNING, 0},
                                   {v1::SWEEP_DONE, 0},
                                   {v1::SWEEP_CANCELLED, 0},
                                   {v1::SWEEP_INTERRUPTED, 0}};
  std::vector<std::pair<std::string, std::string>> workers;  // id, device kind
  if (absl::StatusOr<db::StateCounts> counts = db::ReadStateCounts(*database_); counts.ok()) {
    for (const auto& [state, count] : counts->jobs) jobs[state] = count;
    for (const auto& [state, count] : counts->sweeps) sweeps[state] = count;
    workers = std::move(counts->workers);
  } else {
    spdlog::warn("/metrics: reading counts: {}", counts.status().ToString());
  }
  out->Family("paradnn_jobs", "gauge", "Jobs by state");
  for (const auto& [state, count] : jobs) {
    out->Sample("paradnn_jobs", {{"state", common::JobStateName(state)}},
                static_cast<double>(count));
  }
  out->Family("paradnn_sweeps", "gauge", "Sweeps by state");
  for (const auto& [state, count] : sweeps) {
    out->Sample("paradnn_sweeps", {{"state", common::SweepStateName(state)}},
                static_cast<double>(count));
  }
  // Every (state, device kind) pair of a known kind is written, zeros too,
  // so a series does not vanish when its last worker changes state.
  const std::map<std::string, LiveWorker> live = scheduler_->Snapshot();
  std::map<std::string, std::map<std::string, int>> by_kind;  // kind -> state -> n
  for (const auto& [id, kind] : workers) {
    auto it = live.find(id);
    const v1::WorkerState state = it != live.end() ? it->second.state : v1::WORKER_DISCONNECTED;
    std::map<std::string, int>& states = by_kind[kind];
    for (v1::WorkerState s : {v1::WORKER_IDLE, v1::WORKER_BUSY, v1::WORKER_DRAINING,
                              v1::WORKER_SILENT, v1::WORKER_DISCONNECTED}) {
      states.emplace(common::WorkerStateName(s), 0);
    }
    ++states[common::WorkerStateName(state)];
  }
  out->Family("paradnn_workers", "gauge", "Workers by state and device kind");
  for (const auto& [kind, states] : by_kind) {
    for (const auto& [state, n] : states) {
      out->Sample("paradnn_workers", {{"state", state}, {"device_kind", kind}}, n);
    }
  }
}

void CoordinatorMetrics::RenderGoodput(int64_t now, PrometheusText* out) {
  v1::FleetGoodputRequest request;
  request.set_window_seconds(options_.goodput_window_seconds);
  absl::StatusOr<v1::FleetGoodputResponse> goodput =
      ReadFleetGoodput(*database_, ledger_, request, now);
  if (!goodput.ok()) {
    spdlog::warn("/metrics: fleet goodput: {}", goodput.status().ToString());
    return;
  }
  struct Gauge {
    const char* name;
    const char* help;
    double (v1::Goodput::*field)() const;
  };
  const Gauge gauges[] = {
      {"paradnn_goodput_scheduling_ratio",
       "Share of connected worker time spent holding a job, last hour", &v1::Goodput::scheduling},
      {"paradnn_goodput_runtime_ratio", "Share of job wall time spent in timed steps, last hour",
       &v1::Goodput::runtime},
      {"paradnn_goodput_program_ratio",
       "HFU (executed FLOP/s / calibrated roof) weighted by timed seconds, last hour",
       &v1::Goodput::program},
      {"paradnn_goodput_ratio", "scheduling x runtime x program, last hour", &v1::Goodput::goodput},
  };
  for (const Gauge& g : gauges) {
    out->Family(g.name, "gauge", g.help);
    for (const v1::Goodput& row : goodput->device_kinds()) {
      out->Sample(g.name, {{"device_kind", row.device_kind()}}, (row.*g.field)());
    }
  }
}

}  // namespace paradnn::server
