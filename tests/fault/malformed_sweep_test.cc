// Malformed sweeps against a real coordinator (issue 6): every row of the
// table is refused with INVALID_ARGUMENT and a message that names the
// offending field and what is allowed, whether it comes as a sweep file
// through `paradnn submit` (the CLI's parser, or the coordinator for what the
// CLI cannot know, like the coordinator's --max-jobs) or as a raw SweepSpec
// through the SubmitSweep RPC (the coordinator's own validation, which trusts
// no client). The sweep stored before the table is untouched after it.
#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "paradnn/v1/coordinator.grpc.pb.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The coordinator's cap on jobs per sweep in this test; the CLI keeps its
// default (100000), so only the coordinator can refuse a sweep above this.
constexpr int kCoordinatorMaxJobs = 500;
constexpr int kExitUsage = 2;  // paradnn's exit code for INVALID_ARGUMENT

// A valid fc sweep, as YAML and as a SweepSpec in protobuf text format; the
// rows below change one thing in it.
constexpr const char* kFcParams = "layer: 2, node: 16, input: 8, output: 4, batch: 2";

std::string Yaml(const std::string& params, const std::string& extra = "",
                 const std::string& head = "name: bad\nfamily: fc\n") {
  return head + "params: {" + params + "}\n" + extra;
}

std::string Param(const std::string& name, const std::string& spec) {
  return "params { key: \"" + name + "\" value { " + spec + " } } ";
}

// fc's five required parameters with one of them replaced (or left out
// with an empty `spec`).
std::string FcParamsProto(const std::string& name = "", const std::string& spec = "") {
  std::string out;
  for (const auto& [key, value] : std::vector<std::pair<std::string, int>>{
           {"layer", 2}, {"node", 16}, {"input", 8}, {"output", 4}, {"batch", 2}}) {
    if (key != name) {
      out += Param(key, "value: " + std::to_string(value));
    } else if (!spec.empty()) {
      out += Param(key, spec);
    }
  }
  return out;
}

std::string Proto(const std::string& body, const std::string& head = "name: 'bad' family: 'fc' ") {
  return head + body;
}

struct Malformed {
  const char* what;
  std::string yaml;     // the sweep file
  std::string proto;    // the same mistake as a raw SweepSpec; empty where YAML alone can make it
  std::string field;    // the message names this field...
  std::string allowed;  // ...and says this about what is allowed
};

// NOLINTNEXTLINE(readability-function-size): a table, one malformed sweep per entry.
std::vector<Malformed> Table() {
  const std::string cnn = "block: 1, filter: 8, image: 224, output: 4, batch: 2";
  const std::string cnn_proto = Param("block", "value: 1") + Param("filter", "value: 8") +
                                Param("image", "value: 224") + Param("output", "value: 4") +
                                Param("batch", "value: 2");
  const std::string sha = std::string(64, 'a');
  return {
      {"unknown family", Yaml("batch: 2", "", "name: bad\nfamily: bert\n"),
       Proto(Param("batch", "value: 2"), "name: 'bad' family: 'bert' "), "family",
       "one of allreduce|cnn|densenet121|fc"},
      {"unknown hyper-parameter", Yaml(std::string(kFcParams) + ", depth: 3"),
       Proto(FcParamsProto() + Param("depth", "value: 3")), "params.depth",
       "allowed: batch, devices, hosts, input, inter_op_threads, intra_op_threads, layer, node, "
       "output, overlap"},
      {"zero batch", Yaml("layer: 2, node: 16, input: 8, output: 4, batch: 0"),
       Proto(FcParamsProto("batch", "value: 0")), "params.batch", "allowed 1..4194304"},
      {"negative width", Yaml("layer: 2, node: -16, input: 8, output: 4, batch: 2"),
       Proto(FcParamsProto("node", "value: -16")), "params.node", "allowed 1..1048576"},
      {"empty value list", Yaml("layer: 2, node: [], input: 8, output: 4, batch: 2"),
       Proto(FcParamsProto("node", "values { }")), "params.node.values", "give at least one value"},
      {"repeated value", Yaml("layer: 2, node: 16, input: 8, output: 4, batch: [2, 8, 2]"),
       Proto(FcParamsProto("batch", "values { values: [2, 8, 2] }")), "params.batch.values[2]",
       "each value once"},
      {"range min above max",
       Yaml("layer: 2, node: {min: 64, max: 32, mul: 2}, input: 8, output: 4, batch: 2"),
       Proto(FcParamsProto("node", "range { min: 64 max: 32 mul: 2 }")), "params.node.range",
       "min 64 > max 32"},
      {"range that does not advance",
       Yaml("layer: 2, node: {min: 16, max: 32, mul: 1}, input: 8, output: 4, batch: 2"),
       Proto(FcParamsProto("node", "range { min: 16 max: 32 mul: 1 }")), "params.node.range.mul",
       "must be > 1"},
      {"missing required parameter", Yaml("layer: 2, node: 16, input: 8, batch: 2"),
       Proto(FcParamsProto("output")), "params.output",
       "family fc requires batch, input, layer, node, output"},
      {"quoted number", Yaml("layer: \"2\", node: 16, input: 8, output: 4, batch: 2"), "",
       "params.layer", "is quoted text, not an integer; write it unquoted"},
      {"fraction for an integer", Yaml("layer: 2.5, node: 16, input: 8, output: 4, batch: 2"), "",
       "params.layer", "'2.5' is not an integer"},
      {"text in a value list", Yaml("layer: 2, node: [16, wide], input: 8, output: 4, batch: 2"),
       "", "params.node[1]", "'wide' is not an integer"},
      {"precision not allowed", Yaml(kFcParams, "precision: [float32, fp8]\n"),
       Proto(FcParamsProto() + "precision: ['float32', 'fp8']"), "precision[1]",
       "'fp8' is not one of float32|bfloat16|float16|mixed_bf16|mixed_fp16"},
      {"unknown optimizer", Yaml(kFcParams, "optimizer: adam\n"),
       Proto(FcParamsProto() + "optimizer: 'adam'"), "optimizer[0]",
       "'adam' is not one of rmsprop|sgd|momentum"},
      {"repeats out of range", Yaml(kFcParams, "repeats: 101\n"),
       Proto(FcParamsProto() + "repeats: 101"), "repeats", "allowed 1..100"},
      {"too many jobs for the coordinator",
       Yaml("layer: 2, node: {min: 1, max: 1024, add: 1}, input: 8, output: 4, batch: 2"),
       Proto(FcParamsProto("node", "range { min: 1 max: 1024 add: 1 }")),
       "sweep expands to 1024 configurations", "the limit is 500 (--max-jobs)"},
      {"unknown device", Yaml(kFcParams, "device: gpu\n"), Proto(FcParamsProto() + "device: 'gpu'"),
       "device", "'gpu' is not one of cpu|cuda|tpu"},
      {"run setting out of range", Yaml(kFcParams, "run: {ci: 2}\n"),
       Proto(FcParamsProto() + "run { ci: 2 }"), "run.ci", "allowed 0 < ci < 1"},
      {"unknown run setting", Yaml(kFcParams, "run: {max_secs: 2}\n"), "", "run.max_secs",
       "unknown key; allowed: ci, max_seconds"},
      {"thread count in two places",
       Yaml(std::string(kFcParams) + ", intra_op_threads: [1, 2]", "run: {intra_op_threads: 4}\n"),
       Proto(FcParamsProto() + Param("intra_op_threads", "values { values: [1, 2] }") +
             "run { intra_op_threads: 4 }"),
       "params.intra_op_threads", "give it in one place"},
      {"option value not allowed", Yaml(cnn + ", block_fn: dense", "", "name: bad\nfamily: cnn\n"),
       Proto(cnn_proto + "options { key: 'block_fn' value { values: 'dense' } }",
             "name: 'bad' family: 'cnn' "),
       "options.block_fn[0]", "'dense' is not one of residual|bottleneck"},
      {"option of a family without options", Yaml(std::string(kFcParams) + ", cell: lstm"),
       Proto(FcParamsProto() + "options { key: 'cell' value { values: 'lstm' } }"), "options.cell",
       "family fc takes no options"},
      {"image not on the family's grid",
       Yaml("batch: 2, image: 100", "", "name: bad\nfamily: retinanet\n"),
       Proto(Param("batch", "value: 2") + Param("image", "value: 100"),
             "name: 'bad' family: 'retinanet' "),
       "params.image", "allowed 64..4096 in multiples of 32"},
      {"model for a family that takes none",
       Yaml(kFcParams,
            "torchscript: {sha256: " + sha + ", inputs: [{shape: [-1, 8]}], loss: sum}\n"),
       Proto(FcParamsProto() + "torchscript { sha256: '" + sha +
             "' inputs { shape: [-1, 8] } loss: 'sum' }"),
       "torchscript", "only family torchscript takes a model"},
      {"missing name", "family: fc\nparams: {" + std::string(kFcParams) + "}\n",
       Proto(FcParamsProto(), "family: 'fc' "), "name", "every sweep needs a name"},
      {"control character in the name", Yaml(kFcParams, "", "name: \"a\\x01b\"\nfamily: fc\n"),
       Proto(FcParamsProto(), "name: 'a\\001b' family: 'fc' "), "name",
       "control character at byte 1"},
      {"duplicated key", Yaml("layer: 2, node: 16, input: 8, output: 4, batch: 2, layer: 3"), "",
       "params.layer", "repeated key (first at line 3)"},
      {"unknown top-level key", Yaml(kFcParams, "optimiser: sgd\n"), "", "optimiser",
       "unknown key; allowed: name, family, device, params"},
      {"YAML syntax error", "name: bad\nfamily: fc\nparams: {layer: 2, node: 16\n", "",
       "YAML does not parse", "end of map flow not found"},
      {"second document", Yaml(kFcParams, "---\nname: again\n"), "", "a second YAML document",
       "a sweep file holds exactly one"},
      {"not UTF-8", Yaml(kFcParams, "", "name: caf\xe9\nfamily: fc\n"), "", "byte 9",
       "is not UTF-8; save the file as UTF-8"},
      {"stray comma (yaml-cpp looped on it)", ",\n", "", "YAML does not parse (column 1)",
       "unexpected character"},
  };
}

// NOLINTNEXTLINE(readability-function-size): one pass over the table per client path.
TEST(MalformedSweepTest, EachIsInvalidArgumentNamingTheFieldAndNothingIsStored) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(
      cluster.StartCoordinator({"--max-jobs", std::to_string(kCoordinatorMaxJobs)}));

  // One sweep stored before the table (2 x 2 = 4 jobs), which must be left as it is.
  {
    std::ofstream(dir.File("good.yaml"))
        << Yaml("layer: 2, node: [16, 32], input: 8, output: 4, batch: [2, 4]", "",
                "name: good\nfamily: fc\n");
  }
  CommandResult good = cluster.Cli({"submit", dir.File("good.yaml"), "-q"});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  const std::string sweeps_sql = "SELECT count(*) FROM sweeps";
  const std::string jobs_sql = "SELECT count(*) FROM jobs";
  const std::string good_jobs_sql =
      "SELECT count(*) FROM jobs j JOIN sweeps s ON s.id = j.sweep_id WHERE s.name = 'good'";
  ASSERT_EQ(QueryInt(cluster.db_path(), sweeps_sql), 1);
  const int64_t jobs_before = QueryInt(cluster.db_path(), jobs_sql);
  ASSERT_EQ(jobs_before, 4);

  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::Coordinator::Stub> stub = v1::Coordinator::NewStub(channel);

  const std::vector<Malformed> table = Table();
  ASSERT_GE(table.size(), 20u);
  int through_rpc = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    const Malformed& row = table[i];
    SCOPED_TRACE(row.what);

    // As a file, through the CLI.
    const std::string file = dir.File("bad-" + std::to_string(i) + ".yaml");
    { std::ofstream(file, std::ios::binary) << row.yaml; }
    CommandResult submit = cluster.Cli({"submit", file});
    EXPECT_EQ(submit.exit_code, kExitUsage) << submit.out << submit.err;
    EXPECT_THAT(submit.err, StartsWith("paradnn: "));
    EXPECT_THAT(submit.err, HasSubstr(row.field));
    EXPECT_THAT(submit.err, HasSubstr(row.allowed));

    // As a raw spec, straight to the coordinator.
    if (row.proto.empty()) continue;
    ++through_rpc;
    v1::SubmitSweepRequest request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(row.proto, request.mutable_spec()))
        << row.proto;
    v1::SubmitSweepResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const grpc::Status status = stub->SubmitSweep(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(), StartsWith(row.field));
    EXPECT_THAT(status.error_message(), HasSubstr(row.allowed));
    EXPECT_EQ(response.sweep_id(), 0);
  }
  EXPECT_GE(through_rpc, 20);

  // A request's own cap must be sane too.
  {
    v1::SubmitSweepRequest request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(Proto(FcParamsProto()),
                                                              request.mutable_spec()));
    request.set_max_jobs(-1);
    v1::SubmitSweepResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const grpc::Status status = stub->SubmitSweep(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), StartsWith("max_jobs: must be >= 0"));
  }

  // Nothing stored, nothing changed.
  EXPECT_EQ(QueryInt(cluster.db_path(), sweeps_sql), 1);
  EXPECT_EQ(QueryInt(cluster.db_path(), jobs_sql), jobs_before);
  EXPECT_EQ(QueryInt(cluster.db_path(), good_jobs_sql), jobs_before);
  CommandResult list = cluster.Cli({"status"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("good"));
  EXPECT_EQ(list.out.find("bad"), std::string::npos) << list.out;

  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

}  // namespace
}  // namespace paradnn::testing
