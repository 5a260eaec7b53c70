// The --device a worker serves: "cpu", "cuda", "cuda:N" or "tpu".
#ifndef PARADNN_WORKER_DEVICE_SPEC_H_
#define PARADNN_WORKER_DEVICE_SPEC_H_

#include <string>

#include "absl/status/status.h"

namespace paradnn::worker {

// Accepted --device values, for messages and --help.
inline constexpr const char* kDeviceChoices = "cpu|cuda|cuda:N|tpu";

// OK for cpu, cuda, cuda:N (N = 0..1023) and tpu; otherwise InvalidArgument
// naming --device and the allowed values.
absl::Status ValidateDevice(const std::string& device);

// The device kind jobs are matched on: "cuda:1" -> "cuda", "cpu" -> "cpu".
std::string DeviceKind(const std::string& device);

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_DEVICE_SPEC_H_
