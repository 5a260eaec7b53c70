// The paper's software-stack comparison (§6) on one host: the same sweep on
// two workers whose OpenBLAS runs different kernel sets (--blas-core), each
// a platform of its own (the core is part of the fingerprint), and one sweep
// whose stack settings are axes (stack: {blas_core: [...], aten_capability:
// [...]}) on one worker, compared with `paradnn analyze speedup --field
// blas_core`. Real coordinator, workers and runners on loopback.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

bool HostHasFlag(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0)
      return (" " + line + " ").find(" " + flag + " ") != std::string::npos;
  }
  return false;
}

std::string SubmitAndWatch(Cluster& cluster, const std::string& sweep_file) {
  std::string id;
  cluster.SubmitAndWatch(sweep_file, seconds(300), &id);
  return id;
}

// The core `paradnn-runner --platform --blas-core CORE` reports running on:
// "" where the BLAS is not OpenBLAS, its own pick where it ignores the
// variable (built without DYNAMIC_ARCH).
std::string CoreInEffect(const std::string& core) {
  CommandResult platform =
      RunCommand({BinDir() + "/paradnn-runner", "--platform", "--blas-core", core},
                 std::chrono::milliseconds(60000));
  if (platform.exit_code != 0) return "";
  return nlohmann::json::parse(platform.out).value("blas_core", "");
}

// Why this host cannot run OpenBLAS's Prescott and Haswell kernels on
// request, or "" when it can: both tests compare the two.
std::string WhyNoCoreChoice() {
  if (!HostHasFlag("avx2") || !HostHasFlag("fma")) {
    return "needs an x86 CPU with AVX2 and FMA (OpenBLAS Haswell kernels)";
  }
  if (CoreInEffect("Prescott") != "Prescott" || CoreInEffect("Haswell") != "Haswell") {
    return "the BLAS is not an OpenBLAS that takes OPENBLAS_CORETYPE";
  }
  return "";
}

TEST(StackCompareTest, SameSweepOnTwoBlasCoresIsComparedByBlasCore) {
  if (const std::string why = WhyNoCoreChoice(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string sweep = dir.File("stack.yaml");
  std::ofstream(sweep) << "name: stack\nfamily: fc\ndevice: cpu\n"
                          "params: {layer: 2, node: {values: [256, 512]}, input: 512, output: 64, "
                          "batch: 128}\n"
                          "run: {ci: 0.2, max_seconds: 0.5, warmup_steps: 1, min_steps: 3}\n";
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  // What Debian's OpenBLAS does by itself on Intel family 6 model 207.
  cluster.StartWorker("as-installed", {"--blas-core", "Prescott", "--state-dir", dir.File("a")});
  const std::string before = SubmitAndWatch(cluster, sweep);
  ASSERT_NO_FATAL_FAILURE(cluster.KillWorker(0));
  cluster.StartWorker("tuned", {"--blas-core", "Haswell", "--state-dir", dir.File("b")});
  const std::string after = SubmitAndWatch(cluster, sweep);

  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(DISTINCT blas_core) FROM platforms "
                     "WHERE blas_core IN ('Prescott', 'Haswell')"),
            2);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(DISTINCT platform_id) FROM results"), 2);

  CommandResult speedup =
      cluster.Cli({"analyze", "speedup", before, after, "--field", "blas_core", "--baseline",
                   "Prescott", "--candidate", "Haswell", "--format", "json"});
  ASSERT_EQ(speedup.exit_code, 0) << speedup.err;
  const nlohmann::json response =
      nlohmann::json::parse(speedup.out).value("speedup", nlohmann::json());
  ASSERT_TRUE(response.contains("points")) << speedup.out;
  EXPECT_EQ(response.value("baseline", ""), "Prescott");
  EXPECT_EQ(response.value("candidate", ""), "Haswell");
  // Both configurations were measured on both cores.
  EXPECT_EQ(response.at("points").size(), 2u) << speedup.out;
  for (const auto& point : response.at("points")) {
    EXPECT_GT(point.at("speedup").get<double>(), 0) << point.dump();
  }
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST(StackCompareTest, StackSettingsAreSweepAxesOnOneWorker) {
  if (const std::string why = WhyNoCoreChoice(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string sweep = dir.File("stack-axes.yaml");
  std::ofstream(sweep) << "name: stack-axes\nfamily: fc\ndevice: cpu\n"
                          "params: {layer: 2, node: {values: [256, 512]}, input: 512, output: 64, "
                          "batch: 128}\n"
                          "stack: {blas_core: [Prescott, Haswell], aten_capability: [default, "
                          "avx2]}\n"
                          "run: {ci: 0.2, max_seconds: 0.5, warmup_steps: 1, min_steps: 3}\n";
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("one", {"--state-dir", dir.File("state")});
  const std::string id = SubmitAndWatch(cluster, sweep);

  // 2 widths x 2 cores x 2 capabilities, each run on what it asked for, all
  // on the worker's one platform.
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE outcome = 1"), 8);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(DISTINCT platform_id) FROM results"), 1);
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results r JOIN job_params p ON p.job_id = r.job_id "
                     "AND p.key = 'stack.blas_core' WHERE p.text_value = r.blas_core"),
            8);
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results r JOIN job_params p ON p.job_id = r.job_id "
                     "AND p.key = 'stack.aten_capability' WHERE p.text_value = r.aten_capability"),
            8);
  // The host-speed sentinel compares with a calibration on the worker's own
  // stack: under Prescott kernels it would call the host slow. Not run.
  EXPECT_EQ(
      QueryInt(cluster.db_path(),
               "SELECT count(*) FROM results WHERE suspect LIKE '%slower than at calibration%'"),
      0);

  for (const auto& [field, baseline, candidate] :
       {std::tuple{"blas_core", "Prescott", "Haswell"},
        std::tuple{"aten_capability", "default", "avx2"}}) {
    CommandResult speedup = cluster.Cli({"analyze", "speedup", id, "--field", field, "--baseline",
                                         baseline, "--candidate", candidate, "--format", "json"});
    ASSERT_EQ(speedup.exit_code, 0) << field << ": " << speedup.err;
    const nlohmann::json response =
        nlohmann::json::parse(speedup.out).value("speedup", nlohmann::json());
    ASSERT_TRUE(response.contains("points")) << speedup.out;
    EXPECT_EQ(response.value("baseline", ""), baseline) << speedup.out;
    EXPECT_EQ(response.value("candidate", ""), candidate) << speedup.out;
    // Every configuration of the other axes is one pair.
    EXPECT_EQ(response.at("points").size(), 4u) << speedup.out;
  }
  // The results table shows what each job asked for.
  CommandResult results = cluster.Cli({"results", id, "--format", "csv"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  EXPECT_NE(results.out.find("stack.aten_capability"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find("stack.blas_core"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find("Prescott"), std::string::npos) << results.out;
  // A bad value is refused at submit, naming the field.
  const std::string bad = dir.File("bad.yaml");
  std::ofstream(bad) << "name: bad\nfamily: fc\ndevice: cpu\n"
                        "params: {layer: 1, node: 32, input: 8, output: 2, batch: 4}\n"
                        "stack: {aten_capability: [avx1024]}\n";
  CommandResult refused = cluster.Cli({"submit", bad, "-q"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("stack.aten_capability[0]: 'avx1024' is not auto, as-installed or "
                             "default, avx2 or avx512"),
            std::string::npos)
      << refused.err;
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

}  // namespace
}  // namespace paradnn::testing
