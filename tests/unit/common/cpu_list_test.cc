#include "common/cpu_list.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace paradnn::common {
namespace {

std::vector<int> Parsed(const std::string& text) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(text);
  EXPECT_TRUE(cpus.ok()) << text << ": " << cpus.status();
  return cpus.ok() ? *cpus : std::vector<int>{};
}

TEST(CpuListTest, ParsesNumbersAndRanges) {
  EXPECT_EQ(Parsed("3"), (std::vector<int>{3}));
  EXPECT_EQ(Parsed("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(Parsed("8,0-1"), (std::vector<int>{0, 1, 8}));
  EXPECT_EQ(Parsed("5-5"), (std::vector<int>{5}));
  EXPECT_EQ(Parsed("1023"), (std::vector<int>{1023}));
}

TEST(CpuListTest, AllowsSpacesAroundItemsAndATrailingNewline) {
  // As /sys/devices/system/cpu/online is written, and as people type lists.
  EXPECT_EQ(Parsed(" 0-1 , 4\n"), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(Parsed("0-1\t,\t2"), (std::vector<int>{0, 1, 2}));
}

TEST(CpuListTest, CountsRepeatedAndOverlappingCpusOnce) {
  EXPECT_EQ(Parsed("1,1,0-2,2-3"), (std::vector<int>{0, 1, 2, 3}));
}

TEST(CpuListTest, RefusesBadListsNamingTheFieldAndTheSyntax) {
  for (const char* text :
       {"",   " ",    "\n",    ",",   "0,",   ",1",     "0,,1",  "3-1", "x",   "0-",  "-1",
        "+1", "1-+2", "0-3:2", "0 1", "1024", "0-1024", "99999", "0x1", "1.5", "a-b", "0--1"}) {
    const absl::StatusOr<std::vector<int>> cpus = ParseCpuList(text, "--cpus");
    ASSERT_FALSE(cpus.ok()) << "'" << text << "'";
    EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(cpus.status().message());
    EXPECT_EQ(message.rfind("--cpus: ", 0), 0u) << message;
    EXPECT_NE(message.find("e.g. 0-3,8"), std::string::npos) << message;
  }
}

TEST(CpuListTest, SaysWhatIsWrongWithTheItem) {
  EXPECT_NE(std::string(ParseCpuList("0,3-1").status().message()).find("a reversed range '3-1'"),
            std::string::npos);
  EXPECT_NE(std::string(ParseCpuList("0,,1").status().message()).find("an empty item"),
            std::string::npos);
  EXPECT_NE(std::string(ParseCpuList("").status().message()).find("--cpus: empty"),
            std::string::npos);
}

TEST(CpuListTest, FormatsRunsAsRanges) {
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({4}), "4");
  EXPECT_EQ(FormatCpuList({0, 1}), "0-1");
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(FormatCpuList({1, 3, 5, 6, 7, 10}), "1,3,5-7,10");
  // Formatting a parsed list gives the canonical form, which parses back.
  EXPECT_EQ(FormatCpuList(Parsed(" 8, 0-2 ,3")), "0-3,8");
}

TEST(CpuListTest, ChecksCpusAgainstTheAllowedSet) {
  EXPECT_TRUE(CheckCpusAllowed({0, 1}, {0, 1}).ok());
  EXPECT_TRUE(CheckCpusAllowed({1}, {0, 1, 2}).ok());
  const absl::Status one = CheckCpusAllowed({1, 5}, {0, 1});
  EXPECT_EQ(one.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(one.message(),
            "--cpus: CPU 5 is outside this process's affinity; allowed: CPUs 0-1 (this "
            "process's affinity)");
  const absl::Status many = CheckCpusAllowed({2, 3, 7}, {0, 1, 2});
  EXPECT_NE(std::string(many.message()).find("CPUs 3,7 are outside"), std::string::npos)
      << many.message();
}

TEST(CpuListTest, ThisProcessMayRunOnTheCpusItReports) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  EXPECT_TRUE(CheckCpusAllowed(allowed, allowed).ok());
  EXPECT_EQ(Parsed(FormatCpuList(allowed)), allowed);
}

}  // namespace
}  // namespace paradnn::common
