#include "common/auth.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/client_interceptor.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace paradnn::common {
namespace {

// Reads `path` whole. A secret (token, private key) readable by every user
// is refused: anyone on the host could act with it.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, absl::string_view field,
                                          bool secret) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": cannot read '", path, "'"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": '", path, "' is not a regular file"));
  }
  if (secret && (st.st_mode & S_IROTH) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", path,
                     "' is readable by every user; it holds a secret (chmod o-r, e.g. 600)"));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.is_open() || in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": cannot read '", path, "'"));
  }
  return text;
}

// Printable ASCII without spaces: what an HTTP/2 header value can carry
// after "Bearer " and what a file line can hold unambiguously.
bool IsTokenText(absl::string_view token) {
  for (char c : token) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return !token.empty();
}

// Sends `authorization: Bearer <token>` with every call of a channel.
class BearerTokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenInterceptor(const std::string* value) : value_(value) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kAuthorizationKey, *value_);
    }
    methods->Proceed();
  }

 private:
  const std::string* const value_;  // owned by the factory, which outlives the call
};

class BearerTokenInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenInterceptorFactory(const std::string& token)
      : value_(absl::StrCat(kBearerPrefix, token)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerTokenInterceptor(&value_);
  }

 private:
  const std::string value_;
};

}  // namespace

absl::StatusOr<std::vector<std::string>> ReadTokenFile(const std::string& path,
                                                       absl::string_view field) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, field, /*secret=*/true);
  if (!text.ok()) return text.status();
  std::vector<std::string> tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    if (!IsTokenText(line)) {
      // The line itself is not echoed: it may be a secret.
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": line ", line_number, " of '", path,
                       "' is not a token (printable ASCII without spaces)"));
    }
    tokens.emplace_back(line);
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", path,
                     "' holds no token (one per line; blank lines and # comments are ignored)"));
  }
  return tokens;
}

absl::StatusOr<std::vector<WorkerToken>> ReadWorkerTokenFile(const std::string& path,
                                                             absl::string_view field) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, field, /*secret=*/true);
  if (!text.ok()) return text.status();
  std::vector<WorkerToken> tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    WorkerToken token;
    for (size_t i = 0; i < words.size(); ++i) {
      const absl::string_view word = absl::StripAsciiWhitespace(words[i]);
      if (!IsTokenText(word)) {
        // The line itself is not echoed: it may be a secret.
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": line ", line_number, " of '", path, "' is not a token ",
            i == 0 ? "" : "followed by worker ids ",
            "(printable ASCII without spaces; worker ids after the token, space-separated)"));
      }
      if (i == 0) {
        token.token = std::string(word);
      } else {
        token.worker_ids.emplace_back(word);
      }
    }
    tokens.push_back(std::move(token));
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", path,
                     "' holds no token (one per line; blank lines and # comments are ignored)"));
  }
  return tokens;
}

namespace {

// Glob match with '*' only, iterative with one backtrack point.
bool GlobMatches(absl::string_view pattern, absl::string_view text) {
  size_t p = 0, t = 0, star = absl::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool WorkerIdAllowed(const std::vector<std::string>& patterns, absl::string_view worker_id) {
  if (patterns.empty()) return true;
  for (const std::string& pattern : patterns) {
    if (GlobMatches(pattern, worker_id)) return true;
  }
  return false;
}

std::string TrustDomainOf(std::vector<std::string> patterns) {
  std::sort(patterns.begin(), patterns.end());
  patterns.erase(std::unique(patterns.begin(), patterns.end()), patterns.end());
  return absl::StrJoin(patterns, ",");
}

bool ConstantTimeEquals(absl::string_view given, absl::string_view expected) {
  // Every byte of `expected` is visited whatever `given` holds; a length
  // mismatch only sets a bit.
  volatile unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff = diff | (g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

absl::StatusOr<ClientSecurity> LoadClientSecurity(const ClientSecurityFlags& flags) {
  ClientSecurity security;
  if (!flags.token_file.empty()) {
    absl::StatusOr<std::vector<std::string>> tokens =
        ReadTokenFile(flags.token_file, "--token-file");
    if (!tokens.ok()) return tokens.status();
    if (tokens->size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file: '", flags.token_file, "' holds ", tokens->size(),
                       " tokens; a worker or client sends exactly one"));
    }
    security.token = tokens->front();
  } else if (const char* env = std::getenv(kTokenEnv); env != nullptr && *env != '\0') {
    const std::string token(absl::StripAsciiWhitespace(env));
    if (!IsTokenText(token)) {
      return absl::InvalidArgumentError(
          absl::StrCat("$", kTokenEnv, " is not a token (printable ASCII without spaces)"));
    }
    security.token = token;
  }
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together (a client certificate "
        "and its private key)");
  }
  if (!flags.tls_cert.empty() && flags.tls_ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert/--tls-key need --tls-ca (the CA that signed the coordinator's certificate)");
  }
  if (!flags.tls_ca.empty()) {
    security.tls = true;
    absl::StatusOr<std::string> ca = ReadWholeFile(flags.tls_ca, "--tls-ca", /*secret=*/false);
    if (!ca.ok()) return ca.status();
    security.tls_ca_pem = *std::move(ca);
    if (!flags.tls_cert.empty()) {
      absl::StatusOr<std::string> cert = ReadWholeFile(flags.tls_cert, "--tls-cert", false);
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadWholeFile(flags.tls_key, "--tls-key", true);
      if (!key.ok()) return key.status();
      security.tls_cert_pem = *std::move(cert);
      security.tls_key_pem = *std::move(key);
    }
  }
  return security;
}

std::shared_ptr<grpc::Channel> CreateSecureChannel(const std::string& target,
                                                   const ClientSecurity& security,
                                                   const grpc::ChannelArguments& args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (security.tls) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = security.tls_ca_pem;
    options.pem_cert_chain = security.tls_cert_pem;
    options.pem_private_key = security.tls_key_pem;
    credentials = grpc::SslCredentials(options);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  if (security.token.empty()) return grpc::CreateCustomChannel(target, credentials, args);
  // An interceptor rather than call credentials: gRPC sends call credentials
  // only over secure channels, and a token must also work in plaintext
  // (beyond loopback it then needs --insecure on the coordinator).
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<BearerTokenInterceptorFactory>(security.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, args,
                                                                 std::move(interceptors));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> LoadServerCredentials(
    const ServerTlsFlags& flags) {
  if (flags.cert.empty() && flags.key.empty() && flags.client_ca.empty()) {
    return grpc::InsecureServerCredentials();
  }
  if (flags.cert.empty() && flags.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-client-ca needs --tls-cert and --tls-key (client certificates are checked over "
        "TLS)");
  }
  if (flags.cert.empty() || flags.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together (the coordinator's certificate and its private key)");
  }
  absl::StatusOr<std::string> cert = ReadWholeFile(flags.cert, "--tls-cert", /*secret=*/false);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadWholeFile(flags.key, "--tls-key", /*secret=*/true);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  if (!flags.client_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadWholeFile(flags.client_ca, "--tls-client-ca", false);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

void AddClientSecurityOptions(CLI::App* app, ClientSecurityFlags* flags, const std::string& who) {
  app->add_option("--token-file", flags->token_file,
                  absl::StrCat("File holding this ", who,
                               "'s token (one line; not readable by "
                               "every user), sent as 'authorization: Bearer' with every call "
                               "(default: $",
                               kTokenEnv, ")"))
      ->check(CLI::ExistingFile);
  app->add_option("--tls-ca", flags->tls_ca,
                  "Connect with TLS, trusting this CA (PEM) for the coordinator's certificate")
      ->check(CLI::ExistingFile);
  app->add_option("--tls-cert", flags->tls_cert,
                  absl::StrCat("This ", who,
                               "'s certificate (PEM), for a coordinator with "
                               "--tls-client-ca; needs --tls-key and --tls-ca"))
      ->check(CLI::ExistingFile);
  app->add_option("--tls-key", flags->tls_key,
                  "The certificate's private key (PEM, not readable by every user)")
      ->check(CLI::ExistingFile);
}

}  // namespace paradnn::common
