// DashboardApi answers the coordinator's HTTP requests beyond /metrics: the
// web dashboard's page and scripts (dashboard/, embedded at build time) and
// the small JSON API it reads (docs/dashboard.md):
//   GET  /                                the dashboard
//   GET  /assets/NAME                     its scripts and styles
//   GET  /api/v1/sweeps                   ListSweeps
//   GET  /api/v1/sweeps/ID                GetSweep
//   GET  /api/v1/sweeps/ID/results        QueryResults, as {"rows": [...]}
//                                          (?include_samples=true)
//   GET  /api/v1/workers                  ListWorkers
//   GET  /api/v1/fleet                    FleetGoodput (?sweep=ID, ?window_seconds=S)
//   POST /api/v1/analyze                  Analyze (body: an AnalyzeRequest)
//   POST /api/v1/predict                  Predict (body: a PredictRequest)
// A POST must say Content-Type: application/json (else 415), and a request
// whose Origin is not the dashboard's own (http://HOST) is refused (403):
// another site's page may send simple POSTs and forms here, and must not
// run an analysis with them. (On loopback, MetricsHttpServer already
// refuses a Host that is not loopback, against DNS rebinding.)
//
// Every API route is the Coordinator gRPC method it names, called through
// the server's in-process channel with the request's bearer token, so the
// answer is exactly what a gRPC client gets, under the same client tokens
// and limits; messages are protobuf's JSON mapping with the proto's field
// names. Nothing here changes state: the dashboard is a read-only client.
// A gRPC error becomes the matching HTTP status with
// {"error": {"code": "INVALID_ARGUMENT", "message": "..."}}.
//
// Calls run on threads of their own (never the HTTP thread). Thread-safe.
#ifndef PARADNN_SERVER_DASHBOARD_API_H_
#define PARADNN_SERVER_DASHBOARD_API_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/work_pool.h"
#include "paradnn/v1/coordinator.grpc.pb.h"
#include "server/metrics_http.h"

namespace paradnn::server {

struct DashboardApiOptions {
  // Serve the API at all: false on an address beyond loopback when the
  // coordinator requires no client token (and --insecure was not given):
  // results are not for anyone who can reach the port. The API then answers
  // 403 saying so; the page itself is still served.
  bool api_allowed = true;
  // Requests queued or running before more are answered 503.
  int max_pending = 64;
  // Longest an API call may take (an analysis over many results).
  int deadline_seconds = 120;
};

class DashboardApi {
 public:
  // `channel` reaches the Coordinator service (Server::InProcessChannel).
  DashboardApi(const std::shared_ptr<grpc::Channel>& channel, DashboardApiOptions options);
  // Answers every queued request before it returns.
  ~DashboardApi();
  DashboardApi(const DashboardApi&) = delete;
  DashboardApi& operator=(const DashboardApi&) = delete;

  // MetricsHttpHandlers::other.
  void Handle(HttpRequest request, HttpResponder respond);

 private:
  // The API call for `request` (path below /api/v1/), on a pool thread.
  HttpResponse CallApi(const HttpRequest& request) const;
  HttpResponse PostRoute(const HttpRequest& request, const std::string& route) const;
  HttpResponse GetSweep(const HttpRequest& request, int64_t sweep_id) const;
  HttpResponse GetSweepResults(const HttpRequest& request, int64_t sweep_id) const;
  // The call's deadline and the request's bearer token.
  void Prepare(const HttpRequest& request, grpc::ClientContext* context) const;

  std::unique_ptr<v1::Coordinator::Stub> stub_;
  const DashboardApiOptions options_;
  std::unique_ptr<common::WorkPool> calls_;
};

// The JSON error answer for a gRPC status (also for a request the API
// refuses itself): HTTP status from the code, body {"error": {...}}.
HttpResponse ErrorResponse(const grpc::Status& status);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_DASHBOARD_API_H_
