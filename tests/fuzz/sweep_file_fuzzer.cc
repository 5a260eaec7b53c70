// libFuzzer entry: arbitrary bytes as a sweep file (tests/fuzz/README.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/sweep_fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::Status status =
      paradnn::fuzz::CheckSweepFile({reinterpret_cast<const char*>(data), size});
  if (!status.ok()) {
    std::fprintf(stderr, "broken contract: %s\n", std::string(status.message()).c_str());
    std::abort();
  }
  return 0;
}
