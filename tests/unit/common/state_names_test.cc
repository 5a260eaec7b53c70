#include "common/state_names.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::common {
namespace {

// The name the header promises for a proto value: its own name without
// `prefix`, in lower case; *_STATE_UNSPECIFIED is "unspecified".
std::string ExpectedName(absl::string_view proto_name, absl::string_view prefix) {
  if (absl::EndsWith(proto_name, "_STATE_UNSPECIFIED")) return "unspecified";
  EXPECT_TRUE(absl::StartsWith(proto_name, prefix)) << proto_name;
  proto_name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(proto_name);
}

bool IsLowerCaseWord(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::islower(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Every value of `descriptor` has its own lower-case name; numbers that are
// no value get kUnknownStateName.
void ExpectEveryValueNamed(const google::protobuf::EnumDescriptor* descriptor,
                           absl::string_view prefix, const std::function<std::string(int)>& name) {
  std::set<std::string> seen;
  int largest = 0;
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const google::protobuf::EnumValueDescriptor* value = descriptor->value(i);
    const std::string got = name(value->number());
    EXPECT_TRUE(IsLowerCaseWord(got)) << value->name() << " -> '" << got << "'";
    EXPECT_NE(got, kUnknownStateName) << value->name() << " has no name of its own";
    EXPECT_EQ(got, ExpectedName(value->name(), prefix)) << value->name();
    EXPECT_TRUE(seen.insert(got).second) << value->name() << " shares the name '" << got << "'";
    largest = std::max(largest, value->number());
  }
  for (int number : {-1, largest + 1, largest + 100}) {
    ASSERT_EQ(descriptor->FindValueByNumber(number), nullptr) << number;
    EXPECT_EQ(name(number), kUnknownStateName) << number;
  }
}

TEST(StateNamesTest, EverySweepStateHasItsLowerCaseName) {
  ExpectEveryValueNamed(v1::SweepState_descriptor(), "SWEEP_", SweepStateName);
}

TEST(StateNamesTest, EveryJobStateHasItsLowerCaseName) {
  ExpectEveryValueNamed(v1::JobState_descriptor(), "JOB_", JobStateName);
}

TEST(StateNamesTest, EveryWorkerStateHasItsLowerCaseName) {
  ExpectEveryValueNamed(v1::WorkerState_descriptor(), "WORKER_", WorkerStateName);
}

TEST(StateNamesTest, TheNamesThePagesPrint) {
  EXPECT_EQ(SweepStateName(v1::SWEEP_INTERRUPTED), "interrupted");
  EXPECT_EQ(JobStateName(v1::JOB_PENDING), "pending");
  EXPECT_EQ(JobStateName(v1::JOB_PREDICTED), "predicted");
  EXPECT_EQ(WorkerStateName(v1::WORKER_SILENT), "silent");
  EXPECT_STREQ(kUnknownStateName, "unknown");
}

}  // namespace
}  // namespace paradnn::common
