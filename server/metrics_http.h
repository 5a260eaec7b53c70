// MetricsHttpServer: the coordinator's plain-HTTP endpoint (Boost.Beast) on
// its own thread and io_context, so a slow scrape never delays the lease
// timer or gRPC:
//   GET /metrics  Prometheus text exposition (text/plain; version=0.0.4)
//   GET /healthz  200 "ok" while the process serves HTTP at all
//   GET /readyz   200 "ready", or 503 with the reason (draining, database)
// Any other path goes to the `other` handler when there is one (the
// dashboard and its JSON API, server/dashboard_api.h), else is 404 (405 for
// a method other than GET/HEAD). One request per connection; a connection
// idle for 10 s is closed. Listening on loopback, it answers only requests
// addressed to loopback (Host 127.x.x.x, [::1] or localhost, any port): a
// web page that reaches it through a name of its own (DNS rebinding) gets
// 403 (common::IsLoopbackHostHeader).
#ifndef PARADNN_SERVER_METRICS_HTTP_H_
#define PARADNN_SERVER_METRICS_HTTP_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace paradnn::server {

// A request for the `other` handler.
struct HttpRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string path;    // the target up to '?'
  std::string query;   // after '?', not decoded
  std::string body;
  std::string authorization;  // the Authorization header; "" if none
  std::string host;           // the Host header; "" if none
  std::string origin;         // the Origin header (browsers send it); "" if none
  std::string content_type;   // the Content-Type header; "" if none
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // more fields
};

// Answers one request, exactly once, from any thread.
using HttpResponder = std::function<void(HttpResponse)>;

struct MetricsHttpHandlers {
  // The /metrics body. Called on the server's thread.
  std::function<std::string()> metrics;
  // "" when ready, else why not (the 503 body).
  std::function<std::string()> not_ready_reason;
  // Every other path, any method. Called on the server's thread, so it must
  // not block: slow work answers later through the responder. A responder
  // called after Stop() answers nobody; every responder must have been
  // called or dropped before the server is destroyed.
  std::function<void(HttpRequest, HttpResponder)> other;
};

// "" while fewer than `share` of this process's file descriptors
// (RLIMIT_NOFILE) are open, else "file descriptors: N of M open; new
// connections may be refused" (a /readyz reason).
std::string FileDescriptorPressure(double share);

class MetricsHttpServer {
 public:
  // Listens on `host_port` (HOST:PORT, IPv4 or [IPv6]; port 0 picks one)
  // and starts serving. InvalidArgument naming --metrics-listen for a bad
  // address, Unavailable if it cannot bind.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const std::string& host_port,
                                                                  MetricsHttpHandlers handlers);
  // Stops (closing open connections) and joins the thread.
  ~MetricsHttpServer();
  void Stop();
  // The bound port.
  int port() const;

  struct Impl;

 private:
  explicit MetricsHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_METRICS_HTTP_H_
