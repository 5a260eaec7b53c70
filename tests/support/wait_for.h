// Waiting on a condition with a deadline, the one way tests wait (never a
// fixed sleep): poll `condition` until it holds or `timeout` has passed.
#ifndef PARADNN_TESTS_SUPPORT_WAIT_FOR_H_
#define PARADNN_TESTS_SUPPORT_WAIT_FOR_H_

#include <chrono>
#include <functional>
#include <thread>

namespace paradnn::testing {

// True once `condition` holds; false if it still does not at the deadline
// (checked once more then, so a slow poll never misses the last moment).
inline bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds poll = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_SUPPORT_WAIT_FOR_H_
