#include "worker/rendezvous_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/address.h"
#include "common/subprocess.h"

namespace paradnn::worker {
namespace {

constexpr char kPortRule[] =
    "allowed: 1..65535, or 0 to take a free port at start-up (a firewall or Kubernetes needs a "
    "fixed one)";

// A TCP socket bound to `port` (0: any free one) on every IPv4 interface,
// with SO_REUSEADDR as the runner's store sets it; errno on failure.
absl::StatusOr<common::ScopedFd> BindEverywhere(int port) {
  common::ScopedFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  const int on = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return absl::UnavailableError(std::strerror(errno));
  }
  return fd;
}

}  // namespace

absl::StatusOr<int> ResolveRendezvousPort(int64_t requested) {
  if (requested < 0 || requested > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rendezvous-port: ", requested, " is out of range; ", kPortRule));
  }
  if (requested > 0) return static_cast<int>(requested);
  // The port is free now, not reserved: another process could in principle
  // take it before a gang this worker leads uses it. That gang's
  // rendezvous then fails, its ranks end GANG_BROKEN and the coordinator
  // retries the job as a gang. A fixed port avoids even that.
  absl::StatusOr<int> port = common::FreeTcpPort("0.0.0.0");
  if (!port.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "--rendezvous-port 0: cannot bind a TCP port to choose one: ", port.status().message()));
  }
  return *port;
}

absl::Status CheckRendezvousPortFree(int port) {
  absl::StatusOr<common::ScopedFd> fd = BindEverywhere(port);
  if (fd.ok()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "--rendezvous-port: TCP port ", port, " cannot be bound now (", fd.status().message(),
      "); a gang this worker leads cannot meet there until it is free (give each worker on a "
      "host its own port)"));
}

absl::Status ValidateAdvertiseAddress(const std::string& address) {
  if (address.empty()) return absl::OkStatus();
  const bool odd_character = std::any_of(address.begin(), address.end(), [](char c) {
    return absl::ascii_isspace(static_cast<unsigned char>(c)) || !absl::ascii_isprint(c) ||
           c == '/' || c == '[' || c == ']';
  });
  if (address.size() > 253 || odd_character) {
    return absl::InvalidArgumentError(
        absl::StrCat("--advertise-address: '", address,
                     "' is not a host name or IP address (at most 253 characters, no spaces, "
                     "slashes or brackets; an IPv6 address without brackets)"));
  }
  in6_addr ipv6{};
  if (address.find(':') != std::string::npos &&
      ::inet_pton(AF_INET6, address.c_str(), &ipv6) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--advertise-address: '", address,
                     "' is neither a host name nor an IPv6 address; give the host alone (the "
                     "port is --rendezvous-port)"));
  }
  return absl::OkStatus();
}

}  // namespace paradnn::worker
