// Every sweep file shipped under examples/ parses and validates, so the
// README's and docs' examples cannot rot.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "client/sweep_file.h"

namespace paradnn::client {
namespace {

TEST(ExamplesTest, EveryShippedSweepFileIsValid) {
  const char* source = std::getenv("PARADNN_SOURCE_DIR");
  ASSERT_NE(source, nullptr) << "run through ctest";
  int files = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(source) / "examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    absl::StatusOr<v1::SweepSpec> spec = ReadSweepFile(entry.path().string(), /*max_jobs=*/0);
    EXPECT_TRUE(spec.ok()) << entry.path() << ": " << spec.status();
  }
  EXPECT_GE(files, 10) << "examples/ should hold the quick sweep, presets and family examples";
}

}  // namespace
}  // namespace paradnn::client
