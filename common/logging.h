// One-time spdlog set-up for a binary's main(); libraries only log.
#ifndef PARADNN_COMMON_LOGGING_H_
#define PARADNN_COMMON_LOGGING_H_

#include <string>

#include "absl/status/status.h"

namespace paradnn::common {

// Accepted --log-level values.
inline constexpr const char* kLogLevels = "trace|debug|info|warn|error|critical|off";

// Logs to stderr as "[time] [program] [level] message" at `level`.
// Returns InvalidArgument naming --log-level for an unknown level.
absl::Status ConfigureLogging(const std::string& program, const std::string& level);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_LOGGING_H_
