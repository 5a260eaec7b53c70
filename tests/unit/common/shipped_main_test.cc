// What every shipped binary's main() does around its run
// (common/shipped_main.h).
#include "common/shipped_main.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

namespace paradnn::common {
namespace {

int ReturnArgumentCount(int argc, char** /*argv*/) { return argc; }

int Throw(int /*argc*/, char** /*argv*/) { throw std::runtime_error("boom"); }

TEST(ShippedMainTest, ReturnsWhatTheRunReturns) {
  char program[] = "paradnn-test";
  char flag[] = "--flag";
  char* argv[] = {program, flag, nullptr};
  EXPECT_EQ(RunShippedMain("paradnn-test", ReturnArgumentCount, 2, argv), 2);
}

TEST(ShippedMainTest, AThrowIsAnInternalErrorNamingTheProgram) {
  char program[] = "paradnn-test";
  char* argv[] = {program, nullptr};
  EXPECT_EXIT(std::exit(RunShippedMain("paradnn-test", Throw, 1, argv)),
              ::testing::ExitedWithCode(1), "paradnn-test: internal error: boom");
}

}  // namespace
}  // namespace paradnn::common
