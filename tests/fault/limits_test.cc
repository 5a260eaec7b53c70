// The coordinator's size limits against a real process: a TorchScript model
// over --max-model-bytes is refused naming the flag, as are a random file
// and a small zip that inflates past it (a zip bomb), and a message over the
// gRPC limit (--max-message-bytes, plus room for a model) is refused by
// gRPC before it is parsed; nothing already stored changes, and a normal
// sweep is accepted afterwards.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "paradnn/v1/coordinator.grpc.pb.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

constexpr int64_t kMaxModelBytes = 4096;
constexpr int64_t kMaxMessageBytes = int64_t{2} << 20;  // above model + 1 MiB

constexpr const char* kModelSweep = R"yaml(name: too-big
family: torchscript
params: {batch: 8}
torchscript:
  file: big.pt
  inputs: [{name: x, shape: [-1, 4], dtype: float32}]
  loss: mse
  target: {shape: [-1, 2], dtype: float32}
)yaml";

constexpr const char* kFcSweep =
    "name: fine\nfamily: fc\nparams: {layer: 1, node: 8, input: 4, output: 2, batch: 4}\n";

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<Cluster>(dir_);
    ASSERT_NO_FATAL_FAILURE(
        cluster_->StartCoordinator({"--max-model-bytes", std::to_string(kMaxModelBytes),
                                    "--max-message-bytes", std::to_string(kMaxMessageBytes)}));
    std::ofstream(dir_.File("fine.yaml")) << kFcSweep;
    CommandResult first = cluster_->Cli({"submit", dir_.File("fine.yaml"), "-q"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
  }
  void TearDown() override {
    if (cluster_) cluster_->Stop();
  }

  int64_t Sweeps() { return QueryInt(cluster_->db_path(), "SELECT count(*) FROM sweeps"); }

  TempDir dir_;
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(LimitsTest, ModelOverMaxModelBytesIsRefusedNamingTheFlag) {
  std::ofstream(dir_.File("big.pt")) << std::string(kMaxModelBytes + 1, 'm');
  std::ofstream(dir_.File("big.yaml")) << kModelSweep;
  CommandResult submit = cluster_->Cli({"submit", dir_.File("big.yaml")});
  EXPECT_EQ(submit.exit_code, 2) << submit.out << submit.err;
  EXPECT_NE(submit.err.find("torchscript.content: 4097 bytes"), std::string::npos) << submit.err;
  EXPECT_NE(submit.err.find("at most 4096 bytes (--max-model-bytes)"), std::string::npos)
      << submit.err;
  EXPECT_EQ(Sweeps(), 1);
  EXPECT_EQ(QueryInt(cluster_->db_path(), "SELECT count(*) FROM models"), 0);
}

// Uploads `model` as big.pt: the CLI's exit status and stderr.
CommandResult SubmitModel(Cluster& cluster, const TempDir& dir, const std::string& model) {
  std::ofstream(dir.File("big.pt"), std::ios::binary) << model;
  std::ofstream(dir.File("big.yaml")) << kModelSweep;
  return cluster.Cli({"submit", dir.File("big.yaml")});
}

TEST_F(LimitsTest, ARandomFileAndAZipBombAreRefusedAsModels) {
  std::mt19937 random(11);
  std::string noise(4000, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  CommandResult refused = SubmitModel(*cluster_, dir_, noise);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("torchscript.content: not a TorchScript archive"), std::string::npos)
      << refused.err;

  // Python's zipfile (not the coordinator's libzip): a well-formed archive
  // of under 4 KiB whose constants.pkl inflates to 1 MiB.
  const std::string bomb = dir_.File("bomb.pt");
  CommandResult made =
      RunCommand({"/usr/bin/python3", "-c",
                  "import sys, zipfile\n"
                  "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
                  "  z.writestr('m/data.pkl', 'p'); z.writestr('m/version', '3');\n"
                  "  z.writestr('m/code/__torch__.py', 'pass'); z.writestr('m/constants.pkl', "
                  "bytes(1 << 20))\n",
                  bomb},
                 seconds(60));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::ifstream in(bomb, std::ios::binary);
  const std::string zipped((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_LT(zipped.size(), static_cast<size_t>(kMaxModelBytes));
  CommandResult inflated = SubmitModel(*cluster_, dir_, zipped);
  EXPECT_EQ(inflated.exit_code, 2) << inflated.out << inflated.err;
  EXPECT_NE(inflated.err.find("torchscript.content: inflates to more than 4096 bytes (entry "
                              "'m/constants.pkl' alone is 1048576 bytes)"),
            std::string::npos)
      << inflated.err;
  EXPECT_EQ(Sweeps(), 1);
  EXPECT_EQ(QueryInt(cluster_->db_path(), "SELECT count(*) FROM models"), 0);
}

TEST_F(LimitsTest, MessageOverTheLimitIsRefusedByGrpcAndNothingChanges) {
  auto channel = grpc::CreateChannel(cluster_->address(), grpc::InsecureChannelCredentials());
  auto stub = v1::Coordinator::NewStub(channel);
  v1::SubmitSweepRequest request;
  request.mutable_spec()->set_name(std::string(kMaxMessageBytes + (int64_t{1} << 20), 'n'));
  request.mutable_spec()->set_family("fc");
  v1::SubmitSweepResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(30));
  grpc::Status status = stub->SubmitSweep(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_EQ(Sweeps(), 1);
  // The coordinator is still serving: a normal sweep goes in.
  CommandResult again = cluster_->Cli({"submit", dir_.File("fine.yaml"), "-q"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Sweeps(), 2);
}

}  // namespace
}  // namespace paradnn::testing
