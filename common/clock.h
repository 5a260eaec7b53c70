// Time as an injectable dependency, so tests never sleep waiting for a
// lease or a heartbeat to expire.
#ifndef PARADNN_COMMON_CLOCK_H_
#define PARADNN_COMMON_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace paradnn::common {

// Seconds from `from` to `to` on the steady clock (timing, not dates).
inline double SecondsBetween(std::chrono::steady_clock::time_point from,
                             std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock milliseconds since the Unix epoch (stored in the database).
  virtual int64_t NowUnixMs() const = 0;
};

class SystemClock : public Clock {
 public:
  int64_t NowUnixMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// A clock tests move by hand. Not thread-safe against concurrent Advance.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_unix_ms = 1'700'000'000'000) : now_(start_unix_ms) {}
  int64_t NowUnixMs() const override { return now_; }
  void Advance(int64_t ms) { now_ += ms; }

 private:
  int64_t now_;
};

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_CLOCK_H_
