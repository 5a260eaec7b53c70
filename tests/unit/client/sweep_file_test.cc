#include "client/sweep_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_replace.h"
#include "model/sweep.h"
#include "tests/support/temp_file.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The issue's example, exactly as written (line numbers matter below).
constexpr const char* kIssueExample =
    "name: fc-small\n"                       // 1
    "family: fc\n"                           // 2
    "device: cpu\n"                          // 3
    "params:\n"                              // 4
    "  layer: 4\n"                           // 5
    "  node: {min: 32, max: 512, mul: 2}\n"  // 6
    "  input: 2000\n"                        // 7
    "  output: 200\n"                        // 8
    "  batch: {values: [64, 256]}\n"         // 9
    "precision: [float32]\n"                 // 10
    "run: {ci: 0.02, max_seconds: 10}\n";    // 11

absl::StatusOr<v1::SweepSpec> Parse(const std::string& text, int64_t max_jobs = 0) {
  return ParseSweepText(text, "t.yaml", max_jobs);
}

std::string Replace(const std::string& from, const std::string& to) {
  std::string text = kIssueExample;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(SweepFileTest, AcceptsTheIssueExampleAsWritten) {
  absl::StatusOr<v1::SweepSpec> spec = Parse(kIssueExample);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "fc-small");
  EXPECT_EQ(spec->family(), "fc");
  EXPECT_EQ(spec->device(), "cpu");
  ASSERT_EQ(spec->params().size(), 5u);
  EXPECT_EQ(spec->params().at("layer").value(), 4);
  EXPECT_EQ(spec->params().at("input").value(), 2000);
  EXPECT_EQ(spec->params().at("output").value(), 200);
  const v1::IntRange& node = spec->params().at("node").range();
  EXPECT_EQ(node.min(), 32);
  EXPECT_EQ(node.max(), 512);
  ASSERT_TRUE(node.has_mul());
  EXPECT_DOUBLE_EQ(node.mul(), 2);
  EXPECT_FALSE(node.has_add());
  EXPECT_THAT(spec->params().at("batch").values().values(), ::testing::ElementsAre(64, 256));
  EXPECT_THAT(spec->precision(), ::testing::ElementsAre("float32"));
  EXPECT_TRUE(spec->optimizer().empty());
  EXPECT_DOUBLE_EQ(spec->run().ci(), 0.02);
  EXPECT_DOUBLE_EQ(spec->run().max_seconds(), 10);
  EXPECT_EQ(spec->source_text(), kIssueExample);
  EXPECT_EQ(model::CountConfigurations(*spec), 10);
}

TEST(SweepFileTest, AcceptsScalarsBareListsBlockStyleAndAllRunKeys) {
  constexpr const char* kText = R"(# a comment
name: variants
family: fc
params:
  layer: {min: 1, max: 3, add: 1}
  node:
    min: 32
    max: 128
    mul: 2
  input: 2000
  output: 200
  batch: [64, 256]
precision: bfloat16
optimizer: [sgd, momentum]
run:
  ci: 0.05
  max_seconds: 2
  warmup_steps: 2
  min_steps: 5
  max_steps: 100
  intra_op_threads: 2
  inter_op_threads: 1
  timeout_seconds: 60
  seed: 18446744073709551615
)";
  absl::StatusOr<v1::SweepSpec> spec = Parse(kText);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->device(), "cpu");  // the default
  EXPECT_EQ(spec->params().at("layer").range().add(), 1);
  EXPECT_EQ(spec->params().at("node").range().max(), 128);
  EXPECT_THAT(spec->params().at("batch").values().values(), ::testing::ElementsAre(64, 256));
  EXPECT_THAT(spec->precision(), ::testing::ElementsAre("bfloat16"));
  EXPECT_THAT(spec->optimizer(), ::testing::ElementsAre("sgd", "momentum"));
  const v1::RunSettings& run = spec->run();
  EXPECT_DOUBLE_EQ(run.ci(), 0.05);
  EXPECT_DOUBLE_EQ(run.max_seconds(), 2);
  EXPECT_EQ(run.warmup_steps(), 2);
  EXPECT_EQ(run.min_steps(), 5);
  EXPECT_EQ(run.max_steps(), 100);
  EXPECT_EQ(run.intra_op_threads(), 2);
  EXPECT_EQ(run.inter_op_threads(), 1);
  EXPECT_DOUBLE_EQ(run.timeout_seconds(), 60);
  EXPECT_EQ(run.seed(), 18446744073709551615ull);
  EXPECT_EQ(model::CountConfigurations(*spec), 3 * 3 * 2 * 2);
}

// A CNN sweep without its block_fn (tests append it; line numbers matter).
constexpr const char* kCnn =
    "name: cnn\n"                            // 1
    "family: cnn\n"                          // 2
    "device: cpu\n"                          // 3
    "params:\n"                              // 4
    "    block: {min: 1, max: 2, add: 1}\n"  // 5
    "    filter: 16\n"                       // 6
    "    batch: 64\n"                        // 7
    "    image: 224\n"                       // 8
    "    output: 1000\n"                     // 9
    "    intra_op_threads: [1, 2]\n";        // 10

TEST(SweepFileTest, RepeatsAndProfile) {
  absl::StatusOr<v1::SweepSpec> spec =
      Parse(std::string(kIssueExample) + "repeats: 5\nprofile: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->repeats(), 5);
  EXPECT_TRUE(spec->run().profile());
  absl::StatusOr<v1::SweepSpec> under_run =
      Parse(Replace("run: {ci: 0.02, max_seconds: 10}", "run: {profile: true, profile_steps: 4}"));
  ASSERT_TRUE(under_run.ok()) << under_run.status();
  EXPECT_TRUE(under_run->run().profile());
  EXPECT_EQ(under_run->run().profile_steps(), 4);
  absl::StatusOr<v1::SweepSpec> fresh =
      Parse(Replace("run: {ci: 0.02, max_seconds: 10}", "run: {fresh: true}"));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE(fresh->run().fresh());

  absl::StatusOr<v1::SweepSpec> zero = Parse(std::string(kIssueExample) + "repeats: 0\n");
  EXPECT_THAT(std::string(zero.status().message()),
              StartsWith("t.yaml:12: repeats: 0 is out of range; allowed 1..100"));
  absl::StatusOr<v1::SweepSpec> word = Parse(std::string(kIssueExample) + "profile: often\n");
  EXPECT_THAT(std::string(word.status().message()), StartsWith("t.yaml:12: profile:"));
  absl::StatusOr<v1::SweepSpec> steps =
      Parse(Replace("run: {ci: 0.02, max_seconds: 10}", "run: {profile_steps: -1}"));
  EXPECT_THAT(std::string(steps.status().message()), HasSubstr("run.profile_steps"));
  // The job limit counts repeats: 10 configurations x 5 repeats.
  EXPECT_THAT(
      std::string(Parse(std::string(kIssueExample) + "repeats: 5\n", 49).status().message()),
      HasSubstr("50 jobs (5 repeats)"));
}

TEST(SweepFileTest, OptionsUnderParamsBecomeSweepOptions) {
  absl::StatusOr<v1::SweepSpec> spec =
      Parse(std::string(kCnn) + "    block_fn: [residual, bottleneck]\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->options().count("block_fn"), 1u);
  EXPECT_THAT(spec->options().at("block_fn").values(),
              ::testing::ElementsAre("residual", "bottleneck"));
  EXPECT_EQ(spec->params().count("block_fn"), 0u);
  EXPECT_EQ(spec->params().size(), 6u);
  EXPECT_THAT(spec->params().at("intra_op_threads").values().values(),
              ::testing::ElementsAre(1, 2));
  EXPECT_EQ(model::CountConfigurations(*spec), 2 * 2 * 2);

  // A single name, {values: [...]}, and a quoted per-group block list.
  spec = Parse(std::string(kCnn) +
               "    block_fn: bottleneck\n    blocks: {values: [\"3,4,6,3\", \"3,4,23,3\"]}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->options().at("block_fn").values(), ::testing::ElementsAre("bottleneck"));
  EXPECT_THAT(spec->options().at("blocks").values(), ::testing::ElementsAre("3,4,6,3", "3,4,23,3"));
  EXPECT_EQ(model::CountConfigurations(*spec), 2 * 2 * 2);
}

TEST(SweepFileTest, TopLevelOptionsMapping) {
  absl::StatusOr<v1::SweepSpec> spec =
      Parse(std::string(kCnn) + "options:\n  block_fn: [bottleneck]\n  blocks: 1,1,1,1\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->options().at("block_fn").values(), ::testing::ElementsAre("bottleneck"));
  EXPECT_THAT(spec->options().at("blocks").values(), ::testing::ElementsAre("1,1,1,1"));
}

TEST(SweepFileTest, RnnCellAndRealWorldFamilies) {
  absl::StatusOr<v1::SweepSpec> spec = Parse(
      "name: lstm\nfamily: rnn\nparams:\n  cell: lstm\n  layer: 2\n  embed: 100\n"
      "  length: 10\n  vocab: 64\n  batch: 16\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->options().at("cell").values(), ::testing::ElementsAre("lstm"));
  // The family line may come after params: options are still routed by it.
  spec = Parse("name: r\nparams:\n  batch: [32, 64]\n  image: 299\nfamily: resnet50\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->options().empty());
  EXPECT_EQ(spec->params().at("image").value(), 299);
  spec = Parse("name: t\nfamily: transformer\nparams: {batch: 8}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(model::CountConfigurations(*spec), 1);
}

TEST(SweepFileTest, RunPredictedOom) {
  absl::StatusOr<v1::SweepSpec> spec = Parse(kIssueExample);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->run_predicted_oom());
  spec = Parse(std::string(kIssueExample) + "run_predicted_oom: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->run_predicted_oom());
  spec = Parse(std::string(kIssueExample) + "run_predicted_oom: false\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->run_predicted_oom());
}

TEST(SweepFileTest, ScalarOptimizerAndExplicitDevice) {
  absl::StatusOr<v1::SweepSpec> spec =
      Parse(Replace("device: cpu\n", "device: cuda\noptimizer: momentum\n"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->device(), "cuda");
  EXPECT_THAT(spec->optimizer(), ::testing::ElementsAre("momentum"));
}

TEST(SweepFileTest, ExampleFileInTheRepositoryIsValid) {
  const char* source_dir = std::getenv("PARADNN_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "PARADNN_SOURCE_DIR is not set (run through ctest)";
  absl::StatusOr<v1::SweepSpec> spec =
      ReadSweepFile(std::string(source_dir) + "/examples/quick.yaml", model::kDefaultMaxJobs);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const int64_t n = model::CountConfigurations(*spec);
  EXPECT_GE(n, 12);
  EXPECT_LE(n, 20);
}

TEST(SweepFileTest, ReadsFilesAndNamesThemInErrors) {
  const ::paradnn::testing::TempFile file("sweep-file-test", Replace("mul: 2", "mul: 1"));
  ASSERT_FALSE(file.path().empty());
  absl::StatusOr<v1::SweepSpec> spec = ReadSweepFile(file.path(), 0);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()),
              StartsWith(file.path() + ":6: params.node.range.mul: 1 must be > 1"));

  spec = ReadSweepFile("/nonexistent/sweep.yaml", 0);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("/nonexistent/sweep.yaml: cannot read the sweep file"));
}

struct BadFile {
  const char* what;
  std::string text;
  std::string expected;  // the message starts with this
  int64_t max_jobs = 0;
};

class BadSweepFileTest : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadSweepFileTest, IsInvalidArgumentNamingFieldAndLine) {
  absl::StatusOr<v1::SweepSpec> spec = Parse(GetParam().text, GetParam().max_jobs);
  ASSERT_FALSE(spec.ok()) << GetParam().what;
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << GetParam().what;
  EXPECT_THAT(std::string(spec.status().message()), StartsWith(GetParam().expected))
      << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadSweepFileTest,
    ::testing::Values(
        BadFile{"string for an integer", Replace("min: 32", "min: abc"),
                "t.yaml:6: params.node.min: 'abc' is not an integer"},
        BadFile{"float for an int param", Replace("layer: 4", "layer: 2.5"),
                "t.yaml:5: params.layer: '2.5' is not an integer"},
        BadFile{"quoted integer", Replace("layer: 4", "layer: \"4\""),
                "t.yaml:5: params.layer: '4' is quoted text, not an integer"},
        BadFile{"text in a value list", Replace("[64, 256]", "[64, big]"),
                "t.yaml:9: params.batch.values[1]: 'big' is not an integer"},
        BadFile{"map where a list is expected", Replace("[64, 256]", "{a: 1}"),
                "t.yaml:9: params.batch.values: expected a list of integers, got a mapping"},
        BadFile{"map where a name list is expected",
                Replace("precision: [float32]", "precision: {a: b}"),
                "t.yaml:10: precision: expected a name or a list of names, got a mapping"},
        BadFile{"list where text is expected", Replace("name: fc-small", "name: [a, b]"),
                "t.yaml:1: name: expected text, got a list"},
        BadFile{"unknown top-level key", std::string(kIssueExample) + "optimiser: sgd\n",
                "t.yaml:12: optimiser: unknown key; allowed: name, family, device, params, "
                "options, precision, optimizer, run, run_predicted_oom"},
        BadFile{"unknown run key", Replace("max_seconds: 10", "max_secs: 10"),
                "t.yaml:11: run.max_secs: unknown key; allowed: ci, max_seconds"},
        BadFile{"unknown range key", Replace("mul: 2", "step: 2"),
                "t.yaml:6: params.node.step: unknown key; allowed: min, max, mul, add, values"},
        BadFile{"run value not a number", Replace("ci: 0.02", "ci: fast"),
                "t.yaml:11: run.ci: 'fast' is not a number"},
        BadFile{"run integer not an integer", Replace("ci: 0.02", "warmup_steps: 1.5"),
                "t.yaml:11: run.warmup_steps: '1.5' is not an integer"},
        BadFile{"negative seed", Replace("ci: 0.02", "seed: -1"),
                "t.yaml:11: run.seed: '-1' is not a non-negative integer"},
        BadFile{"run is a list", Replace("run: {ci: 0.02, max_seconds: 10}", "run: [1]"),
                "t.yaml:11: run: expected a mapping of settings, got a list"},
        BadFile{"YAML that does not parse", Replace("mul: 2}", "mul: 2"),
                "t.yaml:7: YAML does not parse"},
        BadFile{"tab indentation", Replace("  input: 2000", "\tinput: 2000"),
                "t.yaml:7: YAML does not parse"},
        BadFile{"repeated key", Replace("  input: 2000\n", "  input: 2000\n  layer: 8\n"),
                "t.yaml:8: params.layer: repeated key (first at line 5)"},
        BadFile{
            "unknown family", Replace("family: fc", "family: bert"),
            "t.yaml:2: family: 'bert' is not a known family; one of allreduce|cnn|densenet121|fc|"},
        BadFile{"unknown device", Replace("device: cpu", "device: gpu"),
                "t.yaml:3: device: 'gpu' is not one of cpu|cuda|tpu"},
        BadFile{"unknown parameter", Replace("  input: 2000", "  inputs: 2000"),
                "t.yaml:7: params.inputs: unknown parameter of family fc; allowed: batch, devices, "
                "hosts, input, inter_op_threads, intra_op_threads, layer, node, output, overlap"},
        BadFile{"missing parameter", Replace("  output: 200\n", ""),
                "t.yaml:4: params.output: missing; family fc requires"},
        BadFile{"zero size", Replace("layer: 4", "layer: 0"),
                "t.yaml:5: params.layer: 0 is out of range; allowed 1..4096"},
        BadFile{"negative size", Replace("output: 200", "output: -200"),
                "t.yaml:8: params.output: -200 is out of range"},
        BadFile{"zero in a value list", Replace("[64, 256]", "[64, 0]"),
                "t.yaml:9: params.batch.values[1]: 0 is out of range"},
        BadFile{"min > max", Replace("min: 32, max: 512", "min: 512, max: 32"),
                "t.yaml:6: params.node.range: min 512 > max 32"},
        BadFile{"mul = 1", Replace("mul: 2", "mul: 1"),
                "t.yaml:6: params.node.range.mul: 1 must be > 1"},
        BadFile{"add = 0", Replace("mul: 2", "add: 0"),
                "t.yaml:6: params.node.range.add: 0 must be > 0"},
        BadFile{"add < 0", Replace("mul: 2", "add: -32"),
                "t.yaml:6: params.node.range.add: -32 must be > 0"},
        BadFile{"range without max", Replace("max: 512, ", ""),
                "t.yaml:6: params.node.max: missing; a range needs both min and max"},
        BadFile{"values and range", Replace("mul: 2}", "mul: 2, values: [1]}"),
                "t.yaml:6: params.node: give either values: [...] or min/max"},
        BadFile{"empty value", Replace("layer: 4", "layer:"),
                "t.yaml:5: params.layer: missing value"},
        BadFile{"bad precision", Replace("[float32]", "[float32, fp8]"),
                "t.yaml:10: precision[1]: 'fp8' is not one of "
                "float32|bfloat16|float16|mixed_bf16|mixed_fp16"},
        BadFile{"bad optimizer", std::string(kIssueExample) + "optimizer: adam\n",
                "t.yaml:12: optimizer[0]: 'adam' is not one of rmsprop|sgd|momentum"},
        BadFile{"run setting out of range", Replace("ci: 0.02", "ci: 2"), "t.yaml:11: run.ci: 2"},
        BadFile{"too many configurations", kIssueExample,
                "t.yaml: sweep expands to 10 configurations; the limit is 5 (--max-jobs)", 5},
        BadFile{"params is a list", "name: x\nfamily: fc\nparams: [1, 2]\n",
                "t.yaml:3: params: expected a mapping of parameter: value, got a list"},
        BadFile{"top level is a list", "- name: x\n", "t.yaml:1: (top level): expected a mapping"},
        BadFile{"empty file", "# nothing\n", "t.yaml: the file is empty"},
        BadFile{"two documents", std::string(kIssueExample) + "---\nname: again\n",
                "t.yaml:13: a second YAML document"},
        BadFile{"missing name", Replace("name: fc-small\n", ""), "t.yaml: name: missing"},
        // Options (categorical hyper-parameters).
        BadFile{"option of a family without options",
                Replace("  input: 2000\n", "  input: 2000\n  cell: lstm\n"),
                "t.yaml:8: options.cell: family fc takes no options"},
        BadFile{"bad option value", std::string(kCnn) + "    block_fn: [residual, dense]\n",
                "t.yaml:11: options.block_fn[1]: 'dense' is not one of residual|bottleneck"},
        BadFile{"missing required option", kCnn,
                "t.yaml:4: options.block_fn: missing; family cnn requires block_fn, one of "
                "residual|bottleneck"},
        BadFile{"option given twice",
                std::string(kCnn) + "    block_fn: residual\noptions:\n  block_fn: bottleneck\n",
                "t.yaml:13: options.block_fn: option block_fn is given twice (first at line 11)"},
        BadFile{"option list of lists", std::string(kCnn) + "    block_fn: [[residual]]\n",
                "t.yaml:11: params.block_fn[0]: expected text, got a list"},
        BadFile{"option mapping", std::string(kCnn) + "    block_fn: {a: residual}\n",
                "t.yaml:11: params.block_fn: expected a name, a list of names or {values: [...]}"},
        BadFile{"options is a list", std::string(kCnn) + "options: [a]\n",
                "t.yaml:11: options: expected a mapping of option: names, got a list"},
        BadFile{"bad blocks", std::string(kCnn) + "    block_fn: residual\n    blocks: 3,4,6\n",
                "t.yaml:12: options.blocks[0]: '3,4,6' is not four comma-separated block counts"},
        BadFile{"cnn image too small",
                absl::StrReplaceAll(std::string(kCnn), {{"image: 224", "image: 100"}}) +
                    "    block_fn: residual\n",
                "t.yaml:8: params.image: 100 is out of range; allowed 193..4096: the 7x7 average "
                "pool needs a final map of at least 7 (image >= 193)"},
        BadFile{"run_predicted_oom not a bool",
                std::string(kIssueExample) + "run_predicted_oom: 1\n",
                "t.yaml:12: run_predicted_oom: '1' is not true or false"},
        // Found by tests/fuzz: yaml-cpp 0.7's LoadAll looped for ever (and
        // allocated) on a stray ',' after a document or alone.
        BadFile{"stray comma", ",",
                "t.yaml:1: YAML does not parse (column 1): unexpected character"},
        BadFile{"stray comma after a document", "\"a\",",
                "t.yaml:1: YAML does not parse (column 4): unexpected character"},
        BadFile{"stray comma after a mapping", std::string(kIssueExample) + "---\n,\n",
                "t.yaml:13: a second YAML document"},
        // Found by tests/fuzz: bytes that are not UTF-8 were accepted, and
        // the coordinator's protobuf then refused the whole request.
        BadFile{"not UTF-8", Replace("name: fc-small", "name: fc-\xff"),
                "t.yaml:1: byte 9 (column 10) is not UTF-8; save the file as UTF-8"},
        BadFile{"truncated UTF-8 in a key", Replace("  input: 2000", "  input\xc3: 2000"),
                "t.yaml:7: byte 100 (column 8) is not UTF-8"},
        BadFile{"UTF-8 surrogate escape", Replace("name: fc-small", "name: \"a\\uD800\""),
                "t.yaml:1: YAML does not parse"}));

// Found by tests/fuzz: errors echoed a whole key, however long.
TEST(SweepFileTest, ErrorsEchoLongKeysCut) {
  // Under YAML's 1024-character limit on an implicit key.
  const std::string key(1000, 'k');
  for (const std::string& text :
       {Replace("  input: 2000", "  " + key + ": 2000"),
        Replace("  input: 2000", "  input: 2000\n  " + key + ": [a, b]"),
        Replace("ci: 0.02", key + ": 1"), std::string(kIssueExample) + key + ": 1\n",
        Replace("mul: 2", key + ": 2")}) {
    absl::StatusOr<v1::SweepSpec> spec = Parse(text);
    ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_LT(spec.status().message().size(), 600u) << spec.status().message().substr(0, 200);
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr("kkkk..."));
  }
}

// Found by tests/fuzz: control characters in a key reached the message
// (and the terminal) as they were.
TEST(SweepFileTest, ErrorsEscapeKeys) {
  absl::StatusOr<v1::SweepSpec> spec = Parse(std::string(kIssueExample) + "\"opt\\e[31m\": 1\n");
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()),
              StartsWith("t.yaml:12: opt\\x1b[31m: unknown key"));
}

}  // namespace
}  // namespace paradnn::client
