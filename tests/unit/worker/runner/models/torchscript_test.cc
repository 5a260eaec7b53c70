// Family torchscript: models made by Debian's python3-torch (torch.jit.script
// saved with torch.jit.save) load, train and report through RunJob.
#include "worker/runner/models/torchscript.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <torch/csrc/jit/ir/irparser.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "worker/runner/models/torchscript_width.h"
#include "worker/runner/trainer.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::FieldStyle;
using model::ModelSpec;
using model::ParseModelSpec;
namespace {

// /usr/bin/python3 explicitly: the python3 on a developer's PATH may be an
// interpreter without torch.
constexpr const char* kPython = "/usr/bin/python3";

constexpr const char* kMakeModels = R"py(
import sys, torch
torch.manual_seed(0)
out = sys.argv[1]

class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.norm = torch.nn.BatchNorm1d(32)
        self.fc2 = torch.nn.Linear(32, 4)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.norm(self.fc1(x))))

class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 8)
        self.fc = torch.nn.Linear(8 + 4, 3)
    def forward(self, ids: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.cat([self.emb(ids).mean(1), x], 1))

class SelfLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 1)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ((self.fc(x) - 1.0) ** 2).mean()

class TwoBranches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(16, 2)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.cat([self.a(x), self.b(x)], 1))

torch.jit.save(torch.jit.script(TwoBranches()), out + "/two_branches.pt")
torch.jit.save(torch.jit.script(Mlp()), out + "/mlp.pt")
torch.jit.save(torch.jit.script(Regressor()), out + "/regressor.pt")
torch.jit.save(torch.jit.script(SelfLoss()), out + "/self_loss.pt")
)py";

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

v1::TensorSpec Tensor(std::vector<int64_t> shape, const std::string& dtype, double low,
                      double high) {
  v1::TensorSpec t;
  for (int64_t d : shape) t.add_shape(d);
  t.set_dtype(dtype);
  t.set_low(low);
  t.set_high(high);
  return t;
}

class TorchScriptModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0) {
      skip_reason_ = new std::string(
          "/usr/bin/python3 cannot import torch (install Debian's python3-torch) to make the "
          "TorchScript test models");
      return;
    }
    std::string pattern =
        (std::filesystem::temp_directory_path() / "paradnn_ts_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = new std::filesystem::path(pattern);
    const std::filesystem::path script = *dir_ / "make_models.py";
    std::ofstream(script) << kMakeModels;
    const std::string command = std::string(kPython) + " " + script.string() + " " + dir_->string();
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  static void TearDownTestSuite() {
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (skip_reason_ != nullptr) GTEST_SKIP() << *skip_reason_;
  }

  static std::string Model(const std::string& name) { return ReadAll(*dir_ / name); }

  // A job over the MLP: x in [-1, 1), 4 classes, cross-entropy.
  static v1::RunnerJob MlpJob(const std::string& precision) {
    v1::RunnerJob job;
    v1::ModelConfig& config = *job.mutable_config();
    config.set_family("torchscript");
    (*config.mutable_params())["batch"] = 32;
    config.set_precision(precision);
    v1::TorchScriptModel& model = *config.mutable_torchscript();
    model.set_sha256(std::string(64, 'a'));
    *model.add_inputs() = Tensor({-1, 16}, "float32", -1, 1);
    model.set_loss("cross_entropy");
    *model.mutable_target() = Tensor({-1}, "int64", 0, 4);
    job.set_torchscript_content(Model("mlp.pt"));
    v1::RunSettings& s = *job.mutable_settings();
    s.set_warmup_steps(2);
    s.set_min_steps(5);
    s.set_max_steps(20);
    s.set_max_seconds(2);
    s.set_intra_op_threads(1);
    job.set_device("cpu");
    return job;
  }

  // Losses of `steps` training steps of `job`'s model.
  static std::vector<double> Train(const v1::RunnerJob& job, int steps) {
    absl::StatusOr<ModelSpec> spec = ParseModelSpec(job.config(), FieldStyle::kProto);
    EXPECT_TRUE(spec.ok()) << spec.status();
    if (!spec.ok()) return {};
    BuildContext context;
    context.weight_dtype = WeightDtype(spec->precision);
    context.input_dtype = context.weight_dtype;
    context.torchscript_content = &job.torchscript_content();
    Trainer trainer(*spec, /*seed=*/1, context);
    std::vector<double> losses;
    for (int i = 0; i < steps; ++i) losses.push_back(trainer.Step().item<double>());
    return losses;
  }

  static std::string* skip_reason_;
  static std::filesystem::path* dir_;
};

std::string* TorchScriptModelTest::skip_reason_ = nullptr;
std::filesystem::path* TorchScriptModelTest::dir_ = nullptr;

TEST_F(TorchScriptModelTest, MlpLossFallsInFloat32) {
  const std::vector<double> losses = Train(MlpJob("float32"), 20);
  ASSERT_EQ(losses.size(), 20u);
  EXPECT_LT(losses.back(), 0.8 * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST_F(TorchScriptModelTest, MlpLossFallsInBFloat16AndMixed) {
  for (const char* precision : {"bfloat16", "mixed_bf16"}) {
    const std::vector<double> losses = Train(MlpJob(precision), 20);
    ASSERT_EQ(losses.size(), 20u) << precision;
    EXPECT_LT(losses.back(), 0.8 * losses.front())
        << precision << ": " << losses.front() << " -> " << losses.back();
  }
}

TEST_F(TorchScriptModelTest, MseWithTwoInputsAndIntegerIds) {
  v1::RunnerJob job = MlpJob("float32");
  v1::TorchScriptModel& model = *job.mutable_config()->mutable_torchscript();
  model.clear_inputs();
  *model.add_inputs() = Tensor({-1, 6}, "int64", 0, 50);
  *model.add_inputs() = Tensor({-1, 4}, "float32", 0, 0);
  model.set_loss("mse");
  *model.mutable_target() = Tensor({-1, 3}, "float32", -1, 1);
  job.set_torchscript_content(Model("regressor.pt"));
  const std::vector<double> losses = Train(job, 20);
  ASSERT_EQ(losses.size(), 20u);
  EXPECT_LT(losses.back(), losses.front()) << losses.front() << " -> " << losses.back();
}

TEST_F(TorchScriptModelTest, ForwardReturningTheLoss) {
  v1::RunnerJob job = MlpJob("float32");
  v1::TorchScriptModel& model = *job.mutable_config()->mutable_torchscript();
  model.clear_inputs();
  *model.add_inputs() = Tensor({-1, 8}, "float32", -1, 1);
  model.set_loss("output");
  model.clear_target();
  job.set_torchscript_content(Model("self_loss.pt"));
  const std::vector<double> losses = Train(job, 20);
  ASSERT_EQ(losses.size(), 20u);
  EXPECT_LT(losses.back(), losses.front()) << losses.front() << " -> " << losses.back();
}

TEST_F(TorchScriptModelTest, RunJobReportsTheBuiltModelsParametersAndNoFlops) {
  const v1::Measurement m = RunJob(MlpJob("float32"), nullptr);
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  // fc1 16*32+32, BatchNorm 32+32, fc2 32*4+4.
  EXPECT_EQ(m.counts().params(), 544 + 64 + 132);
  // Weights, gradients, RMSProp's two state tensors, float32.
  EXPECT_EQ(m.counts().peak_memory_estimate_bytes(), 740.0 * 4 * 4);
  EXPECT_EQ(m.counts().model_flops(), 0);  // unknown, not guessed
  EXPECT_EQ(m.model_flops_per_sec(), 0);
  EXPECT_GT(m.examples_per_sec(), 0);
  EXPECT_EQ(m.config().torchscript().loss(), "cross_entropy");
}

TEST_F(TorchScriptModelTest, BytesThatAreNoModelAreAnErrorWithLibTorchsMessage) {
  v1::RunnerJob job = MlpJob("float32");
  job.set_torchscript_content("this is not a zip archive");
  const v1::Measurement m = RunJob(job, nullptr);
  EXPECT_EQ(m.outcome(), v1::ERROR);
  EXPECT_FALSE(m.error().empty());
}

TEST_F(TorchScriptModelTest, AJobWithoutModelBytesIsAnError) {
  v1::RunnerJob job = MlpJob("float32");
  job.clear_torchscript_content();
  const v1::Measurement m = RunJob(job, nullptr);
  EXPECT_EQ(m.outcome(), v1::ERROR);
  EXPECT_NE(m.error().find("torchscript_content"), std::string::npos) << m.error();
}

TEST_F(TorchScriptModelTest, WrongInputShapeIsAnErrorNotACrash) {
  v1::RunnerJob job = MlpJob("float32");
  *job.mutable_config()->mutable_torchscript()->mutable_inputs(0) =
      Tensor({-1, 17}, "float32", -1, 1);
  const v1::Measurement m = RunJob(job, nullptr);
  EXPECT_EQ(m.outcome(), v1::ERROR);
  EXPECT_FALSE(m.error().empty());
}

// The guideline's width from a TorchScript model's graph: heavy operators
// over the longest chain of them.
TEST_F(TorchScriptModelTest, WidthComesFromTheGraph) {
  model::OperatorWidth w = TorchScriptWidth(Model("mlp.pt"));  // fc1 -> norm -> fc2
  EXPECT_EQ(w.heavy_ops, 2);
  EXPECT_EQ(w.longest_path, 2);
  w = TorchScriptWidth(Model("two_branches.pt"));  // a || b, then out
  EXPECT_EQ(w.heavy_ops, 3);
  EXPECT_EQ(w.longest_path, 2);
  EXPECT_DOUBLE_EQ(w.average(), 1.5);
}

model::OperatorWidth WidthOfIr(const std::string& ir) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, graph.get());
  return GraphOperatorWidth(graph);
}

TEST(TorchScriptWidthTest, BranchesAddOperatorsNotChain) {
  const model::OperatorWidth w = WidthOfIr(R"IR(
graph(%x : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::mm(%x, %w)
  %c : Tensor = aten::add(%a, %b, %one)
  %d : Tensor = aten::mm(%c, %w)
  return (%d))IR");
  EXPECT_EQ(w.heavy_ops, 3);
  EXPECT_EQ(w.longest_path, 2);
}

TEST(TorchScriptWidthTest, AnIfRunsItsLargerBlockAsOneStep) {
  const model::OperatorWidth w = WidthOfIr(R"IR(
graph(%x : Tensor, %w : Tensor, %cond : bool):
  %y : Tensor = prim::If(%cond)
    block0():
      %a : Tensor = aten::mm(%x, %w)
      %b : Tensor = aten::mm(%a, %w)
      -> (%b)
    block1():
      -> (%x)
  %z : Tensor = aten::linear(%y, %w, %w)
  return (%z))IR");
  EXPECT_EQ(w.heavy_ops, 3);
  EXPECT_EQ(w.longest_path, 3);
}

TEST(TorchScriptWidthTest, AGraphWithoutHeavyOperatorsHasNoWidth) {
  const model::OperatorWidth w = WidthOfIr(R"IR(
graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y))IR");
  EXPECT_EQ(w.heavy_ops, 0);
  EXPECT_EQ(w.longest_path, 0);
  EXPECT_EQ(w.average(), 0);
}

TEST(TorchScriptFamilyTest, CheckNamesTheField) {
  v1::ModelConfig config;
  config.set_family("torchscript");
  (*config.mutable_params())["batch"] = 4;
  absl::StatusOr<ModelSpec> spec = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("config.torchscript.inputs"), std::string::npos)
      << spec.status();
  *config.mutable_torchscript()->add_inputs() = Tensor({-1, 4}, "float32", 0, 0);
  config.mutable_torchscript()->set_loss("hinge");
  spec = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("config.torchscript.loss"), std::string::npos)
      << spec.status();
  config.mutable_torchscript()->set_loss("sum");
  EXPECT_TRUE(ParseModelSpec(config, FieldStyle::kProto).ok());
}

}  // namespace
}  // namespace paradnn::runner
