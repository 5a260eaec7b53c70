// Coordinator: the client-facing service (callback API). Submissions are
// validated again here (clients are not trusted) against the one family
// table (model/), expanded into shuffled jobs, each described by model/'s
// counts (parameters, model FLOPs, peak memory estimate; a configuration
// the counts cannot parse refuses the sweep with its error), and stored in
// one transaction; the response sums the estimates up. Planning, analyses
// and every database read a call waits on run on the service's own threads
// (common::WorkPool), never on a gRPC callback thread or the database
// writer. Watchers are pushed a new status whenever the scheduler reports a
// change.
#ifndef PARADNN_SERVER_COORDINATOR_SERVICE_H_
#define PARADNN_SERVER_COORDINATOR_SERVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/work_pool.h"
#include "db/database.h"
#include "db/model_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "db/worker_store.h"
#include "paradnn/v1/coordinator.grpc.pb.h"
#include "server/analysis/analyzer.h"
#include "server/call_authorizer.h"
#include "server/fleet_goodput.h"
#include "server/scheduler.h"
#include "server/sweep_planner.h"

namespace paradnn::server {

struct CoordinatorOptions {
  int64_t max_jobs_per_sweep = 100000;
  // Least time between two status pushes to one watcher.
  int64_t watch_min_interval_ms = 100;
  // Largest TorchScript model (family torchscript) accepted at submit.
  int64_t max_model_bytes = int64_t{256} << 20;
  // Analyses computed at once (on threads of their own, off the gRPC
  // callback threads); more are refused with RESOURCE_EXHAUSTED.
  int max_concurrent_analyses = 4;
  // Checks every call's client token; null lets every call through. Must
  // outlive the service.
  const CallAuthorizer* authorizer = nullptr;
  // Worker connection spans for FleetGoodput's scheduling share; null: only
  // each worker's latest connection (the database's) counts. Must outlive
  // the service.
  const ConnectionLedger* ledger = nullptr;
};

class SweepWatch;

class CoordinatorService final : public v1::Coordinator::CallbackService {
 public:
  // `database`, `scheduler` and `clock` must outlive the service.
  CoordinatorService(db::Database* database, Scheduler* scheduler, const common::Clock* clock,
                     CoordinatorOptions options);
  ~CoordinatorService() override;

  grpc::ServerUnaryReactor* SubmitSweep(grpc::CallbackServerContext* context,
                                        const v1::SubmitSweepRequest* request,
                                        v1::SubmitSweepResponse* response) override;
  grpc::ServerUnaryReactor* GetSweep(grpc::CallbackServerContext* context,
                                     const v1::GetSweepRequest* request,
                                     v1::SweepStatus* response) override;
  grpc::ServerUnaryReactor* ListSweeps(grpc::CallbackServerContext* context,
                                       const v1::ListSweepsRequest* request,
                                       v1::ListSweepsResponse* response) override;
  grpc::ServerUnaryReactor* CancelSweep(grpc::CallbackServerContext* context,
                                        const v1::CancelSweepRequest* request,
                                        v1::SweepStatus* response) override;
  grpc::ServerWriteReactor<v1::SweepStatus>* WatchSweep(
      grpc::CallbackServerContext* context, const v1::WatchSweepRequest* request) override;
  grpc::ServerWriteReactor<v1::ResultRow>* QueryResults(
      grpc::CallbackServerContext* context, const v1::QueryResultsRequest* request) override;
  grpc::ServerUnaryReactor* ListWorkers(grpc::CallbackServerContext* context,
                                        const v1::ListWorkersRequest* request,
                                        v1::ListWorkersResponse* response) override;
  grpc::ServerUnaryReactor* Analyze(grpc::CallbackServerContext* context,
                                    const v1::AnalyzeRequest* request,
                                    v1::AnalyzeResponse* response) override;
  grpc::ServerUnaryReactor* FleetGoodput(grpc::CallbackServerContext* context,
                                         const v1::FleetGoodputRequest* request,
                                         v1::FleetGoodputResponse* response) override;
  grpc::ServerReadReactor<v1::FleetEventLines>* IngestFleetEvents(
      grpc::CallbackServerContext* context, v1::IngestFleetEventsResponse* response) override;
  grpc::ServerUnaryReactor* FleetReport(grpc::CallbackServerContext* context,
                                        const v1::FleetReportRequest* request,
                                        v1::FleetReportResponse* response) override;
  grpc::ServerUnaryReactor* Predict(grpc::CallbackServerContext* context,
                                    const v1::PredictRequest* request,
                                    v1::PredictResponse* response) override;

  // Something changed: push fresh statuses to watchers (on the notifier
  // thread, so the caller — often the database writer — never waits).
  void NotifyWatchers() ABSL_LOCKS_EXCLUDED(watch_mu_);

  // Watchers register themselves for their lifetime.
  void AddWatch(SweepWatch* watch) ABSL_LOCKS_EXCLUDED(watch_mu_);
  void RemoveWatch(SweepWatch* watch) ABSL_LOCKS_EXCLUDED(watch_mu_);

  // Where SweepStatus.model_seconds_left comes from (the budget planner's
  // estimates); set before the service serves. Unset: never filled.
  void SetSecondsLeftSource(std::function<std::optional<double>(int64_t sweep_id)> source) {
    seconds_left_ = std::move(source);
  }
  // A sweep's stored status with the model's estimate of its time left.
  absl::StatusOr<v1::SweepStatus> SweepStatusOf(int64_t sweep_id) const;

  db::SweepStore& sweeps() { return sweeps_; }
  const common::Clock& clock() const { return *clock_; }

 private:
  // OK, or why the call may not use this service (options_.authorizer).
  grpc::Status AuthorizeClient(const grpc::CallbackServerContext& context) const;
  // Every client call begins here, so that none skips AuthorizeClient.
  // StartUnary runs `body(reactor)`, which finishes the call's reactor now
  // or later, when the client may use this service, and otherwise finishes
  // it with the refusal; it returns the reactor. StartStream returns the
  // reactor `start()` makes, or a RefusedCall.
  template <typename Body>
  grpc::ServerUnaryReactor* StartUnary(grpc::CallbackServerContext* context, Body body) const;
  template <typename Reactor, typename Start>
  Reactor* StartStream(grpc::CallbackServerContext* context, Start start) const;
  // StartUnary whose body runs `compute` (returning StatusOr<Response>) on
  // a query thread and finishes the call with its answer.
  template <typename Response, typename Compute>
  grpc::ServerUnaryReactor* AnswerOnQueryThread(grpc::CallbackServerContext* context,
                                                Response* response, Compute compute);
  void NotifierLoop() ABSL_LOCKS_EXCLUDED(watch_mu_);
  // SubmitSweep's work after the call's own checks, on the planning thread;
  // finishes `reactor`.
  // ListWorkers' work on a query thread: the stored workers with the
  // scheduler's live state; finishes `reactor`.
  void ListWorkersNow(v1::ListWorkersResponse* response, grpc::ServerUnaryReactor* reactor);
  void PlanAndStoreSweep(const v1::SubmitSweepRequest& request, int64_t max_jobs,
                         v1::SubmitSweepResponse* response, grpc::ServerUnaryReactor* reactor);

  db::Database* const database_;
  Scheduler* const scheduler_;
  const common::Clock* const clock_;
  const CoordinatorOptions options_;
  db::SweepStore sweeps_;
  db::ResultStore results_;
  db::WorkerStore workers_;
  db::ModelStore models_;
  analysis::Analyzer analyzer_;
  std::function<std::optional<double>(int64_t)> seconds_left_;

  // The notifier pokes the watches under it, so a watch is not deleted
  // meanwhile (SweepWatch::OnDone removes itself first).
  absl::Mutex watch_mu_;
  absl::CondVar watch_cv_;  // change_pending_ or stopping_ set
  std::set<SweepWatch*> watches_ ABSL_GUARDED_BY(watch_mu_);
  bool change_pending_ ABSL_GUARDED_BY(watch_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(watch_mu_) = false;
  std::thread notifier_;
  // Sweep planning (one thread: sweeps are stored in the order they came),
  // analyses (max_concurrent_analyses threads; more are refused) and the
  // other reads calls wait on (sweeps, workers, results, fleet goodput; two
  // threads, queued). The destructor drains them before it stops the
  // notifier.
  std::unique_ptr<common::WorkPool> planning_;
  std::unique_ptr<common::WorkPool> analyses_;
  std::unique_ptr<common::WorkPool> queries_;
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_COORDINATOR_SERVICE_H_
