// CoordinatorMetrics renders the coordinator's /metrics page: jobs and
// sweeps by state (SQL counts), workers by state and device kind (the
// scheduler's live view over the workers table), lease expiries and results
// stored (scheduler counters) with results per second over the last minute,
// RPC latencies, and fleet goodput gauges (fleet_goodput.h, over the last
// hour). Database-derived values are cached for `cache_ms` so that a burst
// of scrapes costs one set of queries. docs/observability.md lists every
// metric. Thread-safe.
#ifndef PARADNN_SERVER_COORDINATOR_METRICS_H_
#define PARADNN_SERVER_COORDINATOR_METRICS_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "db/database.h"
#include "server/fleet_goodput.h"
#include "server/metrics.h"
#include "server/scheduler.h"

namespace paradnn::server {

struct CoordinatorMetricsOptions {
  int64_t cache_ms = 5000;
  double goodput_window_seconds = 3600;
  int64_t rate_window_ms = 60'000;
};

class CoordinatorMetrics {
 public:
  // Everything must outlive this object.
  CoordinatorMetrics(const db::Database* database, const Scheduler* scheduler,
                     const ConnectionLedger* ledger, const common::Clock* clock,
                     CoordinatorMetricsOptions options = {});

  // Filled by the RPC timing interceptor.
  RpcMetrics* rpc() { return &rpc_; }
  // Samples the results counter for the per-second rate; call about once a
  // second.
  void Tick();
  // The exposition text.
  std::string Render() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Counters read from memory on every scrape.
  std::string RenderLiveCounters();
  // Jobs, sweeps and workers by state, and fleet goodput: database reads,
  // cached for options_.cache_ms.
  void RenderStateCounts(PrometheusText* out);
  void RenderGoodput(int64_t now, PrometheusText* out);

  const db::Database* const database_;
  const Scheduler* const scheduler_;
  const ConnectionLedger* const ledger_;
  const common::Clock* const clock_;
  const CoordinatorMetricsOptions options_;
  RpcMetrics rpc_;
  RateWindow results_rate_;

  absl::Mutex mu_;
  int64_t cached_at_ms_ ABSL_GUARDED_BY(mu_) = INT64_MIN;
  std::string cached_db_text_ ABSL_GUARDED_BY(mu_);  // jobs, sweeps, workers, goodput
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_COORDINATOR_METRICS_H_
