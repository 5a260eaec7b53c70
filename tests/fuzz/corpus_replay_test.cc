// Replays the fuzzers' corpora and their regression inputs through the same
// checks the fuzzers run (sweep_fuzz_checks.h), so that the regular build
// and CI hold every input ever kept without clang or libFuzzer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "client/sweep_file.h"
#include "tests/fuzz/sweep_fuzz_checks.h"

namespace paradnn::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path FuzzDir() {
  const char* source = std::getenv("PARADNN_SOURCE_DIR");
  return fs::path(source != nullptr ? source : ".") / "tests" / "fuzz";
}

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Runs `check` on every file of corpus/NAME and regressions/NAME; returns
// how many there were.
size_t Replay(const std::string& name,
              const std::function<absl::Status(absl::string_view)>& check) {
  size_t files = 0;
  for (const char* folder : {"corpus", "regressions"}) {
    for (const fs::path& path : FilesIn(FuzzDir() / folder / name)) {
      ++files;
      const absl::Status status = check(ReadBytes(path));
      EXPECT_TRUE(status.ok()) << path << ": " << status;
    }
  }
  return files;
}

TEST(SweepFuzzCorpusTest, EverySweepFileInputKeepsItsContracts) {
  EXPECT_GE(Replay("sweep_file", CheckSweepFile), 20u)
      << "the corpus is missing from " << FuzzDir();
}

TEST(SweepFuzzCorpusTest, EverySerializedSpecInputKeepsItsContracts) {
  EXPECT_GE(Replay("sweep_spec", CheckSweepSpec), 10u)
      << "the corpus is missing from " << FuzzDir();
}

// The corpus is seeded with the shipped examples: at least one input must be
// a sweep the parser accepts, or the fuzzer never reached the coordinator's
// side.
TEST(SweepFuzzCorpusTest, CorpusHoldsAcceptedSweeps) {
  size_t accepted = 0;
  for (const fs::path& path : FilesIn(FuzzDir() / "corpus" / "sweep_file")) {
    if (client::ParseSweepText(ReadBytes(path), "corpus.yaml", kFuzzMaxJobs).ok()) ++accepted;
  }
  EXPECT_GE(accepted, 5u);
}

}  // namespace
}  // namespace paradnn::fuzz
