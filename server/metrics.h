// The coordinator's Prometheus metrics: a text-format writer, RPC latency
// histograms (filled by a gRPC server interceptor, so every method of both
// services is timed without touching its handler) and a results-per-second
// rate over a recent window. docs/observability.md lists every metric.
#ifndef PARADNN_SERVER_METRICS_H_
#define PARADNN_SERVER_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace paradnn::server {

// Escapes a label value for the text exposition format: backslash, double
// quote and newline.
std::string EscapeLabelValue(const std::string& value);

// Builds one exposition: each family's HELP and TYPE once, then its samples.
// Not thread-safe.
class PrometheusText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // Starts family `name` (type "counter", "gauge" or "histogram").
  void Family(const std::string& name, const std::string& type, const std::string& help);
  void Sample(const std::string& name, const Labels& labels, double value);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Upper bounds (seconds) of the RPC latency histogram buckets.
inline constexpr std::array<double, 14> kRpcLatencyBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60};

// Latency histograms and status counts per gRPC method. Thread-safe.
class RpcMetrics {
 public:
  // One finished call of `method` (full name, e.g. /paradnn.v1.Coordinator/GetSweep).
  void Observe(const std::string& method, double seconds, int status_code) ABSL_LOCKS_EXCLUDED(mu_);
  // paradnn_rpc_duration_seconds (histogram) and paradnn_rpc_calls_total.
  void Write(PrometheusText* out) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Histogram {
    std::array<uint64_t, kRpcLatencyBuckets.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Histogram> histograms_ ABSL_GUARDED_BY(mu_);
  // (method, code) -> calls
  std::map<std::pair<std::string, int>, uint64_t> calls_ ABSL_GUARDED_BY(mu_);
};

// A gRPC server interceptor factory that times every call into `metrics`
// (from creation, when the call arrives, to the status being sent; for a
// stream that is its lifetime). `metrics` must outlive the server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeRpcTimingInterceptor(
    RpcMetrics* metrics);

// The rate of a monotonically rising count over the last `window_ms`, from
// samples taken by Sample (e.g. once a second). Thread-safe.
class RateWindow {
 public:
  explicit RateWindow(int64_t window_ms = 60'000) : window_ms_(window_ms) {}
  void Sample(int64_t now_unix_ms, int64_t count) ABSL_LOCKS_EXCLUDED(mu_);
  // Per second, between the oldest sample in the window and the newest;
  // 0 with fewer than two samples.
  double PerSecond() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const int64_t window_ms_;
  mutable absl::Mutex mu_;
  // (time, count), oldest first
  std::deque<std::pair<int64_t, int64_t>> samples_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_METRICS_H_
