// WorkerGateway: one bidirectional stream per worker (callback API). The
// reactor only moves messages between the stream and the Scheduler; it never
// blocks: a hello, which reads the worker's open attempts from the
// database, is handed to the service's hello threads.
#ifndef PARADNN_SERVER_WORKER_GATEWAY_SERVICE_H_
#define PARADNN_SERVER_WORKER_GATEWAY_SERVICE_H_

#include <atomic>
#include <memory>

#include "common/work_pool.h"
#include "paradnn/v1/coordinator.grpc.pb.h"
#include "server/call_authorizer.h"
#include "server/fleet_goodput.h"
#include "server/scheduler.h"

namespace paradnn::server {

class WorkerGatewayService final : public v1::WorkerGateway::CallbackService {
 public:
  // `scheduler`, `authorizer` and `ledger` must outlive the service; a null
  // `authorizer` lets every call through. `ledger` (may be null) is told
  // when each worker's stream opens (after its hello) and closes.
  explicit WorkerGatewayService(Scheduler* scheduler, const CallAuthorizer* authorizer = nullptr,
                                ConnectionLedger* ledger = nullptr)
      : scheduler_(scheduler),
        authorizer_(authorizer),
        ledger_(ledger),
        hellos_(std::make_unique<common::WorkPool>(2, "hellos")) {}

  grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage>* Connect(
      grpc::CallbackServerContext* context) override;

 private:
  Scheduler* const scheduler_;
  const CallAuthorizer* const authorizer_;
  ConnectionLedger* const ledger_;
  std::atomic<uint64_t> next_stream_serial_{1};
  // Hellos in flight; the destructor runs the queued ones (their streams
  // then finish).
  std::unique_ptr<common::WorkPool> hellos_;
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_WORKER_GATEWAY_SERVICE_H_
