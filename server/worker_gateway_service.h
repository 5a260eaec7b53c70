// WorkerGateway: one bidirectional stream per worker (callback API). The
// reactor only moves messages between the stream and the Scheduler; it never
// blocks.
#ifndef PARADNN_SERVER_WORKER_GATEWAY_SERVICE_H_
#define PARADNN_SERVER_WORKER_GATEWAY_SERVICE_H_

#include <atomic>

#include "paradnn/v1/coordinator.grpc.pb.h"
#include "server/call_authorizer.h"
#include "server/scheduler.h"

namespace paradnn::server {

class WorkerGatewayService final : public v1::WorkerGateway::CallbackService {
 public:
  // `scheduler` and `authorizer` must outlive the service; a null
  // `authorizer` lets every call through.
  explicit WorkerGatewayService(Scheduler* scheduler, const CallAuthorizer* authorizer = nullptr)
      : scheduler_(scheduler), authorizer_(authorizer) {}

  grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage>* Connect(
      grpc::CallbackServerContext* context) override;

 private:
  Scheduler* const scheduler_;
  const CallAuthorizer* const authorizer_;
  std::atomic<uint64_t> next_stream_serial_{1};
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_WORKER_GATEWAY_SERVICE_H_
