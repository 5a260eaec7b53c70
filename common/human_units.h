// Sizes as people read them, shared by the CLI and the coordinator's messages.
#ifndef PARADNN_COMMON_HUMAN_UNITS_H_
#define PARADNN_COMMON_HUMAN_UNITS_H_

#include <string>

#include "absl/status/statusor.h"

namespace paradnn::common {

// "900 bytes", "1.5 KiB", "31.2 GiB": binary units, one decimal.
std::string HumanBytes(double bytes);

// Seconds of a duration as people write one: "90" or "90s", "30m", "1h",
// "1h30m", "2.5h", "1d". InvalidArgument (naming what is allowed) for
// anything else, a negative or a zero duration.
absl::StatusOr<double> ParseDurationSeconds(const std::string& text);

// A fraction as people write one: "3%" (0.03) or "0.03". InvalidArgument
// (naming what is allowed) for anything else or a negative value; the
// range is the caller's to check.
absl::StatusOr<double> ParseFraction(const std::string& text);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_HUMAN_UNITS_H_
