#include "common/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace paradnn::common {

absl::Status ValidateAddress(const std::string& address, const std::string& field) {
  if (absl::StartsWith(address, "unix:")) {
    if (address.size() == 5)
      return absl::InvalidArgumentError(absl::StrCat(field, ": unix: needs a socket path"));
    return absl::OkStatus();
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", address, "' is not HOST:PORT, [V6]:PORT or unix:PATH"));
  }
  int port = -1;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": port in '", address, "' must be a number 0..65535"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveCoordinatorAddress(const std::string& flag_value,
                                                      const std::string& field) {
  std::string address = flag_value;
  std::string source = field;
  if (address.empty()) {
    if (const char* env = std::getenv(kCoordinatorEnv); env != nullptr && *env != '\0') {
      address = env;
      source = kCoordinatorEnv;
    } else {
      address = kDefaultCoordinatorAddress;
    }
  }
  if (absl::Status s = ValidateAddress(address, source); !s.ok()) return s;
  return address;
}

namespace {

// The host of HOST[:PORT] or [V6][:PORT], without the brackets; an
// unbracketed IPv6 literal (several colons) is all host.
std::string HostOf(std::string_view text) {
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    return close == absl::string_view::npos ? "" : std::string(text.substr(1, close - 1));
  }
  const size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
    return std::string(text);
  }
  return std::string(text.substr(0, colon));
}

bool IsLoopbackIp(const in6_addr& v6) {
  return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
}

// 1: a loopback IP literal, 0: another IP literal, -1: not an IP literal.
int LoopbackLiteral(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127 ? 1 : 0;
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IsLoopbackIp(v6) ? 1 : 0;
  return -1;
}

// True when `name` resolves, and only to loopback addresses.
bool ResolvesToLoopbackOnly(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return false;
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      if ((ntohl(v4->sin_addr.s_addr) >> 24) != 127) return false;
    } else if (a->ai_family == AF_INET6) {
      if (!IsLoopbackIp(reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr)) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  if (absl::StartsWith(address, "unix:")) return true;
  const std::string host = HostOf(address);
  if (host.empty()) return false;  // ":PORT": every interface
  const int literal = LoopbackLiteral(host);
  if (literal >= 0) return literal == 1;
  return ResolvesToLoopbackOnly(host);
}

bool IsLoopbackHostHeader(std::string_view host) {
  const std::string name = absl::AsciiStrToLower(HostOf(host));
  return name == "localhost" || name == "localhost." || LoopbackLiteral(name) == 1;
}

std::string PeerHost(absl::string_view grpc_peer) {
  if (absl::StartsWith(grpc_peer, "unix:")) return "127.0.0.1";
  if (absl::ConsumePrefix(&grpc_peer, "ipv4:")) {
    const size_t colon = grpc_peer.rfind(':');
    return colon == absl::string_view::npos ? "" : std::string(grpc_peer.substr(0, colon));
  }
  if (absl::ConsumePrefix(&grpc_peer, "ipv6:")) {
    // "[addr]:port", with %-escapes of a zone ("%25eth0") left as they are.
    const size_t close = grpc_peer.find(']');
    if (!absl::StartsWith(grpc_peer, "[") || close == absl::string_view::npos) return "";
    return std::string(grpc_peer.substr(1, close - 1));
  }
  return "";
}

absl::StatusOr<int> FreeTcpPort(const std::string& ipv4) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (::inet_pton(AF_INET, ipv4.c_str(), &address.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("'", ipv4, "' is not an IPv4 address"));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  socklen_t length = sizeof(address);
  const bool bound =
      ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  ::close(fd);
  if (!bound) {
    return absl::UnavailableError(
        absl::StrCat("binding a TCP port on ", ipv4, ": ", std::strerror(error)));
  }
  return static_cast<int>(ntohs(address.sin_port));
}

}  // namespace paradnn::common
