// The lower-case names of sweep and job states, as the CLI, the report and
// /metrics print them ("running", "done", ...). Thread-safe.
#ifndef PARADNN_COMMON_STATE_NAMES_H_
#define PARADNN_COMMON_STATE_NAMES_H_

#include <string>

namespace paradnn::common {

// "running", "done", "cancelled"; "unknown" for any other value.
std::string SweepStateName(int state);
// "pending", "leased", "done", "failed", "cancelled"; "unknown" otherwise.
std::string JobStateName(int state);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_STATE_NAMES_H_
