#include "server/call_authorizer.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "common/auth.h"

namespace paradnn::server {
namespace {

// True when any of `tokens` equals `given`. Visits every token whatever
// matches, so the time says nothing about which one (or how much of it) did.
bool HoldsToken(const std::vector<std::string>& tokens, absl::string_view given) {
  bool found = false;
  for (const std::string& token : tokens) found |= common::ConstantTimeEquals(given, token);
  return found;
}

const char* ServiceOf(CallerRole role) {
  return role == CallerRole::kWorker ? "WorkerGateway" : "Coordinator";
}

}  // namespace

CallAuthorizer::CallAuthorizer(std::vector<std::string> worker_tokens,
                               std::vector<std::string> client_tokens)
    : requires_tokens_(true),
      worker_tokens_(std::move(worker_tokens)),
      worker_ids_(worker_tokens_.size()),
      client_tokens_(std::move(client_tokens)) {}

CallAuthorizer::CallAuthorizer(std::vector<common::WorkerToken> worker_tokens,
                               std::vector<std::string> client_tokens)
    : requires_tokens_(true), client_tokens_(std::move(client_tokens)) {
  for (common::WorkerToken& token : worker_tokens) {
    worker_tokens_.push_back(std::move(token.token));
    worker_ids_.push_back(std::move(token.worker_ids));
  }
}

absl::string_view CallAuthorizer::TokenOf(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(common::kAuthorizationKey);
  if (it == metadata.end()) return "";
  const absl::string_view value(it->second.data(), it->second.size());
  const absl::string_view prefix(common::kBearerPrefix);
  if (value.size() <= prefix.size() || !absl::StartsWithIgnoreCase(value, prefix)) return "";
  return value.substr(prefix.size());
}

std::vector<std::string> CallAuthorizer::WorkerIdsOf(const grpc::ServerContextBase& context) const {
  if (!requires_tokens_) return {};
  const absl::string_view token = TokenOf(context);
  // Every token is compared, as in HoldsToken.
  std::vector<std::string> allowed;
  bool found = false;
  for (size_t i = 0; i < worker_tokens_.size(); ++i) {
    if (common::ConstantTimeEquals(token, worker_tokens_[i]) && !found) {
      found = true;
      allowed = worker_ids_[i];
    }
  }
  return allowed;
}

grpc::Status CallAuthorizer::Authorize(const grpc::ServerContextBase& context,
                                       CallerRole role) const {
  if (!requires_tokens_) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(common::kAuthorizationKey);
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this coordinator requires a token ('authorization: Bearer <token>' "
                        "metadata)");
  }
  const absl::string_view value(it->second.data(), it->second.size());
  // The scheme is case-insensitive (RFC 7235).
  const absl::string_view prefix(common::kBearerPrefix);
  if (value.size() <= prefix.size() || !absl::StartsWithIgnoreCase(value, prefix)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the authorization metadata is not 'Bearer <token>'");
  }
  const absl::string_view token = value.substr(prefix.size());
  const bool worker = HoldsToken(worker_tokens_, token);
  const bool client = HoldsToken(client_tokens_, token);
  const bool mine = role == CallerRole::kWorker ? worker : client;
  if (mine) return grpc::Status::OK;
  if (worker || client) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        std::string("a ") + (worker ? "worker" : "client") +
                            " token may not call the " + ServiceOf(role) + " service; it needs a " +
                            (role == CallerRole::kWorker ? "worker" : "client") + " token");
  }
  // The token is not echoed: it may be a real one sent to the wrong place.
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the token is not valid here");
}

}  // namespace paradnn::server
