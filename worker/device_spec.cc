#include "worker/device_spec.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace paradnn::worker {

absl::Status ValidateDevice(const std::string& device) {
  if (device == "cpu" || device == "cuda" || device == "tpu") return absl::OkStatus();
  if (absl::StartsWith(device, "cuda:")) {
    const std::string index = device.substr(5);
    int n = -1;
    // SimpleAtoi accepts "+1" and " 1"; an index is digits only.
    const bool digits =
        !index.empty() && index.find_first_not_of("0123456789") == std::string::npos;
    if (digits && absl::SimpleAtoi(index, &n) && n >= 0 && n <= 1023) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "--device: '", device, "' has no valid GPU index; use cuda:N with N in 0..1023"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--device: '", device, "' is not one of ", kDeviceChoices));
}

std::string DeviceKind(const std::string& device) {
  const size_t colon = device.find(':');
  return colon == std::string::npos ? device : device.substr(0, colon);
}

}  // namespace paradnn::worker
