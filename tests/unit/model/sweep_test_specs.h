// Sweep specs written as protobuf text, for the sweep tests, and their
// expansion. A text that does not parse fails the calling test.
#ifndef PARADNN_TESTS_UNIT_MODEL_SWEEP_TEST_SPECS_H_
#define PARADNN_TESTS_UNIT_MODEL_SWEEP_TEST_SPECS_H_

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/sweep.h"
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

// Asserts that `spec` is valid with at most `max_jobs` jobs (0: no cap), that
// it counts `count` configurations and expands into as many, which it stores
// in `*configs`. Call it inside ASSERT_NO_FATAL_FAILURE.
inline void ExpandValid(const v1::SweepSpec& spec, int64_t max_jobs, int64_t count,
                        std::vector<v1::ModelConfig>* configs) {
  ASSERT_TRUE(ValidateSweep(spec, max_jobs).ok()) << ValidateSweep(spec, max_jobs);
  EXPECT_EQ(CountConfigurations(spec), count);
  absl::StatusOr<std::vector<v1::ModelConfig>> expanded = ExpandSweep(spec, max_jobs);
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  ASSERT_EQ(expanded->size(), static_cast<size_t>(count));
  *configs = *std::move(expanded);
}

// Sets the stack setting `key` of `spec` to `values` (an empty list where
// `values` is empty).
inline void SetStack(v1::SweepSpec* spec, const std::string& key,
                     const std::vector<std::string>& values) {
  v1::StringValues& list = (*spec->mutable_stack())[key];
  list.clear_values();
  for (const std::string& v : values) list.add_values(v);
}

// A stack setting a sweep refuses: `key` set to `values` in a sweep on
// `device`, and what the error starts with.
struct RefusedStack {
  std::string key;
  std::vector<std::string> values;
  std::string device;
  std::string error;
};

// Expects `base` with each of `cases` added to be invalid, the error
// starting as the case says.
inline void ExpectStacksRefused(const v1::SweepSpec& base, const std::vector<RefusedStack>& cases) {
  for (const RefusedStack& c : cases) {
    v1::SweepSpec spec = base;
    spec.set_device(c.device);
    SetStack(&spec, c.key, c.values);
    const absl::Status status = ValidateSweep(spec, 0);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.key;
    EXPECT_THAT(std::string(status.message()), ::testing::StartsWith(c.error));
  }
}

// The issue's example sweep: 5 node values x 2 batch values.
// clang-format off
inline constexpr const char* kIssueExample = R"pb(
  name: "fc-small"
  family: "fc"
  device: "cpu"
  params { key: "layer" value { value: 4 } }
  params { key: "node" value { range { min: 32 max: 512 mul: 2 } } }
  params { key: "input" value { value: 2000 } }
  params { key: "output" value { value: 200 } }
  params { key: "batch" value { values { values: [ 64, 256 ] } } }
  precision: "float32"
  run { ci: 0.02 max_seconds: 10 }
)pb";
// clang-format on

inline v1::SweepSpec Issue() { return Spec(kIssueExample); }

}  // namespace paradnn::model

#endif  // PARADNN_TESTS_UNIT_MODEL_SWEEP_TEST_SPECS_H_
