// `paradnn analyze` and `paradnn report` against a real paradnn-coordinator
// serving a SQLite file with stored sweeps (written through the stores with
// known values): every analysis prints, every plot type renders a non-empty
// PNG and SVG with gnuplot, the report is one HTML page, and bad requests
// exit 2 naming the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "db/database.h"
#include "db/platform_store.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"
#include "tests/support/synthetic_results.h"

namespace paradnn::testing {
namespace {

// FC fp32 and bf16 on a CPU platform, fp32 again on a "cuda" platform:
// layer {1, 2, 4} × node {128, 512, 2048} × batch {16, 64, 256}; the
// largest bf16 configuration ran out of memory. Returns the sweep ids.
std::vector<int64_t> FillDatabase(const std::string& path) {
  absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(path);
  EXPECT_TRUE(database.ok()) << database.status();
  if (!database.ok()) return {};
  db::PlatformStore platforms(database->get());
  const int64_t cpu = *platforms.UpsertSync(SyntheticPlatform("cpu-a", "cpu", 250e9));
  const int64_t gpu = *platforms.UpsertSync(SyntheticPlatform("gpu-b", "cuda", 400e12));
  auto grid = [](const std::vector<std::string>& precisions, double scale) {
    std::vector<SyntheticResult> results;
    for (const std::string& precision : precisions) {
      for (int64_t layer : {1, 2, 4}) {
        for (int64_t node : {128, 512, 2048}) {
          for (int64_t batch : {16, 64, 256}) {
            SyntheticResult r;
            r.params = {{"layer", layer}, {"node", node}, {"batch", batch}};
            r.precision = precision;
            const double gflops = scale * (precision == "bfloat16" ? 3 : 1) *
                                  (20 + 10 * std::log2(node) + 5 * std::log2(batch));
            r.model_flops_per_sec = gflops * 1e9;
            r.executed_flops_per_sec = gflops * 1.1e9;
            const double flops_per_example = 6.0 * layer * node * node;
            r.examples_per_sec = r.model_flops_per_sec / flops_per_example;
            r.executed_flops = flops_per_example * batch * 1.1;
            r.bytes_per_step = 4.0 * layer * (node * node + 2 * batch * node) * 3;
            r.mfu = r.model_flops_per_sec / (250e9 * (precision == "bfloat16" ? 4 : 1));
            r.param_count = layer * node * node;
            if (precision == "bfloat16" && node == 2048 && batch == 256 && layer == 4) {
              r.outcome = v1::OOM;
            }
            if (node == 128 && batch == 16 && layer == 1) {
              v1::OpProfile op;
              op.set_name("aten::addmm");
              op.set_input_shapes("[[128], [16, 128], [128, 128]]");
              op.set_flops(2.0 * 16 * 128 * 128);
              op.set_self_seconds(2e-6);
              r.ops.push_back(op);
            }
            results.push_back(r);
          }
        }
      }
    }
    return results;
  };
  std::vector<int64_t> ids;
  ids.push_back(*StoreSyntheticSweep(database->get(), "fc-cpu", "cpu",
                                     grid({"float32", "bfloat16"}, 1), cpu, "cpu-worker"));
  ids.push_back(
      *StoreSyntheticSweep(database->get(), "fc-gpu", "cuda", grid({"float32"}, 50), gpu, "gpu-0"));
  return ids;
}

class AnalyzeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sweeps_ = FillDatabase(cluster_.db_path());
    ASSERT_EQ(sweeps_.size(), 2u);
    ASSERT_NO_FATAL_FAILURE(cluster_.StartCoordinator());
  }
  void TearDown() override { cluster_.Stop(); }

  TempDir dir_;
  Cluster cluster_{dir_};
  std::vector<int64_t> sweeps_;
};

TEST_F(AnalyzeTest, EveryAnalysisPrintsAndDrawsPngAndSvg) {
  const std::string cpu = std::to_string(sweeps_[0]);
  const std::string gpu = std::to_string(sweeps_[1]);
  const std::vector<std::vector<std::string>> analyses = {
      {"heatmap", cpu, "--x", "node", "--y", "batch", "--panel", "precision", "--metric", "gflops"},
      {"sensitivity", cpu, "--where", "precision=float32", "--metric", "gflops", "--log2"},
      {"roofline", cpu, gpu, "--ops"},
      {"boxplot", cpu, gpu, "--metric", "mfu", "--group-by", "family,device_kind,precision"},
      {"speedup", cpu, gpu, "--field", "device_kind", "--where", "precision=float32", "--color-by",
       "batch"},
      {"speedup", cpu, "--field", "precision", "--color-by", "node"},
  };
  for (const std::vector<std::string>& analysis : analyses) {
    for (const char* extension : {"png", "svg"}) {
      const std::string plot = dir_.File(analysis[0] + "-" + analysis[1] + "." + extension);
      std::vector<std::string> args = {"analyze"};
      args.insert(args.end(), analysis.begin(), analysis.end());
      args.insert(args.end(), {"--plot", plot});
      CommandResult result = cluster_.Cli(args);
      ASSERT_EQ(result.exit_code, 0) << analysis[0] << ": " << result.err;
      EXPECT_FALSE(result.out.empty()) << analysis[0];
      const std::string content = ReadFile(plot);
      ASSERT_GT(content.size(), 1000u) << plot;
      if (std::string(extension) == "png") {
        EXPECT_TRUE(absl::StartsWith(content, "\x89PNG")) << plot;
      } else {
        EXPECT_NE(content.find("<svg"), std::string::npos) << plot;
      }
    }
  }
}

TEST_F(AnalyzeTest, HeatmapTableShowsOomAndJsonCarriesTheCells) {
  const std::string cpu = std::to_string(sweeps_[0]);
  CommandResult table =
      cluster_.Cli({"analyze", "heatmap", cpu, "--x", "node", "--y", "batch", "--where",
                    "precision=bfloat16", "--where", "layer=4", "--metric", "examples_per_sec"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("OOM"), std::string::npos) << table.out;

  CommandResult json =
      cluster_.Cli({"analyze", "heatmap", cpu, "--x", "node", "--y", "batch", "--panel",
                    "precision", "--metric", "gflops", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json parsed = nlohmann::json::parse(json.out);
  const nlohmann::json& heatmap = parsed.contains("heatmap") ? parsed["heatmap"] : parsed;
  ASSERT_EQ(heatmap["panels"].size(), 2u) << json.out;
  EXPECT_EQ(heatmap["panels"][0]["cells"].size(), 9u);
}

TEST_F(AnalyzeTest, ReportWritesOneSelfContainedPage) {
  const std::string out = dir_.File("report");
  CommandResult result = cluster_.Cli(
      {"report", std::to_string(sweeps_[0]), std::to_string(sweeps_[1]), "--out", out});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string html = ReadFile(out + "/index.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("fc-cpu"), std::string::npos);
  EXPECT_NE(html.find("bfloat16 over float32"), std::string::npos);
  EXPECT_NE(html.find("Roofline"), std::string::npos);
  EXPECT_NE(html.find("cuda over cpu"), std::string::npos);
  // Self-contained: no external scripts, stylesheets or images.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("<img src=\"http"), std::string::npos);
}

// `--db FILE` answers from the file through a private read-only
// coordinator: the same JSON as the running coordinator gives (which keeps
// its lock meanwhile), then the same again once no coordinator runs, and
// the file is left as it was.
TEST_F(AnalyzeTest, DbFileAnswersAsTheCoordinatorDoesWithoutOne) {
  const std::string cpu = std::to_string(sweeps_[0]);
  const std::string gpu = std::to_string(sweeps_[1]);
  const std::vector<std::vector<std::string>> analyses = {
      {"heatmap", cpu, "--x", "node", "--y", "batch", "--panel", "precision", "--metric", "mfu"},
      {"sensitivity", cpu, "--where", "precision=float32", "--metric", "gflops", "--log2"},
      {"roofline", cpu, gpu, "--ops"},
      {"boxplot", cpu, gpu, "--metric", "gflops"},
      {"speedup", cpu, gpu, "--field", "device_kind", "--where", "precision=float32"},
  };
  auto run = [&](const std::vector<std::string>& analysis, bool from_file) {
    std::vector<std::string> args = {"analyze"};
    args.insert(args.end(), analysis.begin(), analysis.end());
    args.insert(args.end(), {"--format", "json"});
    if (from_file) args.insert(args.end(), {"--db", cluster_.db_path()});
    CommandResult result = cluster_.Cli(args);
    EXPECT_EQ(result.exit_code, 0) << analysis[0] << (from_file ? " --db: " : ": ") << result.err;
    return result.out;
  };
  std::vector<std::string> served;
  for (const auto& analysis : analyses) {
    served.push_back(run(analysis, false));
    ASSERT_GT(served.back().size(), 50u) << analysis[0];
    EXPECT_EQ(run(analysis, true), served.back()) << analysis[0] << " beside the coordinator";
  }
  cluster_.Stop();
  const std::string before = ReadFile(cluster_.db_path());
  for (size_t i = 0; i < analyses.size(); ++i) {
    EXPECT_EQ(run(analyses[i], true), served[i]) << analyses[i][0] << " without a coordinator";
  }
  const std::string out = dir_.File("report-from-file");
  CommandResult report =
      cluster_.Cli({"report", cpu, gpu, "--out", out, "--db", cluster_.db_path()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(ReadFile(out + "/index.html").find("cuda over cpu"), std::string::npos);
  EXPECT_TRUE(ReadFile(cluster_.db_path()) == before) << "--db changed the database file";

  CommandResult missing =
      cluster_.Cli({"analyze", "boxplot", cpu, "--metric", "gflops", "--db", dir_.File("no.db")});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("--db " + dir_.File("no.db")), std::string::npos) << missing.err;
}

TEST_F(AnalyzeTest, BadRequestsExitTwoNamingTheProblem) {
  const std::string cpu = std::to_string(sweeps_[0]);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"analyze", "heatmap", cpu, "--x", "nodes", "--y", "batch", "--metric", "gflops"},
       "'nodes' is not a field"},
      {{"analyze", "heatmap", cpu, "--x", "node", "--y", "batch", "--metric", "speed"},
       "metric 'speed' is unknown"},
      {{"analyze", "heatmap", cpu, "--x", "node", "--y", "batch", "--where", "batch=16", "--metric",
        "gflops"},
       "constant"},
      {{"analyze", "speedup", cpu, "--field", "device_kind"}, "device_kind"},
      {{"analyze", "sensitivity", cpu, "--where", "layer", "--metric", "gflops"}, "--where"},
      {{"analyze", "heatmap", "99", "--x", "node", "--y", "batch", "--metric", "gflops"},
       "sweep 99 not found"},
      {{"analyze", "roofline", cpu, "--plot", dir_.File("x.pdf")}, "--plot"},
  };
  for (const Case& c : cases) {
    CommandResult result = cluster_.Cli(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args[1] << " " << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << result.err;
  }
}

}  // namespace
}  // namespace paradnn::testing
