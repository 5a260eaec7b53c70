// What a worker may call itself: the coordinator checks every hello by it
// (server/scheduler.cc) and paradnn-worker checks its --worker-id by it
// before connecting, so that the two cannot disagree.
#ifndef PARADNN_COMMON_WORKER_IDENTITY_H_
#define PARADNN_COMMON_WORKER_IDENTITY_H_

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace paradnn::common {

inline constexpr size_t kMaxWorkerIdLength = 256;
inline constexpr char kWorkerIdRule[] =
    "must be 1..256 characters, none of them control characters";

// Ids and kinds are printed in tables and logs: no control characters.
inline bool IsPrintableText(std::string_view text) {
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

inline bool IsValidWorkerId(std::string_view id) {
  return !id.empty() && id.size() <= kMaxWorkerIdLength && IsPrintableText(id);
}

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_WORKER_IDENTITY_H_
