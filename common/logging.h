// One-time spdlog set-up for a binary's main(); libraries only log.
#ifndef PARADNN_COMMON_LOGGING_H_
#define PARADNN_COMMON_LOGGING_H_

#include <spdlog/formatter.h>

#include <memory>
#include <string>

#include "absl/status/status.h"

namespace paradnn::common {

// Accepted --log-level values.
inline constexpr const char* kLogLevels = "trace|debug|info|warn|error|critical|off";
// Accepted --log-format values.
inline constexpr const char* kLogFormats = "text|json";

// Logs to stderr at `level`, as "[time] [program] [level] message" (format
// "text") or one JSON object per line (format "json", see
// MakeJsonLogFormatter). Returns InvalidArgument naming --log-level or
// --log-format for an unknown value.
absl::Status ConfigureLogging(const std::string& program, const std::string& level,
                              const std::string& format = "text");

// A formatter writing each record as one line of JSON:
//   {"time":"2024-05-01T12:00:00.123Z","level":"info","logger":"paradnn-worker",
//    "pid":1234,"thread":5678,"message":"..."}
// time in UTC with milliseconds; the message escaped per RFC 8259 (quote,
// backslash, control characters as \uXXXX; bytes that are not valid UTF-8
// are replaced by U+FFFD so that every line parses).
std::unique_ptr<spdlog::formatter> MakeJsonLogFormatter();

// `text` as the contents of a JSON string (without the quotes).
std::string JsonEscape(std::string_view text);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_LOGGING_H_
