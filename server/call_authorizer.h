// CallAuthorizer decides whether a call may reach a service: it reads the
// bearer token of the call's `authorization` metadata and knows which tokens
// belong to workers (WorkerGateway) and which to clients (Coordinator).
//
// The services ask it at the start of every method, before touching any
// state. (An AuthMetadataProcessor would be the gRPC-native place, but
// InsecureServerCredentials cannot take one (gRPC 1.51 aborts), and tokens
// must also guard a plaintext listener; a server interceptor cannot fail a
// call.)
// gRPC's health and reflection services are not asked: they stay open.
#ifndef PARADNN_SERVER_CALL_AUTHORIZER_H_
#define PARADNN_SERVER_CALL_AUTHORIZER_H_

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/auth.h"

namespace paradnn::server {

enum class CallerRole { kWorker, kClient };

class CallAuthorizer {
 public:
  // Requires no token: every call is allowed (the loopback default).
  CallAuthorizer() = default;
  // Requires a token of the method's role. Both lists must be non-empty.
  CallAuthorizer(std::vector<std::string> worker_tokens, std::vector<std::string> client_tokens);
  // The same, each worker token with the worker ids it may use.
  CallAuthorizer(std::vector<common::WorkerToken> worker_tokens,
                 std::vector<std::string> client_tokens);

  bool requires_tokens() const { return requires_tokens_; }

  // OK when tokens are not required or the call carries a token of `role`;
  // UNAUTHENTICATED when it carries none or one nobody holds;
  // PERMISSION_DENIED when it carries the other role's token. Tokens are
  // compared in constant time. Thread-safe.
  grpc::Status Authorize(const grpc::ServerContextBase& context, CallerRole role) const;

  // The worker-id patterns the call's worker token allows (empty: any id,
  // also when tokens are not required). Call after Authorize(kWorker).
  std::vector<std::string> WorkerIdsOf(const grpc::ServerContextBase& context) const;

 private:
  // The bearer token of the call; "" if none.
  static absl::string_view TokenOf(const grpc::ServerContextBase& context);

  bool requires_tokens_ = false;
  std::vector<std::string> worker_tokens_;
  std::vector<std::vector<std::string>> worker_ids_;  // per worker token
  std::vector<std::string> client_tokens_;
};

// A reactor that ends a streaming call with `status` at once and deletes
// itself when done: what a streaming method returns for a refused call.
template <typename Reactor>
class RefusedCall final : public Reactor {
 public:
  explicit RefusedCall(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_CALL_AUTHORIZER_H_
