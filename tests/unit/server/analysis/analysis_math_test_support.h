// Shared by the analysis arithmetic tests (analysis_math_test.cc,
// sensitivity_fit_test.cc).
#ifndef PARADNN_TESTS_UNIT_SERVER_ANALYSIS_ANALYSIS_MATH_TEST_SUPPORT_H_
#define PARADNN_TESTS_UNIT_SERVER_ANALYSIS_ANALYSIS_MATH_TEST_SUPPORT_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"

namespace paradnn::server::analysis::testing_support {

inline void ExpectInvalid(const absl::Status& status, const std::string& message_part) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(message_part));
}

}  // namespace paradnn::server::analysis::testing_support

#endif  // PARADNN_TESTS_UNIT_SERVER_ANALYSIS_ANALYSIS_MATH_TEST_SUPPORT_H_
