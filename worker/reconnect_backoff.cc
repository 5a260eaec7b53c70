#include "worker/reconnect_backoff.h"

#include <algorithm>

namespace paradnn::worker {

ReconnectBackoff::ReconnectBackoff(std::chrono::milliseconds initial, std::chrono::milliseconds max,
                                   uint64_t seed)
    : initial_(std::max(initial, std::chrono::milliseconds(1))),
      max_(std::max(max, initial_)),
      base_(initial_),
      random_(seed) {}

std::chrono::milliseconds ReconnectBackoff::Next() {
  const std::chrono::milliseconds base = base_;
  base_ = std::min(base_ * 2, max_);
  std::uniform_int_distribution<int64_t> jitter(base.count() * 8 / 10, base.count());
  return std::chrono::milliseconds(jitter(random_));
}

void ReconnectBackoff::Reset() { base_ = initial_; }

}  // namespace paradnn::worker
