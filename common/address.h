// Where the coordinator is: --coordinator, else $PARADNN_COORDINATOR, else
// the loopback default. Accepts HOST:PORT, [V6]:PORT and unix:PATH.
#ifndef PARADNN_COMMON_ADDRESS_H_
#define PARADNN_COMMON_ADDRESS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paradnn::common {

inline constexpr const char* kDefaultCoordinatorAddress = "127.0.0.1:7070";
inline constexpr const char* kCoordinatorEnv = "PARADNN_COORDINATOR";

// Returns the gRPC target for `flag_value` (may be empty), or InvalidArgument
// naming `field` when the address has no port or an empty unix path.
absl::StatusOr<std::string> ResolveCoordinatorAddress(const std::string& flag_value,
                                                      const std::string& field = "--coordinator");

// Validates a listen/target address ("HOST:PORT", "[V6]:PORT", "unix:PATH").
absl::Status ValidateAddress(const std::string& address, const std::string& field);

// True when `address` listens only on this host: a unix socket, a loopback
// IP literal (127.0.0.0/8, ::1, ::ffff:127.x.x.x), or a name that resolves
// (getaddrinfo) to loopback addresses only. Text that merely begins like one
// ("127.invalid:80") is not.
bool IsLoopbackAddress(const std::string& address);

// True when `host` (an HTTP Host header: HOST[:PORT] or [V6][:PORT]) names
// this host without a lookup: a loopback IP literal or "localhost". A name
// that resolves to loopback is not: DNS rebinding points a web page's own
// name at 127.0.0.1 to reach a loopback server from the page.
bool IsLoopbackHostHeader(std::string_view host);

// The host a peer of a gRPC call can be reached at, from grpc's peer string:
// "ipv4:10.0.0.5:41234" -> "10.0.0.5", "ipv6:[fd00::5]:41234" -> "fd00::5",
// "unix:..." (a peer on this host) -> "127.0.0.1"; "" when unreadable.
std::string PeerHost(absl::string_view grpc_peer);

// A TCP port free now on the IPv4 address `ipv4` ("0.0.0.0": every
// interface): bound to port 0, read back, closed. Free now, not reserved:
// another process may take it before its user binds it.
absl::StatusOr<int> FreeTcpPort(const std::string& ipv4 = "127.0.0.1");

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_ADDRESS_H_
