// grpc.health.v1.Health/Check against a real server, without the health
// proto: the request and response are small enough to encode by hand.
#ifndef PARADNN_TESTS_SUPPORT_HEALTH_CHECK_H_
#define PARADNN_TESTS_SUPPORT_HEALTH_CHECK_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace paradnn::testing {

// grpc.health.v1.HealthCheckResponse.ServingStatus values.
inline constexpr int kServing = 1;
inline constexpr int kNotServing = 2;

// Checks the whole server (service ""), without a token. Returns the call's
// status and sets `serving` to the response's status field (-1 when the call
// failed or the response was not understood).
inline grpc::Status HealthCheck(const std::shared_ptr<grpc::Channel>& channel, int* serving) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  grpc::CompletionQueue queue;
  // HealthCheckRequest{service: ""} encodes to no bytes.
  grpc::Slice empty;
  grpc::ByteBuffer request(&empty, 1);
  auto call = stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request, &queue);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  queue.Next(&tag, &ok);
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (status.ok() && response.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  // HealthCheckResponse{status: N} is field 1, varint: 0x08 N.
  *serving = bytes.size() == 2 && bytes[0] == 0x08 ? bytes[1] : -1;
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  return status;
}

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_SUPPORT_HEALTH_CHECK_H_
