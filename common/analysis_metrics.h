// The metrics an analysis can read from a result: one table for the
// coordinator's analyses (server/analysis/result_selection.cc computes
// them), the CLI's --metric help and the client's units. Torch-free.
#ifndef PARADNN_COMMON_ANALYSIS_METRICS_H_
#define PARADNN_COMMON_ANALYSIS_METRICS_H_

#include <string>
#include <vector>

namespace paradnn::common {

struct AnalysisMetric {
  const char* name;
  // "examples/s", "GFLOP/s", "fraction" (0.42; the CLI shows it as 42 %,
  // client/analysis_views.h ToDisplayUnits), "s", "B", "".
  const char* unit;
  bool lower_is_better;
  const char* description;
};

// Every metric, in the order help texts list them.
const std::vector<AnalysisMetric>& AnalysisMetrics();

// The metric called `name`, or nullptr.
const AnalysisMetric* FindAnalysisMetric(const std::string& name);

// "Metric: examples_per_sec: training examples per second ...; gflops: ...".
std::string AnalysisMetricHelp();

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_ANALYSIS_METRICS_H_
