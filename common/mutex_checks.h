// How absl::Mutex checks lock order in this process.
//
// Debian's Abseil is built without NDEBUG, so every absl::Mutex records the
// order locks are taken in and aborts the process on a cycle, even one that
// never deadlocked. The tests keep that (a lock-order inversion fails them
// loudly); the shipped binaries turn it off, as Abseil's release builds do:
// it costs about three times a nested lock (measured here: 80 ns a pair
// without, 270 ns with, two threads), takes one global lock for its graph,
// and a service should not crash on a deadlock that did not happen.
#ifndef PARADNN_COMMON_MUTEX_CHECKS_H_
#define PARADNN_COMMON_MUTEX_CHECKS_H_

#include "absl/synchronization/mutex.h"

namespace paradnn::common {

// Call first in main() of a binary we ship (not in tests).
inline void UseReleaseMutexChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_MUTEX_CHECKS_H_
