// libFuzzer entry: arbitrary bytes as a sweep file (tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/sweep_fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paradnn::fuzz::AbortOnBrokenContract(
      paradnn::fuzz::CheckSweepFile({reinterpret_cast<const char*>(data), size}));
  return 0;
}
