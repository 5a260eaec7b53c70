#include "server/metrics.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace paradnn::server {
namespace {

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

}  // namespace

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void PrometheusText::Family(const std::string& name, const std::string& type,
                            const std::string& help) {
  // HELP text escapes backslash and newline only.
  std::string escaped;
  for (char c : help) {
    if (c == '\\')
      escaped += "\\\\";
    else if (c == '\n')
      escaped += "\\n";
    else
      escaped += c;
  }
  text_ += "# HELP " + name + " " + escaped + "\n# TYPE " + name + " " + type + "\n";
}

void PrometheusText::Sample(const std::string& name, const Labels& labels, double value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) text_ += ',';
      text_ += labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
    }
    text_ += '}';
  }
  text_ += ' ' + FormatValue(value) + '\n';
}

void RpcMetrics::Observe(const std::string& method, double seconds, int status_code) {
  absl::MutexLock lock(&mu_);
  Histogram& h = histograms_[method];
  size_t i = 0;
  while (i < kRpcLatencyBuckets.size() && seconds > kRpcLatencyBuckets[i]) ++i;
  if (i < kRpcLatencyBuckets.size()) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
  ++calls_[{method, status_code}];
}

void RpcMetrics::Write(PrometheusText* out) const {
  absl::MutexLock lock(&mu_);
  const std::string name = "paradnn_rpc_duration_seconds";
  out->Family(name, "histogram",
              "gRPC call latency by method: arrival to status sent (a stream's whole life)");
  for (const auto& [method, h] : histograms_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kRpcLatencyBuckets.size(); ++i) {
      cumulative += h.buckets[i];
      char le[32];
      std::snprintf(le, sizeof(le), "%g", kRpcLatencyBuckets[i]);
      out->Sample(name + "_bucket", {{"method", method}, {"le", le}},
                  static_cast<double>(cumulative));
    }
    out->Sample(name + "_bucket", {{"method", method}, {"le", "+Inf"}},
                static_cast<double>(h.count));
    out->Sample(name + "_sum", {{"method", method}}, h.sum);
    out->Sample(name + "_count", {{"method", method}}, static_cast<double>(h.count));
  }
  out->Family("paradnn_rpc_calls_total", "counter",
              "gRPC calls finished, by method and status code");
  for (const auto& [key, calls] : calls_) {
    out->Sample("paradnn_rpc_calls_total",
                {{"method", key.first}, {"code", std::to_string(key.second)}},
                static_cast<double>(calls));
  }
}

namespace {

class RpcTimingInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcTimingInterceptor(RpcMetrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)), start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      metrics_->Observe(method_, seconds, static_cast<int>(methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  RpcMetrics* const metrics_;
  const std::string method_;
  const std::chrono::steady_clock::time_point start_;
};

class RpcTimingFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcTimingFactory(RpcMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RpcTimingInterceptor(metrics_, info->method() != nullptr ? info->method() : "");
  }

 private:
  RpcMetrics* const metrics_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeRpcTimingInterceptor(
    RpcMetrics* metrics) {
  return std::make_unique<RpcTimingFactory>(metrics);
}

void RateWindow::Sample(int64_t now_unix_ms, int64_t count) {
  absl::MutexLock lock(&mu_);
  samples_.emplace_back(now_unix_ms, count);
  // Keep one sample at or before the window's start, so the rate spans it.
  while (samples_.size() > 2 && samples_[1].first <= now_unix_ms - window_ms_) samples_.pop_front();
}

double RateWindow::PerSecond() const {
  absl::MutexLock lock(&mu_);
  if (samples_.size() < 2) return 0;
  const auto& [t0, c0] = samples_.front();
  const auto& [t1, c1] = samples_.back();
  if (t1 <= t0) return 0;
  return static_cast<double>(c1 - c0) * 1000.0 / static_cast<double>(t1 - t0);
}

}  // namespace paradnn::server
