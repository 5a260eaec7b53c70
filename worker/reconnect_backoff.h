// Delays between attempts to reach the coordinator.
#ifndef PARADNN_WORKER_RECONNECT_BACKOFF_H_
#define PARADNN_WORKER_RECONNECT_BACKOFF_H_

#include <chrono>
#include <cstdint>
#include <random>

namespace paradnn::worker {

// Exponential backoff with jitter: the base delay starts at `initial`,
// doubles after every failed attempt and is capped at `max`; each delay
// handed out is drawn uniformly from [0.8 x base, base], so that workers
// restarted together do not reconnect in lockstep. Deterministic for a
// given seed. Not thread-safe.
class ReconnectBackoff {
 public:
  ReconnectBackoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed);

  // The delay to wait before the next attempt; doubles the base for the
  // attempt after it.
  std::chrono::milliseconds Next();
  // After a successful connection: the next delay starts from `initial`.
  void Reset();
  // The un-jittered delay the next call to Next() draws from.
  std::chrono::milliseconds base() const { return base_; }

 private:
  const std::chrono::milliseconds initial_;
  const std::chrono::milliseconds max_;
  std::chrono::milliseconds base_;
  std::mt19937_64 random_;
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_RECONNECT_BACKOFF_H_
