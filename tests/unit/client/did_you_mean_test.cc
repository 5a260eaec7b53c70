#include "client/did_you_mean.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace paradnn::client {
namespace {

TEST(ClosestNameTest, NearestWithinAThirdOfTheLength) {
  const std::vector<std::string> names = {"status", "submit", "results", "workers"};
  EXPECT_EQ(ClosestName("stauts", names), "status");
  EXPECT_EQ(ClosestName("result", names), "results");
  EXPECT_EQ(ClosestName("wrokers", names), "workers");
  EXPECT_EQ(ClosestName("frobnicate", names), "");
  EXPECT_EQ(ClosestName("xy", names), "");
}

// A command line shaped like paradnn's: global options, subcommands with
// options and positionals.
class DidYouMeanTest : public ::testing::Test {
 protected:
  DidYouMeanTest() {
    app_.add_option("--coordinator", coordinator_);
    app_.add_flag("--quiet", quiet_);
    CLI::App* status = app_.add_subcommand("status");
    status->add_option("sweep", sweep_);
    status->add_option("--format", format_);
    CLI::App* results = app_.add_subcommand("results");
    results->add_option("--format", format_);
    results->add_flag("--wide", wide_);
  }
  std::string Hint(std::vector<std::string> args) { return DidYouMean(app_, args); }

  CLI::App app_;
  std::string coordinator_, format_;
  int sweep_ = 0;
  bool quiet_ = false, wide_ = false;
};

TEST_F(DidYouMeanTest, MistypedSubcommand) {
  EXPECT_EQ(Hint({"stauts"}), "did you mean 'status'?");
  EXPECT_EQ(Hint({"--coordinator", "unix:/x", "reslts", "3"}), "did you mean 'results'?");
  // After a flag, a word is a subcommand, not the flag's value.
  EXPECT_EQ(Hint({"--quiet", "stauts"}), "did you mean 'status'?");
  EXPECT_EQ(Hint({"banana"}), "");
}

TEST_F(DidYouMeanTest, MistypedOptionOfTheSubcommandOrGlobal) {
  EXPECT_EQ(Hint({"results", "--fromat", "csv"}), "did you mean '--format'?");
  EXPECT_EQ(Hint({"results", "--wdie"}), "did you mean '--wide'?");
  EXPECT_EQ(Hint({"status", "1", "--coordinater=unix:/x"}), "did you mean '--coordinator'?");
  // --wide is results', not status'.
  EXPECT_EQ(Hint({"status", "--wide"}), "");
  EXPECT_EQ(Hint({"status", "3", "--format", "csv"}), "");
}

}  // namespace
}  // namespace paradnn::client
