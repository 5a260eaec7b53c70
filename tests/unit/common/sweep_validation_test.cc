#include "common/sweep_validation.h"

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace paradnn::common {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The issue's example sweep: 5 node values x 2 batch values.
// clang-format off
constexpr const char* kIssueExample = R"pb(
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

v1::SweepSpec Spec(const std::string& text) {
  v1::SweepSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

v1::SweepSpec Issue() { return Spec(kIssueExample); }

v1::ParamSpec Param(const std::string& text) {
  v1::ParamSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

const ParamSchema& Schema(const char* name) { return *FindParam(*FindFamily("fc"), name); }

TEST(SweepValidationTest, IssueExampleIsValidAndHasTenConfigurations) {
  EXPECT_TRUE(ValidateSweep(Issue(), kDefaultMaxJobs).ok())
      << ValidateSweep(Issue(), kDefaultMaxJobs);
  EXPECT_EQ(CountConfigurations(Issue()), 10);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(Issue(), kDefaultMaxJobs);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 10u);
  for (const v1::ModelConfig& c : *configs) {
    EXPECT_EQ(c.family(), "fc");
    EXPECT_EQ(c.precision(), "float32");
    EXPECT_EQ(c.optimizer(), "rmsprop");
    EXPECT_EQ(c.params().at("layer"), 4);
    EXPECT_EQ(c.params().at("input"), 2000);
    EXPECT_EQ(c.params().at("output"), 200);
    EXPECT_EQ(c.params().size(), 5u);
  }
}

TEST(SweepValidationTest, ExpansionOrderIsSortedKeysOuterFirst) {
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(Issue(), 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  // batch is the first key in sorted order, so it turns slowest.
  std::vector<std::pair<int64_t, int64_t>> got;
  for (const auto& c : *configs) got.emplace_back(c.params().at("batch"), c.params().at("node"));
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {64, 32},  {64, 64},  {64, 128},  {64, 256},  {64, 512},
      {256, 32}, {256, 64}, {256, 128}, {256, 256}, {256, 512}};
  EXPECT_EQ(got, want);
}

TEST(SweepValidationTest, PrecisionAndOptimizerAreInnermost) {
  v1::SweepSpec spec = Issue();
  spec.clear_precision();
  spec.add_precision("float32");
  spec.add_precision("bfloat16");
  spec.add_optimizer("sgd");
  spec.add_optimizer("momentum");
  EXPECT_EQ(CountConfigurations(spec), 40);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 40u);
  EXPECT_EQ((*configs)[0].precision(), "float32");
  EXPECT_EQ((*configs)[0].optimizer(), "sgd");
  EXPECT_EQ((*configs)[1].optimizer(), "momentum");
  EXPECT_EQ((*configs)[2].precision(), "bfloat16");
  EXPECT_EQ((*configs)[4].params().at("node"), 64);
  std::set<std::string> distinct;
  for (const auto& c : *configs) distinct.insert(c.SerializeAsString());
  EXPECT_EQ(distinct.size(), 40u);
}

TEST(SweepValidationTest, EmptyPrecisionAndOptimizerGetDefaults) {
  v1::SweepSpec spec = Issue();
  spec.clear_precision();
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok());
  EXPECT_EQ(configs->front().precision(), "float32");
  EXPECT_EQ(configs->front().optimizer(), "rmsprop");
}

TEST(SweepValidationTest, MulRangeWalksGeometrically) {
  auto v = ParamValues(Param("range { min: 32 max: 8192 mul: 2 }"), Schema("node"), "params.node");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}));
  // max need not be on the grid.
  v = ParamValues(Param("range { min: 64 max: 1000 mul: 4 }"), Schema("batch"), "params.batch");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int64_t>{64, 256}));
}

TEST(SweepValidationTest, FractionalMulRoundsToNearest) {
  auto v = ParamValues(Param("range { min: 10 max: 40 mul: 1.5 }"), Schema("node"), "params.node");
  ASSERT_TRUE(v.ok()) << v.status();
  // 10, 15, 22.5 -> 23 (round half away from zero), 34.5 -> 35, 52.5 > 40.
  EXPECT_EQ(*v, (std::vector<int64_t>{10, 15, 23, 35}));
}

TEST(SweepValidationTest, AddRangeWalksLinearly) {
  auto v = ParamValues(Param("range { min: 2000 max: 8000 add: 2000 }"), Schema("input"),
                       "params.input");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int64_t>{2000, 4000, 6000, 8000}));
  v = ParamValues(Param("range { min: 200 max: 999 add: 200 }"), Schema("output"), "p");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int64_t>{200, 400, 600, 800}));
  v = ParamValues(Param("range { min: 7 max: 7 add: 1 }"), Schema("layer"), "p");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int64_t>{7}));
}

TEST(SweepValidationTest, ValuesKeepTheirOrder) {
  auto v = ParamValues(Param("values { values: [512, 64, 128] }"), Schema("batch"), "p");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int64_t>{512, 64, 128}));
}

TEST(SweepValidationTest, PaperFcGridCounts) {
  // clang-format off
  v1::SweepSpec spec = Spec(R"pb(
    name: "paper-fc" family: "fc" device: "cpu"
    params { key: "layer" value { range { min: 4 max: 128 mul: 2 } } }
    params { key: "node" value { range { min: 32 max: 8192 mul: 2 } } }
    params { key: "input" value { range { min: 2000 max: 8000 add: 2000 } } }
    params { key: "output" value { range { min: 200 max: 1000 add: 200 } } }
    params { key: "batch" value { range { min: 64 max: 16384 mul: 2 } } }
  )pb");
  // clang-format on
  EXPECT_EQ(CountConfigurations(spec), 6 * 9 * 4 * 5 * 9);
  EXPECT_TRUE(ValidateSweep(spec, 0).ok());
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok());
  EXPECT_EQ(configs->size(), 9720u);
}

TEST(SweepValidationTest, CountSaturatesInsteadOfOverflowing) {
  v1::SweepSpec spec = Issue();
  for (const char* key : {"node", "input", "output", "batch"}) {
    (*spec.mutable_params())[key] = Param("range { min: 1 max: 1048576 add: 1 }");
  }
  EXPECT_EQ(CountConfigurations(spec), std::numeric_limits<int64_t>::max());
  absl::Status s = ValidateSweep(spec, 1000);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("at least 9223372036854775807 configurations"));
}

struct BadCase {
  const char* what;
  const char* spec;      // text format, merged over the issue example
  const char* expected;  // the message must start with this
  int64_t max_jobs = kDefaultMaxJobs;
};

class BadSweepTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadSweepTest, IsInvalidArgumentNamingTheField) {
  v1::SweepSpec spec = Issue();
  v1::SweepSpec overlay;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(GetParam().spec, &overlay))
      << GetParam().spec;
  // Replace fields the overlay sets (maps merge by key, lists replace).
  if (!overlay.name().empty() || overlay.ByteSizeLong() == 0) spec.set_name(overlay.name());
  if (!overlay.family().empty()) spec.set_family(overlay.family());
  if (!overlay.device().empty()) spec.set_device(overlay.device());
  for (const auto& [k, v] : overlay.params()) (*spec.mutable_params())[k] = v;
  if (overlay.precision_size() > 0) *spec.mutable_precision() = overlay.precision();
  if (overlay.optimizer_size() > 0) *spec.mutable_optimizer() = overlay.optimizer();
  if (overlay.has_run()) *spec.mutable_run() = overlay.run();
  absl::Status s = ValidateSweep(spec, GetParam().max_jobs);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << GetParam().what;
  EXPECT_THAT(std::string(s.message()), StartsWith(GetParam().expected)) << GetParam().what;
  EXPECT_FALSE(ExpandSweep(spec, GetParam().max_jobs).ok());
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Table, BadSweepTest,
    ::testing::Values(
        BadCase{"empty name", "", "name: missing"},
        BadCase{"control char in name", R"pb(name: "a\tb")pb", "name: control character"},
        BadCase{"unknown family", R"pb(name: "n" family: "transformer")pb",
                "family: 'transformer' is not a known family; one of fc"},
        BadCase{"unknown device", R"pb(name: "n" device: "gpu")pb",
                "device: 'gpu' is not one of cpu|cuda|tpu"},
        BadCase{"unknown key", R"pb(name: "n" params { key: "nodes" value { value: 3 } })pb",
                "params.nodes: unknown parameter of family fc; allowed: batch, input, layer, "
                "node, output"},
        BadCase{"zero size", R"pb(name: "n" params { key: "layer" value { value: 0 } })pb",
                "params.layer: 0 is out of range; allowed 1..4096"},
        BadCase{"negative size", R"pb(name: "n" params { key: "input" value { value: -5 } })pb",
                "params.input: -5 is out of range"},
        BadCase{"too large", R"pb(name: "n" params { key: "layer" value { value: 5000 } })pb",
                "params.layer: 5000 is out of range; allowed 1..4096"},
        BadCase{"min > max",
                R"pb(name: "n" params { key: "node" value { range { min: 512 max: 32 mul: 2 } } })pb",
                "params.node.range: min 512 > max 32"},
        BadCase{"range min zero",
                R"pb(name: "n" params { key: "node" value { range { min: 0 max: 32 mul: 2 } } })pb",
                "params.node.range.min: 0 is out of range"},
        BadCase{"mul = 1",
                R"pb(name: "n" params { key: "node" value { range { min: 32 max: 512 mul: 1 } } })pb",
                "params.node.range.mul: 1 must be > 1"},
        BadCase{"mul < 1",
                R"pb(name: "n" params { key: "node" value { range { min: 32 max: 512 mul: 0.5 } } })pb",
                "params.node.range.mul: 0.5 must be > 1"},
        BadCase{"mul that rounds back",
                R"pb(name: "n" params { key: "node" value { range { min: 2 max: 512 mul: 1.1 } } })pb",
                "params.node.range.mul: 1.1 does not advance from 2"},
        BadCase{"add = 0",
                R"pb(name: "n" params { key: "node" value { range { min: 32 max: 512 add: 0 } } })pb",
                "params.node.range.add: 0 must be > 0"},
        BadCase{"add < 0",
                R"pb(name: "n" params { key: "node" value { range { min: 32 max: 512 add: -4 } } })pb",
                "params.node.range.add: -4 must be > 0"},
        BadCase{"no step",
                R"pb(name: "n" params { key: "node" value { range { min: 32 max: 512 } } })pb",
                "params.node.range: needs a step"},
        BadCase{"both steps",
                R"pb(name: "n" params { key: "node" value { range { min: 32 max: 512 mul: 2 add: 3 } } })pb",
                "params.node.range: exactly one of mul or add"},
        BadCase{"empty values", R"pb(name: "n" params { key: "batch" value { values { } } })pb",
                "params.batch.values: empty list"},
        BadCase{"bad value in list",
                R"pb(name: "n" params { key: "batch" value { values { values: [64, 0] } } })pb",
                "params.batch.values[1]: 0 is out of range"},
        BadCase{"repeated value",
                R"pb(name: "n" params { key: "batch" value { values { values: [64, 32, 64] } } })pb",
                "params.batch.values[2]: 64 is repeated (also at [0])"},
        BadCase{"unset param", R"pb(name: "n" params { key: "batch" value { } })pb",
                "params.batch: no value given"},
        BadCase{"bad precision", R"pb(name: "n" precision: [ "float32", "fp8" ])pb",
                "precision[1]: 'fp8' is not one of float32|bfloat16|float16|mixed_bf16|mixed_fp16"},
        BadCase{"repeated precision", R"pb(name: "n" precision: [ "float16", "float16" ])pb",
                "precision[1]: 'float16' is repeated"},
        BadCase{"bad optimizer", R"pb(name: "n" optimizer: [ "adam" ])pb",
                "optimizer[0]: 'adam' is not one of rmsprop|sgd|momentum"},
        BadCase{"bad run setting", R"pb(name: "n" run { ci: 2 })pb", "run.ci: 2"},
        BadCase{"negative run setting", R"pb(name: "n" run { max_seconds: -1 })pb",
                "run.max_seconds: -1"},
        BadCase{"too many configurations", R"pb(name: "n")pb",
                "sweep expands to 10 configurations; the limit is 9 (--max-jobs)", 9}));
// clang-format on

TEST(SweepValidationTest, MissingRequiredParameter) {
  v1::SweepSpec spec = Issue();
  spec.mutable_params()->erase("output");
  absl::Status s = ValidateSweep(spec, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "params.output: missing; family fc requires batch, input, layer, node, output");
}

TEST(SweepValidationTest, NameLength) {
  v1::SweepSpec spec = Issue();
  spec.set_name(std::string(kMaxSweepNameBytes, 'x'));
  EXPECT_TRUE(ValidateSweep(spec, 0).ok());
  spec.set_name(std::string(kMaxSweepNameBytes + 7, 'x'));
  EXPECT_EQ(ValidateSweep(spec, 0).message(), "name: 135 bytes; at most 128");
}

TEST(SweepValidationTest, MissingFamilyAndDevice) {
  v1::SweepSpec spec = Issue();
  spec.clear_family();
  EXPECT_THAT(std::string(ValidateSweep(spec, 0).message()),
              StartsWith("family: missing; one of fc"));
  // An empty device means cpu.
  spec = Issue();
  spec.clear_device();
  EXPECT_TRUE(ValidateSweep(spec, 0).ok());
}

TEST(SweepValidationTest, ExactlyAtTheCapIsAllowed) {
  EXPECT_TRUE(ValidateSweep(Issue(), 10).ok());
  EXPECT_FALSE(ValidateSweep(Issue(), 9).ok());
  // Non-positive caps mean the default cap.
  EXPECT_TRUE(ValidateSweep(Issue(), 0).ok());
  EXPECT_TRUE(ValidateSweep(Issue(), -1).ok());
}

TEST(SweepValidationTest, SchemaTable) {
  ASSERT_EQ(Families().size(), 1u);
  EXPECT_EQ(AllowedFamilies(), "fc");
  const FamilySchema* fc = FindFamily("fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(FindFamily("FC"), nullptr);
  EXPECT_EQ(fc->params.size(), 5u);
  EXPECT_TRUE(std::is_sorted(
      fc->params.begin(), fc->params.end(),
      [](const ParamSchema& a, const ParamSchema& b) { return std::string(a.name) < b.name; }));
  EXPECT_EQ(FindParam(*fc, "layer")->max_value, 4096);
  EXPECT_EQ(FindParam(*fc, "batch")->max_value, int64_t{1} << 22);
  EXPECT_EQ(FindParam(*fc, "bogus"), nullptr);
}

TEST(ShuffledOrderTest, IsAPermutation) {
  for (size_t n : {0u, 1u, 2u, 7u, 1000u}) {
    std::vector<int32_t> order = ShuffledOrder(n, 42);
    ASSERT_EQ(order.size(), n);
    std::vector<int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(sorted[i], static_cast<int32_t>(i));
  }
}

TEST(ShuffledOrderTest, DeterministicPerSeedAndDifferentAcrossSeeds) {
  EXPECT_EQ(ShuffledOrder(100, 7), ShuffledOrder(100, 7));
  EXPECT_NE(ShuffledOrder(100, 7), ShuffledOrder(100, 8));
  std::vector<int32_t> identity(100);
  for (int i = 0; i < 100; ++i) identity[i] = i;
  EXPECT_NE(ShuffledOrder(100, 7), identity);
}

TEST(ShuffledOrderTest, EveryPositionIsReachable) {
  // Over many seeds element 0 lands in every slot of a small permutation.
  std::set<size_t> positions;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<int32_t> order = ShuffledOrder(5, seed);
    positions.insert(std::find(order.begin(), order.end(), 0) - order.begin());
  }
  EXPECT_EQ(positions.size(), 5u);
}

}  // namespace
}  // namespace paradnn::common
