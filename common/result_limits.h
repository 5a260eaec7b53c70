// What one result may carry, shared by the coordinator (which refuses a
// result past them: server/result_validation.h) and the worker (which
// replaces such a result by an ERROR before sending it, so that it is not
// refused by the transport and sent again forever). docs/contracts.md
// "Results a worker sends".
#ifndef PARADNN_COMMON_RESULT_LIMITS_H_
#define PARADNN_COMMON_RESULT_LIMITS_H_

#include <cstddef>

namespace paradnn::common {

// Samples: run.max_steps allows at most this many timed steps.
inline constexpr int kMaxResultSamples = 100'000;
inline constexpr int kMaxResultProfileRows = 2'000;
inline constexpr int kMaxResultSuspects = 64;
inline constexpr size_t kMaxResultTextBytes = 16 << 10;  // error, each suspect sentence
inline constexpr size_t kMaxResultBytes = 8 << 20;       // the whole Measurement, serialized

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_RESULT_LIMITS_H_
