#include "server/coordinator_service.h"

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "model/families/noop.h"
#include "model/families/torchscript.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "model/sweep.h"

namespace paradnn::server {
namespace {

using ::testing::HasSubstr;

v1::SweepSpec Spec(const std::string& text) {
  v1::SweepSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

// clang-format off
constexpr const char* kFcSweep = R"pb(
  name: "fc" family: "fc" device: "cpu"
  params { key: "layer" value { values { values: [ 1, 4 ] } } }
  params { key: "node" value { range { min: 32 max: 512 mul: 4 } } }
  params { key: "input" value { value: 2000 } }
  params { key: "output" value { value: 200 } }
  params { key: "batch" value { values { values: [ 64, 256 ] } } }
  precision: [ "float32", "bfloat16" ]
)pb";
// clang-format on

TEST(PlanSweepTest, EveryJobCarriesTheRunnerCoresEstimates) {
  const v1::SweepSpec spec = Spec(kFcSweep);
  absl::StatusOr<PlannedSweep> plan = PlanSweep(spec, 0, 42);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->jobs.size(), 2u * 3 * 2 * 2);

  double total = 0;
  double max_memory = 0;
  int64_t min_params = INT64_MAX;
  int64_t max_params = 0;
  std::set<int32_t> ordinals;
  for (const db::NewJob& job : plan->jobs) {
    absl::StatusOr<model::ModelSpec> model =
        model::ParseModelSpec(job.config, model::FieldStyle::kProto);
    ASSERT_TRUE(model.ok()) << model.status();
    const v1::ModelCounts counts = model::CountModel(*model);
    EXPECT_EQ(job.params, counts.params());
    EXPECT_DOUBLE_EQ(job.model_flops, counts.model_flops());
    EXPECT_DOUBLE_EQ(job.peak_memory_estimate_bytes, counts.peak_memory_estimate_bytes());
    EXPECT_GT(job.params, 0);
    EXPECT_GT(job.peak_memory_estimate_bytes, 0);
    total += counts.model_flops();
    max_memory = std::max(max_memory, counts.peak_memory_estimate_bytes());
    min_params = std::min(min_params, counts.params());
    max_params = std::max(max_params, counts.params());
    EXPECT_EQ(job.device, "cpu");
    EXPECT_EQ(job.settings.seed(), 42u);
    ordinals.insert(job.ordinal);
  }
  EXPECT_DOUBLE_EQ(plan->total_model_flops, total);
  EXPECT_DOUBLE_EQ(plan->max_peak_memory_estimate_bytes, max_memory);
  EXPECT_EQ(plan->min_params, min_params);
  EXPECT_EQ(plan->max_params, max_params);
  EXPECT_LT(plan->min_params, plan->max_params);
  // The run order is a permutation.
  EXPECT_EQ(ordinals.size(), plan->jobs.size());
  EXPECT_EQ(*ordinals.begin(), 0);
  EXPECT_EQ(*ordinals.rbegin(), static_cast<int32_t>(plan->jobs.size()) - 1);
}

TEST(PlanSweepTest, RepeatsRunAsInterleavedRoundsOfEveryConfiguration) {
  v1::SweepSpec spec = Spec(kFcSweep);
  spec.set_repeats(3);
  absl::StatusOr<PlannedSweep> plan = PlanSweep(spec, 0, 42);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const size_t n = 2u * 3 * 2 * 2;
  ASSERT_EQ(plan->jobs.size(), 3 * n);
  std::set<int32_t> ordinals;
  std::vector<std::vector<int32_t>> round_orders(3);
  for (size_t i = 0; i < plan->jobs.size(); ++i) {
    const db::NewJob& job = plan->jobs[i];
    EXPECT_EQ(job.repeat, static_cast<int32_t>(i / n));
    // Round r holds ordinals r*n .. r*n + n - 1: it runs before round r + 1.
    EXPECT_GE(job.ordinal, job.repeat * static_cast<int32_t>(n));
    EXPECT_LT(job.ordinal, (job.repeat + 1) * static_cast<int32_t>(n));
    // The same configurations in every round.
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(job.config, plan->jobs[i % n].config));
    ordinals.insert(job.ordinal);
    round_orders[job.repeat].push_back(job.ordinal - job.repeat * static_cast<int32_t>(n));
  }
  EXPECT_EQ(ordinals.size(), plan->jobs.size());
  // Each round has its own shuffle.
  EXPECT_NE(round_orders[0], round_orders[1]);
  EXPECT_NE(round_orders[1], round_orders[2]);

  // The job limit counts repeats.
  EXPECT_THAT(std::string(PlanSweep(spec, 3 * n - 1, 42).status().message()),
              HasSubstr("jobs (3 repeats); the limit is"));
  spec.set_repeats(model::kMaxRepeats + 1);
  EXPECT_THAT(std::string(PlanSweep(spec, 0, 42).status().message()), HasSubstr("repeats: 101"));
}

TEST(PlanSweepTest, InvalidSweepsAreRefusedAsValidationRefusesThem) {
  v1::SweepSpec spec = Spec(kFcSweep);
  (*spec.mutable_params())["layer"].set_value(0);
  absl::StatusOr<PlannedSweep> plan = PlanSweep(spec, 0, 1);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("params.layer: 0 is out of range"));
  plan = PlanSweep(Spec(kFcSweep), 5, 1);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("the limit is 5"));
}

// The smallest valid sweep of `family`: every required parameter at a small
// valid value, every required option at its first allowed value.
v1::SweepSpec SmallestSweep(const model::FamilyDef& family) {
  v1::SweepSpec spec;
  spec.set_name(std::string("smallest-") + family.name);
  spec.set_family(family.name);
  for (const model::ParamRule& p : family.params) {
    if (!p.required) continue;
    int64_t value = std::max<int64_t>(p.min_value, std::min<int64_t>(p.max_value, 4));
    if (p.multiple_of > 1) value = (value + p.multiple_of - 1) / p.multiple_of * p.multiple_of;
    (*spec.mutable_params())[p.name].set_value(value);
  }
  for (const model::OptionRule& o : family.options) {
    if (o.default_value == nullptr) (*spec.mutable_options())[o.name].add_values(o.allowed[0]);
  }
  return spec;
}

// One family table (model/family.h): whatever sweep the CLI accepts, the
// coordinator plans, for every family.
TEST(PlanSweepTest, EveryFamilysSmallestSweepPlansWithEstimates) {
  for (const model::FamilyDef* family : model::AllFamilies()) {
    if (std::string(family->name) == model::kTorchScriptFamilyName) continue;  // needs a model
    SCOPED_TRACE(family->name);
    const v1::SweepSpec spec = SmallestSweep(*family);
    ASSERT_TRUE(model::ValidateSweep(spec, 0).ok()) << model::ValidateSweep(spec, 0);
    absl::StatusOr<PlannedSweep> plan = PlanSweep(spec, 0, 7);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_EQ(plan->jobs.size(), 1u);
    if (std::string(family->name) == model::kNoopFamilyName) {
      // Nothing is built (model/families/noop.h): no parameters, no memory.
      EXPECT_EQ(plan->jobs.front().params, 0);
      EXPECT_EQ(plan->max_peak_memory_estimate_bytes, 0);
      continue;
    }
    EXPECT_GT(plan->jobs.front().params, 0);
    EXPECT_GT(plan->max_peak_memory_estimate_bytes, 0);
  }
}

// The harness family: an index range makes one job per index, all with
// zero estimates, and every job names its own index.
TEST(PlanSweepTest, NoopSweepPlansOneJobPerIndex) {
  v1::SweepSpec spec;
  spec.set_name("load");
  spec.set_family("noop");
  (*spec.mutable_params())["batch"].set_value(1);
  v1::IntRange* range = (*spec.mutable_params())["index"].mutable_range();
  range->set_min(0);
  range->set_max(999);
  range->set_add(1);
  absl::StatusOr<PlannedSweep> plan = PlanSweep(spec, 0, 7);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->jobs.size(), 1000u);
  EXPECT_EQ(plan->total_model_flops, 0);
  EXPECT_EQ(plan->max_params, 0);
  std::set<int64_t> indexes;
  for (const db::NewJob& job : plan->jobs) {
    EXPECT_EQ(job.config.family(), "noop");
    EXPECT_EQ(job.config.params().at("batch"), 1);
    indexes.insert(job.config.params().at("index"));
  }
  EXPECT_EQ(indexes.size(), 1000u);
  EXPECT_EQ(*indexes.begin(), 0);
  EXPECT_EQ(*indexes.rbegin(), 999);

  // index is required: a noop sweep without it is refused naming the field.
  spec.mutable_params()->erase("index");
  absl::StatusOr<PlannedSweep> refused = PlanSweep(spec, 0, 7);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("index"));
}

}  // namespace
}  // namespace paradnn::server
