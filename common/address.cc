#include "common/address.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

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

bool IsLoopbackAddress(const std::string& address) {
  if (absl::StartsWith(address, "unix:")) return true;
  const size_t colon = address.rfind(':');
  const std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  return host == "localhost" || host == "[::1]" || absl::StartsWith(host, "127.");
}

}  // namespace paradnn::common
