#include "model/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/families/allreduce.h"
#include "model/families/torchscript.h"
#include "tests/unit/model/sweep_test_specs.h"

namespace paradnn::model {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const ParamRule& Schema(const char* name) { return *FindParam(*FindFamily("fc"), name); }

TEST(SweepValidationTest, IssueExampleIsValidAndHasTenConfigurations) {
  std::vector<v1::ModelConfig> configs;
  ASSERT_NO_FATAL_FAILURE(ExpandValid(Issue(), kDefaultMaxJobs, 10, &configs));
  for (const v1::ModelConfig& c : configs) {
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

TEST(SweepValidationTest, StackSettingsAreAxesOfTheirOwn) {
  v1::SweepSpec spec = Issue();
  SetStack(&spec, "blas_core", {"as-installed", "auto"});
  SetStack(&spec, "aten_capability", {"avx512"});
  std::vector<v1::ModelConfig> configs;
  ASSERT_NO_FATAL_FAILURE(ExpandValid(spec, 0, 20, &configs));
  // Innermost of the named axes, outside precision and optimizer.
  EXPECT_EQ(configs[0].stack().at("blas_core"), "as-installed");
  EXPECT_EQ(configs[1].stack().at("blas_core"), "auto");
  EXPECT_EQ(configs[0].params().at("node"), configs[1].params().at("node"));
  EXPECT_NE(configs[1].params().at("node"), configs[2].params().at("node"));
  for (const auto& c : configs) EXPECT_EQ(c.stack().at("aten_capability"), "avx512");
}

TEST(SweepValidationTest, StackSettingsNameTheFieldAndWhatIsAllowed) {
  ExpectStacksRefused(
      Issue(),
      {
          {"omp_threads",
           {"4"},
           "cpu",
           "stack.omp_threads: not a stack setting; allowed: blas_core, "
           "aten_capability"},
          {"aten_capability",
           {"auto", "avx1024"},
           "cpu",
           "stack.aten_capability[1]: 'avx1024' is not auto, as-installed or default, avx2 or "
           "avx512"},
          {"blas_core",
           {"Sky lake"},
           "cpu",
           "stack.blas_core[0]: 'Sky lake' is not auto, as-installed or an OpenBLAS core name"},
          {"blas_core", {"auto", "auto"}, "cpu", "stack.blas_core[1]: 'auto' is listed twice"},
          {"blas_core", {}, "cpu", "stack.blas_core: empty list"},
          {"blas_core",
           {"auto"},
           "cuda",
           "stack.blas_core: stack settings choose CPU libraries' kernels; this sweep's device is "
           "cuda"},
      });
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
  for (const auto& [k, v] : overlay.options()) (*spec.mutable_options())[k] = v;
  if (overlay.has_torchscript()) *spec.mutable_torchscript() = overlay.torchscript();
  if (overlay.precision_size() > 0) *spec.mutable_precision() = overlay.precision();
  if (overlay.optimizer_size() > 0) *spec.mutable_optimizer() = overlay.optimizer();
  if (overlay.has_run()) *spec.mutable_run() = overlay.run();
  if (overlay.repeats() != 0) spec.set_repeats(overlay.repeats());
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
        BadCase{"unknown family", R"pb(name: "n" family: "bert")pb",
                "family: 'bert' is not a known family; one of allreduce|cnn|densenet121|fc|inception|mobilenet_v1|"
                "noop|resnet50|retinanet|rnn|squeezenet1_0|torchscript|transformer"},
        BadCase{"unknown device", R"pb(name: "n" device: "gpu")pb",
                "device: 'gpu' is not one of cpu|cuda|tpu"},
        BadCase{"unknown key", R"pb(name: "n" params { key: "nodes" value { value: 3 } })pb",
                "params.nodes: unknown parameter of family fc; allowed: batch, devices, hosts, "
                "input, inter_op_threads, intra_op_threads, layer, node, output, overlap"},
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
        BadCase{"NaN run setting", R"pb(name: "n" run { ci: nan })pb", "run.ci: nan"},
        BadCase{"budget nothing fits in", R"pb(name: "n" run { budget_seconds: 1e-300 })pb",
                "run.budget: 1e-300 is out of range; allowed 1 <= seconds <= 31536000"},
        BadCase{"target interval too wide", R"pb(name: "n" run { target_interval: 1.5 })pb",
                "run.target_interval: 1.5 is out of range; allowed a fraction 0.001 <= target < 1"},
        BadCase{"target interval with a cap below the first rounds",
                R"pb(name: "n" repeats: 2 run { target_interval: 0.03 })pb",
                "repeats: 2 with run.target_interval is the most repeats a configuration may "
                "take; allowed 3..100 (default 10)"},
        BadCase{"target interval's default cap counts against --max-jobs",
                R"pb(name: "n" run { target_interval: 0.03 })pb",
                "sweep expands to 100 jobs (10 repeats); the limit is 99 (--max-jobs)", 99},
        BadCase{"too many configurations", R"pb(name: "n")pb",
                "sweep expands to 10 configurations; the limit is 9 (--max-jobs)", 9},
        BadCase{"option for a family without options",
                R"pb(name: "n" options { key: "cell" value { values: "lstm" } })pb",
                "options.cell: family fc takes no options"},
        BadCase{"thread count out of range",
                R"pb(name: "n" params { key: "intra_op_threads" value { value: 0 } })pb",
                "params.intra_op_threads: 0 is out of range; allowed 1..1024"},
        BadCase{"thread count in params and run",
                R"pb(name: "n" params { key: "intra_op_threads" value { value: 2 } }
                     run { intra_op_threads: 4 })pb",
                "params.intra_op_threads: also given as run.intra_op_threads"},
        BadCase{"model for a family other than torchscript",
                R"pb(name: "n" torchscript { sha256: "ab" })pb",
                "torchscript: only family torchscript takes a model; this sweep's family is 'fc'"}));
// clang-format on

TEST(SweepValidationTest, MissingRequiredParameter) {
  v1::SweepSpec spec = Issue();
  spec.mutable_params()->erase("output");
  absl::Status s = ValidateSweep(spec, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "params.output: missing; family fc requires batch, input, layer, node, output");
}

TEST(SweepValidationTest, ATargetIntervalMayHaveABudgetAndRepeatsAsItsCap) {
  v1::SweepSpec spec = Issue();
  spec.mutable_run()->set_target_interval(0.03);
  EXPECT_EQ(MaxRepeats(spec), kDefaultTargetRepeats);
  spec.set_repeats(6);
  spec.mutable_run()->set_budget_seconds(600);
  EXPECT_TRUE(ValidateSweep(spec, 0).ok()) << "the budget bounds the repeats' time";
  EXPECT_EQ(MaxRepeats(spec), 6);
  spec.mutable_run()->set_target_interval(0);
  EXPECT_EQ(ValidateSweep(spec, 0).code(), absl::StatusCode::kInvalidArgument)
      << "without a target, a budget still excludes repeats";
}

TEST(ConfigKeyTest, EqualForEqualConfigurationsStackIncluded) {
  v1::ModelConfig a;
  a.set_family("fc");
  (*a.mutable_params())["node"] = 16;
  (*a.mutable_params())["batch"] = 8;
  v1::ModelConfig b;
  b.set_family("fc");
  (*b.mutable_params())["batch"] = 8;
  (*b.mutable_params())["node"] = 16;
  EXPECT_EQ(ConfigKey(a), ConfigKey(b));
  (*b.mutable_stack())["blas_core"] = "Prescott";
  EXPECT_NE(ConfigKey(a), ConfigKey(b));
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
              StartsWith("family: missing; one of allreduce|cnn|densenet121|fc|"));
  // An empty device means cpu.
  spec = Issue();
  spec.clear_device();
  EXPECT_TRUE(ValidateSweep(spec, 0).ok());
}

// Found by tests/fuzz: a spec read from a file never went through
// protobuf's UTF-8 check, so the client accepted strings the coordinator's
// protobuf then refused. ValidateSweep checks every string field.
TEST(SweepValidationTest, StringFieldsMustBeUtf8) {
  v1::SweepSpec spec = Issue();
  spec.set_name("fc-\xff");
  EXPECT_EQ(ValidateSweep(spec, 0).message(),
            "name: byte 3 of 'fc-\\xff' is not UTF-8; use UTF-8 text");
  spec = Issue();
  spec.set_source_text("name: \xc3(");
  EXPECT_THAT(std::string(ValidateSweep(spec, 0).message()), StartsWith("source_text: byte 6 of"));
  spec = Issue();
  (*spec.mutable_params())["la\xe0\x80\xafyer"].set_value(1);  // an overlong '/'
  EXPECT_THAT(std::string(ValidateSweep(spec, 0).message()), StartsWith("params: byte 2 of"));
  spec = Issue();
  spec.add_optimizer("sgd\xed\xa0\x80");  // a surrogate
  EXPECT_THAT(std::string(ValidateSweep(spec, 0).message()), StartsWith("optimizer[0]: byte 3 of"));
  spec = Issue();
  (*spec.mutable_options())["cell\xff"].add_values("lstm");
  EXPECT_THAT(std::string(ValidateSweep(spec, 0).message()), StartsWith("options: byte 4 of"));
  spec = Issue();
  (*spec.mutable_stack())["blas_core"].add_values("Haswell\xff");
  EXPECT_THAT(std::string(ValidateSweep(spec, 0).message()),
              StartsWith("stack.blas_core[0]: byte 7 of"));
  spec = Issue();
  spec.set_name("f\xc3\xa9-\xe4\xb8\xad-\xf0\x9f\x98\x80");  // é, 中, 😀
  EXPECT_TRUE(ValidateSweep(spec, 0).ok());
}

TEST(SweepValidationTest, FirstNonUtf8Byte) {
  EXPECT_EQ(FirstNonUtf8Byte(""), absl::string_view::npos);
  EXPECT_EQ(FirstNonUtf8Byte("plain \x7f"), absl::string_view::npos);
  EXPECT_EQ(FirstNonUtf8Byte("\xf4\x8f\xbf\xbf"), absl::string_view::npos);  // U+10FFFF
  EXPECT_EQ(FirstNonUtf8Byte("ab\xf4\x90\x80\x80"), 2u);                     // U+110000
  EXPECT_EQ(FirstNonUtf8Byte("a\xc0\xaf"), 1u);                              // overlong
  EXPECT_EQ(FirstNonUtf8Byte("a\xe2\x82"), 1u);                              // truncated
  EXPECT_EQ(FirstNonUtf8Byte("\x80"), 0u);                                   // lone continuation
}

// Found by tests/fuzz: an unknown key was echoed whole, however long.
TEST(SweepValidationTest, UnknownKeysAreEchoedCut) {
  v1::SweepSpec spec = Issue();
  const std::string key(10000, 'k');
  (*spec.mutable_params())[key].set_value(1);
  absl::Status s = ValidateSweep(spec, 0);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("params." + std::string(64, 'k') + "...: unknown"));
  EXPECT_LT(s.message().size(), 400u);
  spec = Issue();
  (*spec.mutable_options())[key].add_values("x");
  s = ValidateSweep(spec, 0);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("options." + std::string(64, 'k') + "...: family"));
}

TEST(SweepValidationTest, ExactlyAtTheCapIsAllowed) {
  EXPECT_TRUE(ValidateSweep(Issue(), 10).ok());
  EXPECT_FALSE(ValidateSweep(Issue(), 9).ok());
  // Non-positive caps mean the default cap.
  EXPECT_TRUE(ValidateSweep(Issue(), 0).ok());
  EXPECT_TRUE(ValidateSweep(Issue(), -1).ok());
}

TEST(SweepValidationTest, SchemaTable) {
  ASSERT_EQ(AllFamilies().size(), 13u);
  EXPECT_EQ(AllowedFamilies(),
            "allreduce|cnn|densenet121|fc|inception|mobilenet_v1|noop|resnet50|retinanet|rnn|"
            "squeezenet1_0|"
            "torchscript|transformer");
  auto by_name = [](const auto& a, const auto& b) { return std::string(a.name) < b.name; };
  EXPECT_TRUE(std::is_sorted(
      AllFamilies().begin(), AllFamilies().end(),
      [](const FamilyDef* a, const FamilyDef* b) { return std::string(a->name) < b->name; }));
  for (const FamilyDef* def : AllFamilies()) {
    const FamilyDef& family = *def;
    SCOPED_TRACE(family.name);
    EXPECT_TRUE(std::is_sorted(family.params.begin(), family.params.end(), by_name));
    EXPECT_TRUE(std::is_sorted(family.options.begin(), family.options.end(), by_name));
    // Every family takes batch (but allreduce, whose step trains no
    // examples) and the framework settings.
    if (std::string(family.name) != kAllReduceFamilyName) {
      ASSERT_NE(FindParam(family, "batch"), nullptr);
      EXPECT_TRUE(FindParam(family, "batch")->required);
    }
    for (const char* threads : {"intra_op_threads", "inter_op_threads"}) {
      const ParamRule* p = FindParam(family, threads);
      ASSERT_NE(p, nullptr) << threads;
      EXPECT_FALSE(p->required);
      EXPECT_EQ(p->default_value, 0);
      EXPECT_EQ(p->min_value, 1);
      EXPECT_EQ(p->max_value, 1024);
    }
    for (const ParamRule& p : family.params) {
      EXPECT_FALSE(p.required && p.default_value != 0) << p.name << ": required with a default";
      if (p.default_value != 0) {
        EXPECT_GE(p.default_value, p.min_value) << p.name;
        EXPECT_LE(p.default_value, p.max_value) << p.name;
      }
    }
    EXPECT_NE(std::string(family.summary), "");
    EXPECT_TRUE(std::string(family.roof_kernel) == kMatmulRoof ||
                std::string(family.roof_kernel) == kConvRoof);
    EXPECT_NE(family.count, nullptr);
  }
  const FamilyDef* fc = FindFamily("fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(FindFamily("FC"), nullptr);
  EXPECT_EQ(fc->params.size(), 10u);
  EXPECT_TRUE(fc->options.empty());
  EXPECT_EQ(FindParam(*fc, "layer")->max_value, 4096);
  EXPECT_EQ(FindParam(*fc, "batch")->max_value, int64_t{1} << 22);
  EXPECT_EQ(FindParam(*fc, "bogus"), nullptr);

  const FamilyDef* cnn = FindFamily("cnn");
  ASSERT_NE(cnn, nullptr);
  EXPECT_EQ(FindParam(*cnn, "image")->min_value, 193);
  EXPECT_EQ(FindParam(*cnn, "block")->max_value, 64);
  EXPECT_EQ(FindOption(*cnn, "block_fn")->default_value, nullptr);
  EXPECT_EQ(AllowedOptionValues(*FindOption(*cnn, "block_fn")), "residual|bottleneck");
  EXPECT_STREQ(FindOption(*cnn, "blocks")->default_value, "");
  EXPECT_EQ(AllowedOptionValues(*FindOption(*FindFamily("rnn"), "cell")), "rnn|lstm|gru");
  for (const char* name : {"resnet50", "densenet121", "mobilenet_v1", "squeezenet1_0"}) {
    const FamilyDef* f = FindFamily(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(FindParam(*f, "image")->default_value, 224) << name;
    EXPECT_EQ(FindParam(*f, "image")->min_value, 32) << name;
    EXPECT_EQ(FindParam(*f, "output")->default_value, 1000) << name;
  }
  const FamilyDef* retinanet = FindFamily("retinanet");
  EXPECT_EQ(FindParam(*retinanet, "image")->default_value, 512);
  EXPECT_EQ(FindParam(*retinanet, "image")->multiple_of, 32);
  EXPECT_EQ(FindParam(*retinanet, "output")->default_value, 80);
  const FamilyDef* transformer = FindFamily("transformer");
  EXPECT_EQ(FindParam(*transformer, "length")->default_value, 128);
  EXPECT_EQ(FindParam(*transformer, "vocab")->default_value, 32000);
  EXPECT_EQ(FindFamily("torchscript")->params.size(), 6u);
}

// ---- every family -----------------------------------------------------------

// One table: every configuration a sweep validation accepts, the job parser
// (what the runner and the coordinator's planner run) accepts too. Each
// family's every parameter at its extremes (on its grid), every option at
// every allowed value.
TEST(SweepValidationTest, EveryConfigurationTheSweepAcceptsTheJobParserAccepts) {
  for (const FamilyDef* family : AllFamilies()) {
    SCOPED_TRACE(family->name);
    v1::SweepSpec spec;
    spec.set_name("extremes");
    spec.set_family(family->name);
    spec.set_device("cuda");  // params.devices above 1 is a CUDA sweep's
    for (const ParamRule& p : family->params) {
      const int64_t step = std::max<int64_t>(1, p.multiple_of);
      const int64_t low = (p.min_value + step - 1) / step * step;
      const int64_t high = p.max_value / step * step;
      v1::IntValues* values = (*spec.mutable_params())[p.name].mutable_values();
      values->add_values(low);
      if (high != low) values->add_values(high);
    }
    for (const OptionRule& o : family->options) {
      v1::StringValues& values = (*spec.mutable_options())[o.name];
      for (const char* value : o.allowed) values.add_values(value);
      if (o.allowed.empty() && o.default_value == nullptr) ADD_FAILURE() << o.name;
      if (o.allowed.empty()) spec.mutable_options()->erase(o.name);
    }
    if (std::string(family->name) == kTorchScriptFamilyName) {
      v1::TorchScriptModel* model = spec.mutable_torchscript();
      model->set_sha256(std::string(64, 'a'));
      v1::TensorSpec* input = model->add_inputs();
      input->add_shape(-1);
      input->add_shape(8);
      model->set_loss("sum");
    }
    absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
    ASSERT_TRUE(configs.ok()) << configs.status();
    EXPECT_GT(configs->size(), 1u);
    for (const v1::ModelConfig& config : *configs) {
      absl::StatusOr<ModelSpec> parsed = ParseModelSpec(config, FieldStyle::kProto);
      ASSERT_TRUE(parsed.ok()) << parsed.status() << " for " << config.ShortDebugString();
    }
  }
}

}  // namespace
}  // namespace paradnn::model
