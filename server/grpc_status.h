#ifndef PARADNN_SERVER_GRPC_STATUS_H_
#define PARADNN_SERVER_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"

namespace paradnn::server {

// The one conversion at the RPC boundary (docs/style.md "Errors"): Abseil's
// codes mean what gRPC's mean, so the code passes through as it is.
inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_GRPC_STATUS_H_
