// Who may call the coordinator, and how a caller proves it: bearer tokens
// read from files (never from command lines), TLS certificates read from PEM
// files, and the channel every client (CLI, worker) opens with them.
//
// A token travels as `authorization: Bearer <token>` metadata on every call;
// the coordinator tells worker tokens from client tokens (server/
// call_authorizer.h). Nothing here logs a token.
#ifndef PARADNN_COMMON_AUTH_H_
#define PARADNN_COMMON_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace CLI {
class App;
}  // namespace CLI

namespace paradnn::common {

// The token a worker or the CLI sends when no --token-file is given.
inline constexpr const char* kTokenEnv = "PARADNN_TOKEN";
// The metadata key and the value's prefix.
inline constexpr const char* kAuthorizationKey = "authorization";
inline constexpr const char* kBearerPrefix = "Bearer ";

// Reads the tokens in `path`: one per line, surrounding whitespace trimmed,
// blank lines and lines starting with '#' ignored. InvalidArgument naming
// `field` when the file cannot be read, holds no token, is readable by every
// user (it holds secrets: chmod 600), or a token has characters other than
// printable ASCII without spaces (it must fit in an HTTP/2 header).
absl::StatusOr<std::vector<std::string>> ReadTokenFile(const std::string& path,
                                                       absl::string_view field);

// A worker token and the worker ids it may say hello as: patterns where
// '*' matches any run of characters ("gpu-host-7-*"); empty = any id.
struct WorkerToken {
  std::string token;
  std::vector<std::string> worker_ids;
};

// Reads a worker token file: as ReadTokenFile, except that a token may be
// followed, after spaces, by the worker ids it may use ("TOKEN host-a-*
// host-b-cpu"), so that a token stolen from one host cannot report for
// another. InvalidArgument naming `field` and the line for a pattern with
// characters other than printable ASCII.
absl::StatusOr<std::vector<WorkerToken>> ReadWorkerTokenFile(const std::string& path,
                                                             absl::string_view field);

// Whether `worker_id` matches one of `patterns` ('*' = any run; an empty
// list matches every id).
bool WorkerIdAllowed(const std::vector<std::string>& patterns, absl::string_view worker_id);

// The trust domain of a worker whose token allows `patterns`
// (docs/security.md, "Whose results are reused"): the patterns, sorted and
// joined by ','; "" for an unrestricted token or none (the operator's own
// fleet). Results are reused, and platform rows shared, only within one.
std::string TrustDomainOf(std::vector<std::string> patterns);

// Equal contents, in a time that does not depend on where they differ (it
// depends on the length of `expected` only).
bool ConstantTimeEquals(absl::string_view given, absl::string_view expected);

// Where a client's credentials come from (its command-line flags). Files
// only: a secret on a command line shows in `ps` and in shell history.
struct ClientSecurityFlags {
  std::string token_file;  // --token-file; else $PARADNN_TOKEN; else none
  std::string tls_ca;      // --tls-ca: trust this CA for the server; switches to TLS
  std::string tls_cert;    // --tls-cert/--tls-key: this client's certificate (TLS only)
  std::string tls_key;
};

// Declares --token-file, --tls-ca, --tls-cert and --tls-key on `app` into
// `flags`; `who` ("client", "worker") names the caller in the help texts.
void AddClientSecurityOptions(CLI::App* app, ClientSecurityFlags* flags, const std::string& who);

// What a client sends and trusts. Default: plaintext, no token.
struct ClientSecurity {
  std::string token;  // empty: no authorization metadata
  bool tls = false;
  std::string tls_ca_pem;
  std::string tls_cert_pem;
  std::string tls_key_pem;
};

// Loads `flags` (the token file must hold exactly one token). InvalidArgument
// naming the flag for an unreadable or malformed file (a key or token file
// readable by every user included), a bad $PARADNN_TOKEN, --tls-cert without
// --tls-key (or the reverse), or either without --tls-ca.
absl::StatusOr<ClientSecurity> LoadClientSecurity(const ClientSecurityFlags& flags);

// A channel to `target` with `security`: SSL credentials when security.tls,
// else plaintext; every call carries the token when there is one.
std::shared_ptr<grpc::Channel> CreateSecureChannel(const std::string& target,
                                                   const ClientSecurity& security,
                                                   const grpc::ChannelArguments& args);

// The coordinator's TLS files (--tls-cert, --tls-key, --tls-client-ca).
struct ServerTlsFlags {
  std::string cert;
  std::string key;
  std::string client_ca;  // when set, clients must present a certificate it signed
};

// Plaintext credentials when `flags` names no files, else SSL credentials.
// InvalidArgument naming the flag for an unreadable file, a certificate
// without its key (or the reverse), --tls-client-ca without a certificate,
// or a key file readable by every user.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> LoadServerCredentials(
    const ServerTlsFlags& flags);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_AUTH_H_
