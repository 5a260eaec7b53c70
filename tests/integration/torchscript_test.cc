// Family torchscript end to end: a model made by Debian's python3-torch is
// uploaded with `paradnn submit`, stored once by the coordinator, shipped to
// a real worker and trained by a real paradnn-runner.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

// /usr/bin/python3 explicitly: the python3 on a developer's PATH may be an
// interpreter without torch.
constexpr const char* kPython = "/usr/bin/python3";

constexpr const char* kMakeMlp = R"py(
import sys, torch
torch.manual_seed(0)
class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 10)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))
torch.jit.save(torch.jit.script(Mlp()), sys.argv[1])
)py";

constexpr const char* kSweep = R"yaml(name: my-mlp
family: torchscript
params: {batch: {values: [32, 128]}}
torchscript:
  file: mlp.pt
  inputs: [{name: x, shape: [-1, 64], dtype: float32, low: -1, high: 1}]
  loss: cross_entropy
  target: {shape: [-1], dtype: int64, low: 0, high: 10}
precision: [float32, bfloat16]
run: {max_seconds: 0.5, warmup_steps: 2, intra_op_threads: 1}
)yaml";

std::string SweepIdOf(const CommandResult& submit) {
  return submit.out.substr(0, submit.out.find_first_of("\n "));
}

TEST(TorchScriptTest, UploadedModelRunsOnAWorkerAndIsStoredOnce) {
  if (RunCommand({kPython, "-c", "import torch"}, seconds(120)).exit_code != 0) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install Debian's python3-torch) to "
                    "make the TorchScript model";
  }
  TempDir dir;
  std::ofstream(dir.File("make_mlp.py")) << kMakeMlp;
  CommandResult make =
      RunCommand({kPython, dir.File("make_mlp.py"), dir.File("mlp.pt")}, seconds(120));
  ASSERT_EQ(make.exit_code, 0) << make.err;
  std::ofstream(dir.File("mlp.yaml")) << kSweep;

  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("ts-worker-1");

  std::string sweep_id;
  ASSERT_NO_FATAL_FAILURE(cluster.SubmitAndWatch(dir.File("mlp.yaml"), seconds(300), &sweep_id));
  ASSERT_GT(std::stoll(sweep_id), 0);

  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE sweep_id = " + sweep_id),
            4);
  CommandResult json_out = cluster.Cli({"results", sweep_id, "--format", "json"});
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  const nlohmann::json rows = nlohmann::json::parse(json_out.out);
  ASSERT_EQ(rows.size(), 4u) << json_out.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("outcome"), "OK") << row.dump();
    EXPECT_GT(row.at("examples_per_sec").get<double>(), 0) << row.dump();
    std::cout << "[ figures  ] batch " << row.value("batch", nlohmann::json()).dump() << " "
              << row.value("precision", nlohmann::json()).dump() << ": "
              << row.at("examples_per_sec").get<double>() << " examples/s, params "
              << row.value("params", nlohmann::json()).dump() << "\n";
  }
  // Exactly one result per job; the built model's parameters were counted
  // (64*128+128 + 128*10+10) and no FLOP rate was claimed for it.
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM jobs j WHERE j.sweep_id = " + sweep_id +
                         " AND (SELECT count(*) FROM results r WHERE r.job_id = j.id AND "
                         "r.outcome = 1 AND r.examples_per_sec > 0) = 1"),
            4);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE params = 9610"), 4);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE model_flops > 0"), 0);

  // The model is stored once, and not inside the sweep or its jobs.
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM models"), 1);
  const int64_t size = QueryInt(cluster.db_path(), "SELECT size_bytes FROM models");
  EXPECT_GT(size, 1000);
  EXPECT_LT(QueryInt(cluster.db_path(), "SELECT max(length(spec)) FROM sweeps"), size);
  EXPECT_LT(QueryInt(cluster.db_path(), "SELECT max(length(config)) FROM jobs"), size);

  // The same sweep again: a second sweep, still one stored model.
  CommandResult again = cluster.Cli({"submit", dir.File("mlp.yaml"), "-q"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::string again_id = SweepIdOf(again);
  EXPECT_NE(again_id, sweep_id);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM models"), 1);
  CommandResult cancel = cluster.Cli({"cancel", again_id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;

  // A hash the coordinator does not store is refused naming the field.
  cluster.ExpectSubmitRefused(
      "unknown.yaml",
      "name: unknown\nfamily: torchscript\nparams: {batch: 4}\ntorchscript:\n  sha256: " +
          std::string(64, 'b') + "\n  inputs: [{shape: [-1, 64]}]\n  loss: sum\n",
      "torchscript.sha256");

  // A missing model file is the client's error, with the sweep file's line.
  cluster.ExpectSubmitRefused(
      "missing.yaml",
      "name: missing\nfamily: torchscript\nparams: {batch: 4}\ntorchscript:\n"
      "  file: nowhere.pt\n  inputs: [{shape: [-1, 64]}]\n  loss: sum\n",
      "missing.yaml:5: torchscript.file");
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

}  // namespace
}  // namespace paradnn::testing
