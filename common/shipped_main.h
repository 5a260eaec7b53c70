// The main() of a binary we ship (paradnn, paradnn-coordinator,
// paradnn-worker): one place for what each does before and around its run.
#ifndef PARADNN_COMMON_SHIPPED_MAIN_H_
#define PARADNN_COMMON_SHIPPED_MAIN_H_

#include <cstdio>
#include <exception>

#include "common/mutex_checks.h"

namespace paradnn::common {

// Sets the shipped binaries' lock-order mode (common/mutex_checks.h: no abort
// on an inverted order, as Abseil's release builds), then returns
// run(argc, argv). Libraries report failures as statuses, so anything thrown
// is a bug: it is printed as "PROGRAM: internal error: WHAT" on stderr and
// the process exits 1. Call it once, from main(), before any other thread.
inline int RunShippedMain(const char* program, int (*run)(int, char**), int argc, char** argv) {
  UseReleaseMutexChecks();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_SHIPPED_MAIN_H_
