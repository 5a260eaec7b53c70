// Sweep specs written as protobuf text, for the sweep tests. A text that
// does not parse fails the calling test.
#ifndef PARADNN_TESTS_UNIT_MODEL_SWEEP_TEST_SPECS_H_
#define PARADNN_TESTS_UNIT_MODEL_SWEEP_TEST_SPECS_H_

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>

#include "paradnn/v1/sweep.pb.h"

namespace paradnn::model {

inline v1::SweepSpec Spec(const std::string& text) {
  v1::SweepSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

inline v1::ParamSpec Param(const std::string& text) {
  v1::ParamSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

}  // namespace paradnn::model

#endif  // PARADNN_TESTS_UNIT_MODEL_SWEEP_TEST_SPECS_H_
