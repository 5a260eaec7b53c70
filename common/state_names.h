// The lower-case names of sweep, job and worker states, as the CLI, the report and
// /metrics print them ("running", "done", ...): each value of the proto's
// SweepState, JobState and WorkerState (proto/paradnn/v1/coordinator.proto) is named by
// its own name without the prefix, in lower case; *_STATE_UNSPECIFIED is
// "unspecified". Thread-safe.
#ifndef PARADNN_COMMON_STATE_NAMES_H_
#define PARADNN_COMMON_STATE_NAMES_H_

#include <string>

namespace paradnn::common {

// The fallback for a number that is no value of the enum (a newer peer's).
inline constexpr char kUnknownStateName[] = "unknown";

// "unspecified", "running", "done", "cancelled", "interrupted";
// kUnknownStateName for any other number.
std::string SweepStateName(int state);
// "unspecified", "pending", "leased", "done", "failed", "cancelled", "held",
// "predicted"; kUnknownStateName for any other number.
std::string JobStateName(int state);
// "unspecified", "idle", "busy", "draining", "silent", "disconnected"
// (v1::WorkerState without its WORKER_ prefix); kUnknownStateName for any
// other number.
std::string WorkerStateName(int state);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_STATE_NAMES_H_
