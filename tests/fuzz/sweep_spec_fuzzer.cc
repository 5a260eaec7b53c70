// libFuzzer entry: arbitrary bytes as a serialized v1::SweepSpec, as
// SubmitSweep receives it (tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/sweep_fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paradnn::fuzz::AbortOnBrokenContract(
      paradnn::fuzz::CheckSweepSpec({reinterpret_cast<const char*>(data), size}));
  return 0;
}
