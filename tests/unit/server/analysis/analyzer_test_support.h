// The fixture of the Analyzer tests (analyzer_test.cc, analyzer_predicted_test.cc):
// a real SQLite file with a CPU and a GPU platform, filled through the
// stores with FC results whose values are known in closed form.
#ifndef PARADNN_TESTS_UNIT_SERVER_ANALYSIS_ANALYZER_TEST_SUPPORT_H_
#define PARADNN_TESTS_UNIT_SERVER_ANALYSIS_ANALYZER_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/platform_store.h"
#include "server/analysis/analyzer.h"
#include "tests/support/synthetic_results.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::server::analysis {

using ::paradnn::testing::StoreSyntheticSweep;
using ::paradnn::testing::SyntheticPlatform;
using ::paradnn::testing::SyntheticResult;

// FC results with examples/s known in closed form: 100 × log2(node) − 50 ×
// log2(layer) + 10 × log2(batch), twice that in bfloat16.
inline SyntheticResult Fc(int64_t layer, int64_t node, int64_t batch,
                          const std::string& precision) {
  SyntheticResult result;
  result.params = {{"layer", layer}, {"node", node}, {"batch", batch}};
  result.precision = precision;
  const double value = 100 * std::log2(node) - 50 * std::log2(layer) + 10 * std::log2(batch);
  result.examples_per_sec = precision == "bfloat16" ? 2 * value : value;
  result.model_flops_per_sec = result.examples_per_sec * 1e6;
  result.executed_flops_per_sec = result.model_flops_per_sec * 1.1;
  result.executed_flops = 1e9 * layer;
  result.bytes_per_step = 1e7 * node / 64;
  result.mfu = result.model_flops_per_sec / 250e9;
  result.param_count = layer * node * node;
  return result;
}

class AnalyzerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(file_.path());
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    db::PlatformStore platforms(database_.get());
    absl::StatusOr<int64_t> cpu = platforms.UpsertSync(SyntheticPlatform("cpu-a", "cpu", 250e9));
    absl::StatusOr<int64_t> gpu = platforms.UpsertSync(SyntheticPlatform("gpu-b", "cuda", 500e12));
    ASSERT_TRUE(cpu.ok() && gpu.ok());
    cpu_platform_ = *cpu;
    gpu_platform_ = *gpu;
  }

  // layer {1, 4} × node {64, 256, 1024} × batch {16, 128} in `precisions`.
  std::vector<SyntheticResult> Grid(const std::vector<std::string>& precisions) {
    std::vector<SyntheticResult> results;
    for (const std::string& precision : precisions) {
      for (int64_t layer : {1, 4}) {
        for (int64_t node : {64, 256, 1024}) {
          for (int64_t batch : {16, 128}) results.push_back(Fc(layer, node, batch, precision));
        }
      }
    }
    return results;
  }

  int64_t Store(const std::vector<SyntheticResult>& results, const std::string& device = "cpu") {
    absl::StatusOr<int64_t> id =
        StoreSyntheticSweep(database_.get(), "s", device, results,
                            device == "cpu" ? cpu_platform_ : gpu_platform_, device + "-worker");
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }

  absl::StatusOr<v1::AnalyzeResponse> Analyze(const v1::AnalyzeRequest& request) {
    return Analyzer(database_.get()).Analyze(request);
  }

  // A heat map of `metric` over `sweep`, `x` by `y`.
  static v1::AnalyzeRequest HeatmapOf(int64_t sweep, const std::string& metric,
                                      const std::string& x, const std::string& y) {
    v1::AnalyzeRequest request;
    v1::HeatmapRequest* heatmap = request.mutable_heatmap();
    request.mutable_selection()->add_sweep_ids(sweep);
    heatmap->set_metric(metric);
    heatmap->set_x(x);
    heatmap->set_y(y);
    return request;
  }

  // A speedup of `field` over `sweep`, `candidate` against `baseline`
  // ("" leaves a side for the analysis to choose).
  static v1::AnalyzeRequest SpeedupOf(int64_t sweep, const std::string& field,
                                      const std::string& baseline = "",
                                      const std::string& candidate = "") {
    v1::AnalyzeRequest request;
    request.mutable_selection()->add_sweep_ids(sweep);
    v1::SpeedupRequest* speedup = request.mutable_speedup();
    speedup->set_field(field);
    speedup->set_baseline(baseline);
    speedup->set_candidate(candidate);
    return request;
  }

  db::testing::TempDbFile file_;
  std::unique_ptr<db::Database> database_;
  int64_t cpu_platform_ = 0;
  int64_t gpu_platform_ = 0;
};

}  // namespace paradnn::server::analysis

#endif  // PARADNN_TESTS_UNIT_SERVER_ANALYSIS_ANALYZER_TEST_SUPPORT_H_
