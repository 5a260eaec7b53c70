// Family noop: its rules, its zero counts and the result it makes.
#include "model/families/noop.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "model/family.h"
#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::model {
namespace {

v1::ModelConfig NoopConfig() {
  v1::ModelConfig config;
  config.set_family("noop");
  (*config.mutable_params())["batch"] = 1;
  (*config.mutable_params())["index"] = 0;
  return config;
}

TEST(NoopFamilyTest, IsRegistered) {
  const FamilyDef* def = FindFamily("noop");
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(absl::StrContains(AllowedFamilies(), "|noop|"));
}

TEST(NoopFamilyTest, ParsesAndCountsNothing) {
  auto spec = ParseModelSpec(NoopConfig(), FieldStyle::kProto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->Param("index"), 0);
  const v1::ModelCounts counts = CountModel(*spec);
  EXPECT_EQ(counts.params(), 0);
  EXPECT_EQ(counts.model_flops(), 0);
  EXPECT_EQ(counts.executed_flops(), 0);
  EXPECT_EQ(counts.peak_memory_estimate_bytes(), 0);
}

TEST(NoopFamilyTest, IndexIsRequiredAndRanged) {
  v1::ModelConfig config = NoopConfig();
  config.mutable_params()->erase("index");
  auto missing = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "config.params.index: required"))
      << missing.status();

  config = NoopConfig();
  (*config.mutable_params())["index"] = -1;
  auto negative = ParseModelSpec(config, FieldStyle::kFlag);
  ASSERT_FALSE(negative.ok());
  EXPECT_TRUE(absl::StartsWith(negative.status().message(), "--index: -1 is out of range"))
      << negative.status();

  config = NoopConfig();
  (*config.mutable_params())["layer"] = 2;
  EXPECT_FALSE(ParseModelSpec(config, FieldStyle::kProto).ok());
}

TEST(NoopFamilyTest, FinishedMeasurementIsOkWithNoTiming) {
  v1::Measurement m;
  m.set_outcome(v1::ERROR);
  m.set_error("left over");
  m.set_examples_per_sec(5);
  m.add_step_seconds(0.1);
  m.mutable_stats()->set_steps(1);
  FinishNoopMeasurement(&m);
  EXPECT_EQ(m.outcome(), v1::OK);
  EXPECT_EQ(m.error(), "");
  EXPECT_EQ(m.examples_per_sec(), 0);
  EXPECT_EQ(m.step_seconds_size(), 0);
  EXPECT_EQ(m.stats().steps(), 0);
  EXPECT_EQ(m.stats().stop_reason(), kNoopStopReason);
}

}  // namespace
}  // namespace paradnn::model
