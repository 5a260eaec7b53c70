#include "model/sweep.h"

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"

namespace paradnn::model {
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

const ParamRule& Schema(const char* name) { return *FindParam(*FindFamily("fc"), name); }

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

TEST(SweepValidationTest, StackSettingsAreAxesOfTheirOwn) {
  v1::SweepSpec spec = Issue();
  (*spec.mutable_stack())["blas_core"].add_values("as-installed");
  (*spec.mutable_stack())["blas_core"].add_values("auto");
  (*spec.mutable_stack())["aten_capability"].add_values("avx512");
  ASSERT_TRUE(ValidateSweep(spec, 0).ok()) << ValidateSweep(spec, 0);
  EXPECT_EQ(CountConfigurations(spec), 20);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 20u);
  // Innermost of the named axes, outside precision and optimizer.
  EXPECT_EQ((*configs)[0].stack().at("blas_core"), "as-installed");
  EXPECT_EQ((*configs)[1].stack().at("blas_core"), "auto");
  EXPECT_EQ((*configs)[0].params().at("node"), (*configs)[1].params().at("node"));
  EXPECT_NE((*configs)[1].params().at("node"), (*configs)[2].params().at("node"));
  for (const auto& c : *configs) EXPECT_EQ(c.stack().at("aten_capability"), "avx512");
}

TEST(SweepValidationTest, StackSettingsNameTheFieldAndWhatIsAllowed) {
  struct Case {
    std::string key;
    std::vector<std::string> values;
    std::string device;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"omp_threads",
       {"4"},
       "cpu",
       "stack.omp_threads: not a stack setting; allowed: blas_core, "
       "aten_capability"},
      {"aten_capability",
       {"auto", "avx1024"},
       "cpu",
       "stack.aten_capability[1]: 'avx1024' is not auto, as-installed or default, avx2 or avx512"},
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
  };
  for (const Case& c : cases) {
    v1::SweepSpec spec = Issue();
    spec.set_device(c.device);
    v1::StringValues& list = (*spec.mutable_stack())[c.key];
    for (const std::string& v : c.values) list.add_values(v);
    const absl::Status status = ValidateSweep(spec, 0);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.key;
    EXPECT_THAT(std::string(status.message()), StartsWith(c.error));
  }
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
                "family: 'bert' is not a known family; one of cnn|densenet121|fc|mobilenet_v1|"
                "noop|resnet50|retinanet|rnn|squeezenet1_0|torchscript|transformer"},
        BadCase{"unknown device", R"pb(name: "n" device: "gpu")pb",
                "device: 'gpu' is not one of cpu|cuda|tpu"},
        BadCase{"unknown key", R"pb(name: "n" params { key: "nodes" value { value: 3 } })pb",
                "params.nodes: unknown parameter of family fc; allowed: batch, input, "
                "inter_op_threads, intra_op_threads, layer, node, output"},
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
              StartsWith("family: missing; one of cnn|densenet121|fc|"));
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
  ASSERT_EQ(AllFamilies().size(), 11u);
  EXPECT_EQ(AllowedFamilies(),
            "cnn|densenet121|fc|mobilenet_v1|noop|resnet50|retinanet|rnn|squeezenet1_0|"
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
    // Every family takes batch and the framework settings.
    ASSERT_NE(FindParam(family, "batch"), nullptr);
    EXPECT_TRUE(FindParam(family, "batch")->required);
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
  EXPECT_EQ(fc->params.size(), 7u);
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
  EXPECT_EQ(FindFamily("torchscript")->params.size(), 3u);
}

// ---- every family -----------------------------------------------------------

v1::SweepSpec Cnn() {
  // clang-format off
  return Spec(R"pb(
    name: "cnn" family: "cnn"
    params { key: "block" value { range { min: 1 max: 3 add: 1 } } }
    params { key: "filter" value { value: 16 } }
    params { key: "image" value { value: 224 } }
    params { key: "output" value { value: 1000 } }
    params { key: "batch" value { values { values: [ 32, 64 ] } } }
    options { key: "block_fn" value { values: [ "residual", "bottleneck" ] } }
  )pb");
  // clang-format on
}

v1::SweepSpec Rnn() {
  // clang-format off
  return Spec(R"pb(
    name: "rnn" family: "rnn"
    params { key: "layer" value { value: 1 } }
    params { key: "embed" value { value: 100 } }
    params { key: "length" value { values { values: [ 10, 50 ] } } }
    params { key: "vocab" value { value: 32 } }
    params { key: "batch" value { value: 16 } }
    options { key: "cell" value { values: [ "rnn", "lstm", "gru" ] } }
  )pb");
  // clang-format on
}

v1::SweepSpec TorchScript() {
  // clang-format off
  return Spec(R"pb(
    name: "ts" family: "torchscript"
    params { key: "batch" value { values { values: [ 8, 16 ] } } }
    torchscript {
      content: "PK-model-bytes" file_name: "model.pt" loss: "cross_entropy"
      inputs { name: "x" shape: [ -1, 3, 32, 32 ] dtype: "float32" }
      target { name: "y" shape: [ -1 ] dtype: "int64" low: 0 high: 10 }
    }
  )pb");
  // clang-format on
}

std::string Error(const v1::SweepSpec& spec) {
  absl::Status s = ValidateSweep(spec, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_FALSE(ExpandSweep(spec, 0).ok());
  return std::string(s.message());
}

TEST(FamilySweepTest, CnnOptionsAreAnAxisAfterTheParams) {
  ASSERT_TRUE(ValidateSweep(Cnn(), 0).ok()) << ValidateSweep(Cnn(), 0);
  EXPECT_EQ(CountConfigurations(Cnn()), 3 * 2 * 2);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(Cnn(), 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 12u);
  // batch (outermost), block, then block_fn turns fastest.
  std::vector<std::tuple<int64_t, int64_t, std::string>> got;
  for (const v1::ModelConfig& c : *configs) {
    EXPECT_EQ(c.family(), "cnn");
    EXPECT_EQ(c.params().size(), 5u);
    // blocks has no default: not written; memory_format's default is.
    EXPECT_EQ(c.options().size(), 2u);
    EXPECT_EQ(c.options().at("memory_format"), "channels_last");
    got.emplace_back(c.params().at("batch"), c.params().at("block"), c.options().at("block_fn"));
  }
  EXPECT_EQ(got[0], std::make_tuple(int64_t{32}, int64_t{1}, std::string("residual")));
  EXPECT_EQ(got[1], std::make_tuple(int64_t{32}, int64_t{1}, std::string("bottleneck")));
  EXPECT_EQ(got[2], std::make_tuple(int64_t{32}, int64_t{2}, std::string("residual")));
  EXPECT_EQ(got[11], std::make_tuple(int64_t{64}, int64_t{3}, std::string("bottleneck")));
}

TEST(FamilySweepTest, OptionsComeBeforePrecisionAndOptimizer) {
  v1::SweepSpec spec = Cnn();
  spec.add_precision("float32");
  spec.add_precision("bfloat16");
  EXPECT_EQ(CountConfigurations(spec), 24);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  EXPECT_EQ((*configs)[0].options().at("block_fn"), "residual");
  EXPECT_EQ((*configs)[0].precision(), "float32");
  EXPECT_EQ((*configs)[1].options().at("block_fn"), "residual");
  EXPECT_EQ((*configs)[1].precision(), "bfloat16");
  EXPECT_EQ((*configs)[2].options().at("block_fn"), "bottleneck");
  std::set<std::string> distinct;
  for (const auto& c : *configs) distinct.insert(c.SerializeAsString());
  EXPECT_EQ(distinct.size(), 24u);
}

TEST(FamilySweepTest, CnnImageBelow193IsInvalidAndSaysWhy) {
  v1::SweepSpec spec = Cnn();
  (*spec.mutable_params())["image"] = Param("value: 192");
  EXPECT_EQ(Error(spec),
            "params.image: 192 is out of range; allowed 193..4096: the 7x7 average pool needs a "
            "final map of at least 7 (image >= 193)");
  (*spec.mutable_params())["image"] = Param("range { min: 100 max: 300 add: 100 }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.range.min: 100 is out of range; allowed "
                                      "193..4096: the 7x7 average pool"));
  (*spec.mutable_params())["image"] = Param("value: 193");
  EXPECT_TRUE(ValidateSweep(spec, 0).ok());
}

TEST(FamilySweepTest, CnnBlockFnIsRequiredAndChecked) {
  v1::SweepSpec spec = Cnn();
  spec.mutable_options()->erase("block_fn");
  EXPECT_EQ(Error(spec),
            "options.block_fn: missing; family cnn requires block_fn, one of residual|bottleneck");
  (*spec.mutable_options())["block_fn"].add_values("residual");
  (*spec.mutable_options())["block_fn"].add_values("dense");
  EXPECT_EQ(Error(spec), "options.block_fn[1]: 'dense' is not one of residual|bottleneck");
  (*spec.mutable_options())["block_fn"].set_values(1, "residual");
  EXPECT_EQ(Error(spec), "options.block_fn[1]: 'residual' is repeated (also at [0])");
  (*spec.mutable_options())["block_fn"].clear_values();
  EXPECT_EQ(Error(spec), "options.block_fn: empty list; give at least one of residual|bottleneck");
  spec = Cnn();
  (*spec.mutable_options())["block_func"].add_values("residual");
  EXPECT_EQ(Error(spec),
            "options.block_func: unknown option of family cnn; allowed: block_fn, "
            "blocks, memory_format");
}

// A free-text option has millions of valid values; repeats are found in a
// long list of distinct ones too (by a hash, not by comparing every pair).
TEST(FamilySweepTest, RepeatedFreeTextOptionValueNamesItsFirstIndex) {
  v1::SweepSpec spec = Cnn();
  v1::StringValues& blocks = (*spec.mutable_options())["blocks"];
  for (int a = 1; a <= 64; ++a) {
    for (int b = 1; b <= 64; ++b) blocks.add_values(absl::StrCat(a, ",", b, ",1,1"));
  }
  blocks.add_values("7,9,1,1");
  EXPECT_EQ(Error(spec), "options.blocks[4096]: '7,9,1,1' is repeated (also at [392])");
}

TEST(FamilySweepTest, CnnBlocksArePerGroupCounts) {
  v1::SweepSpec spec = Cnn();
  (*spec.mutable_options())["blocks"].add_values("3,4,6,3");
  (*spec.mutable_options())["blocks"].add_values("3,4,23,3");
  ASSERT_TRUE(ValidateSweep(spec, 0).ok()) << ValidateSweep(spec, 0);
  EXPECT_EQ(CountConfigurations(spec), 24);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok());
  // block_fn, then blocks (sorted option keys; blocks turns fastest).
  EXPECT_EQ((*configs)[0].options().at("blocks"), "3,4,6,3");
  EXPECT_EQ((*configs)[1].options().at("blocks"), "3,4,23,3");
  EXPECT_EQ((*configs)[1].options().at("block_fn"), "residual");
  EXPECT_EQ((*configs)[2].options().at("block_fn"), "bottleneck");
  for (const char* bad : {"3,4,6", "3,4,6,3,1", "3,4,06,3", "3,4,0,3", "3,4,65,3", "3, 4,6,3",
                          "a,b,c,d", "3,4,6,3,"}) {
    v1::SweepSpec b = Cnn();
    (*b.mutable_options())["blocks"].add_values(bad);
    EXPECT_EQ(Error(b), absl::StrCat("options.blocks[0]: '", bad,
                                     "' is not four comma-separated block counts 1..64 like "
                                     "\"3,4,6,3\""))
        << bad;
  }
  // Empty is the option's default: every group takes `block` (what a stored
  // config says when it did not set blocks).
  v1::SweepSpec uniform = Cnn();
  (*uniform.mutable_options())["blocks"].add_values("");
  (*uniform.mutable_options())["blocks"].add_values("3,4,6,3");
  EXPECT_TRUE(ValidateSweep(uniform, 0).ok()) << ValidateSweep(uniform, 0);
}

TEST(FamilySweepTest, RnnCellsMultiplyTheGrid) {
  ASSERT_TRUE(ValidateSweep(Rnn(), 0).ok()) << ValidateSweep(Rnn(), 0);
  EXPECT_EQ(CountConfigurations(Rnn()), 6);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(Rnn(), 0);
  ASSERT_TRUE(configs.ok());
  std::vector<std::string> cells;
  for (const auto& c : *configs) cells.push_back(c.options().at("cell"));
  EXPECT_EQ(cells, (std::vector<std::string>{"rnn", "lstm", "gru", "rnn", "lstm", "gru"}));
  v1::SweepSpec spec = Rnn();
  spec.mutable_options()->erase("cell");
  EXPECT_EQ(Error(spec), "options.cell: missing; family rnn requires cell, one of rnn|lstm|gru");
  (*spec.mutable_options())["cell"].add_values("LSTM");
  EXPECT_EQ(Error(spec), "options.cell[0]: 'LSTM' is not one of rnn|lstm|gru");
  spec = Rnn();
  spec.mutable_params()->erase("vocab");
  EXPECT_EQ(Error(spec),
            "params.vocab: missing; family rnn requires batch, embed, layer, length, vocab");
}

TEST(FamilySweepTest, ImageModelsNeedOnlyABatchAndGetDefaults) {
  for (const char* family : {"resnet50", "densenet121", "mobilenet_v1", "squeezenet1_0"}) {
    SCOPED_TRACE(family);
    v1::SweepSpec spec;
    spec.set_name("real");
    spec.set_family(family);
    (*spec.mutable_params())["batch"] = Param("values { values: [ 1, 32 ] }");
    absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
    ASSERT_TRUE(configs.ok()) << configs.status();
    ASSERT_EQ(configs->size(), 2u);
    for (const auto& c : *configs) {
      EXPECT_EQ(c.params().at("image"), 224);
      EXPECT_EQ(c.params().at("output"), 1000);
      EXPECT_EQ(c.params().size(), 3u);
      ASSERT_EQ(c.options().size(), 1u);
      EXPECT_EQ(c.options().at("memory_format"), "channels_last");
    }
    // Given values replace the defaults and become axes.
    (*spec.mutable_params())["image"] = Param("values { values: [ 32, 299 ] }");
    configs = ExpandSweep(spec, 0);
    ASSERT_TRUE(configs.ok());
    EXPECT_EQ(configs->size(), 4u);
    EXPECT_EQ((*configs)[1].params().at("image"), 299);
    (*spec.mutable_params())["image"] = Param("value: 31");
    EXPECT_EQ(Error(spec), "params.image: 31 is out of range; allowed 32..4096");
    spec.mutable_params()->erase("batch");
    spec.mutable_params()->erase("image");
    EXPECT_THAT(Error(spec), StartsWith("params.batch: missing; family "));
  }
}

TEST(FamilySweepTest, RetinaNetImagesAreMultiplesOf32) {
  v1::SweepSpec spec;
  spec.set_name("retina");
  spec.set_family("retinanet");
  (*spec.mutable_params())["batch"] = Param("value: 2");
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  EXPECT_EQ(configs->front().params().at("image"), 512);
  EXPECT_EQ(configs->front().params().at("output"), 80);

  const std::string why =
      "allowed 64..4096 in multiples of 32: the FPN adds upsampled maps to the backbone's "
      "stride-8, -16 and -32 maps, which line up only when image is a multiple of 32";
  (*spec.mutable_params())["image"] = Param("value: 500");
  EXPECT_EQ(Error(spec), absl::StrCat("params.image: 500 is not a multiple of 32; ", why));
  (*spec.mutable_params())["image"] = Param("value: 32");
  EXPECT_EQ(Error(spec), absl::StrCat("params.image: 32 is out of range; ", why));
  (*spec.mutable_params())["image"] = Param("values { values: [ 512, 600 ] }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.values[1]: 600 is not a multiple of 32"));
  (*spec.mutable_params())["image"] = Param("range { min: 512 max: 1024 add: 48 }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.range.add: 48 is not a multiple of 32"));
  (*spec.mutable_params())["image"] = Param("range { min: 64 max: 512 mul: 1.5 }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.range.mul: 1.5 reaches 144, not a multiple "
                                      "of 32"));
  // A range's max need not lie on the grid; every value reached does.
  (*spec.mutable_params())["image"] = Param("range { min: 64 max: 1000 mul: 2 }");
  auto values = ParamValues(spec.params().at("image"),
                            *FindParam(*FindFamily("retinanet"), "image"), "params.image");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<int64_t>{64, 128, 256, 512}));
  (*spec.mutable_params())["image"] = Param("range { min: 512 max: 1000 add: 256 }");
  EXPECT_TRUE(ValidateSweep(spec, 0).ok()) << ValidateSweep(spec, 0);
}

TEST(FamilySweepTest, TransformerDefaults) {
  v1::SweepSpec spec;
  spec.set_name("t");
  spec.set_family("transformer");
  (*spec.mutable_params())["batch"] = Param("values { values: [ 8, 16 ] }");
  (*spec.mutable_params())["length"] = Param("values { values: [ 64, 256 ] }");
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 4u);
  for (const auto& c : *configs) EXPECT_EQ(c.params().at("vocab"), 32000);
  spec.mutable_params()->erase("length");
  configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok());
  EXPECT_EQ(configs->front().params().at("length"), 128);
  (*spec.mutable_params())["image"] = Param("value: 224");
  EXPECT_EQ(Error(spec),
            "params.image: unknown parameter of family transformer; allowed: batch, "
            "inter_op_threads, intra_op_threads, length, vocab");
}

TEST(FamilySweepTest, ThreadCountsAreSweepVariablesOfEveryFamily) {
  v1::SweepSpec spec = Cnn();
  (*spec.mutable_params())["intra_op_threads"] = Param("values { values: [ 1, 2, 4 ] }");
  (*spec.mutable_params())["inter_op_threads"] = Param("value: 1");
  EXPECT_EQ(CountConfigurations(spec), 36);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  std::set<int64_t> intra;
  for (const auto& c : *configs) {
    intra.insert(c.params().at("intra_op_threads"));
    EXPECT_EQ(c.params().at("inter_op_threads"), 1);
  }
  EXPECT_EQ(intra, (std::set<int64_t>{1, 2, 4}));
  // Left out, they are not written: the job's run settings apply.
  configs = ExpandSweep(Rnn(), 0);
  ASSERT_TRUE(configs.ok());
  EXPECT_EQ(configs->front().params().count("intra_op_threads"), 0u);
  spec.mutable_params()->erase("intra_op_threads");
  spec.mutable_run()->set_inter_op_threads(2);
  EXPECT_EQ(Error(spec),
            "params.inter_op_threads: also given as run.inter_op_threads; give it in one place "
            "(params to sweep it)");
}

TEST(FamilySweepTest, TorchScriptConfigsCarryTheModelWithoutItsBytes) {
  ASSERT_TRUE(ValidateSweep(TorchScript(), 0).ok()) << ValidateSweep(TorchScript(), 0);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(TorchScript(), 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 2u);
  for (const auto& c : *configs) {
    EXPECT_EQ(c.family(), "torchscript");
    EXPECT_TRUE(c.torchscript().content().empty());
    EXPECT_EQ(c.torchscript().file_name(), "model.pt");
    EXPECT_EQ(c.torchscript().loss(), "cross_entropy");
    ASSERT_EQ(c.torchscript().inputs_size(), 1);
    EXPECT_EQ(c.torchscript().inputs(0).shape(0), -1);
    EXPECT_EQ(c.torchscript().target().high(), 10);
  }
  // A stored model named by its hash alone (a re-submission).
  v1::SweepSpec spec = TorchScript();
  spec.mutable_torchscript()->clear_content();
  spec.mutable_torchscript()->set_sha256(std::string(64, 'a'));
  configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  EXPECT_EQ(configs->front().torchscript().sha256(), std::string(64, 'a'));
}

TEST(FamilySweepTest, TorchScriptModelIsChecked) {
  struct Case {
    std::function<void(v1::TorchScriptModel*)> edit;
    std::string expected;  // the message starts with this
  };
  const std::vector<Case> cases = {
      {[](auto* m) { m->clear_content(); },
       "torchscript.content: empty; give the model file (or the sha256"},
      {[](auto* m) { m->set_sha256("ABC"); },
       "torchscript.sha256: 'ABC' is not 64 lowercase hex digits"},
      {[](auto* m) { m->clear_inputs(); }, "torchscript.inputs: empty; declare forward()'s"},
      {[](auto* m) { m->mutable_inputs(0)->clear_shape(); },
       "torchscript.inputs[0].shape: 0 dimensions; give 1..8"},
      {[](auto* m) { m->mutable_inputs(0)->set_shape(1, 0); },
       "torchscript.inputs[0].shape[1]: 0 is out of range"},
      {[](auto* m) { m->mutable_inputs(0)->set_shape(1, -1); },
       "torchscript.inputs[0].shape: 2 dimensions are -1; only the batch is"},
      {[](auto* m) { m->mutable_inputs(0)->set_shape(0, 4); },
       "torchscript.inputs: no shape has a -1"},
      {[](auto* m) { m->mutable_inputs(0)->set_dtype("float64"); },
       "torchscript.inputs[0].dtype: 'float64' is not one of float32|int64"},
      {[](auto* m) { m->mutable_inputs(0)->set_dtype("int64"); },
       "torchscript.inputs[0].high: 0 must be > low 0 (values are randint(low, high))"},
      {[](auto* m) { m->set_loss("hinge"); },
       "torchscript.loss: 'hinge' is not one of cross_entropy|mse|sum|output"},
      {[](auto* m) { m->clear_loss(); }, "torchscript.loss: '' is not one of"},
      {[](auto* m) { m->clear_target(); },
       "torchscript.target: missing; loss cross_entropy needs a target tensor"},
      {[](auto* m) { m->mutable_target()->set_dtype("float32"); },
       "torchscript.target.dtype: 'float32'; loss cross_entropy needs int64"},
      {[](auto* m) { m->set_loss("sum"); }, "torchscript.target: loss sum takes no target"},
      {[](auto* m) {
         m->set_loss("mse");
         m->mutable_target()->set_dtype("int64");
       },
       "torchscript.target.dtype: 'int64'; loss mse needs float32"},
  };
  for (const Case& c : cases) {
    v1::SweepSpec spec = TorchScript();
    c.edit(spec.mutable_torchscript());
    EXPECT_THAT(Error(spec), StartsWith(c.expected));
  }
  v1::SweepSpec spec = TorchScript();
  spec.clear_torchscript();
  EXPECT_THAT(Error(spec), StartsWith("torchscript: missing; family torchscript needs"));
  // Losses without a target.
  for (const char* loss : {"sum", "output"}) {
    spec = TorchScript();
    spec.mutable_torchscript()->set_loss(loss);
    spec.mutable_torchscript()->clear_target();
    EXPECT_TRUE(ValidateSweep(spec, 0).ok()) << loss << ": " << ValidateSweep(spec, 0);
  }
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
    if (family->check_sweep != nullptr) {
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
