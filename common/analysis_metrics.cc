#include "common/analysis_metrics.h"

#include "absl/strings/str_cat.h"

namespace paradnn::common {

const std::vector<AnalysisMetric>& AnalysisMetrics() {
  static const std::vector<AnalysisMetric>* const kMetrics = new std::vector<AnalysisMetric>{
      {"examples_per_sec", "examples/s", false,
       "training examples per second (batch / median step)"},
      {"gflops", "GFLOP/s", false, "model FLOPs (6 × forward MACs × batch) per second"},
      {"executed_gflops", "GFLOP/s", false, "FLOPs the step executes per second"},
      {"mfu", "fraction", false,
       "model FLOP/s / the calibrated roof of the job's kernel path and dtype (the stack's best)"},
      {"hfu", "fraction", false,
       "executed FLOP/s / the calibrated roof of the job's kernel path and dtype"},
      {"silicon_mfu", "fraction", false,
       "model FLOP/s / the silicon's theoretical peak of the dtype (the paper's definition)"},
      {"silicon_hfu", "fraction", false,
       "executed FLOP/s / the silicon's theoretical peak of the dtype"},
      {"step_time", "s", true, "median seconds per training step"},
      {"step_cv", "fraction", true, "coefficient of variation of the step times"},
      {"params", "", false, "trainable parameters"},
      {"model_flops", "FLOP", false, "model FLOPs per training step"},
      {"intensity", "FLOP/B", false, "executed FLOPs / bytes moved per step"},
      {"peak_rss", "B", true, "peak resident memory of the runner"},
  };
  return *kMetrics;
}

const AnalysisMetric* FindAnalysisMetric(const std::string& name) {
  for (const AnalysisMetric& metric : AnalysisMetrics()) {
    if (name == metric.name) return &metric;
  }
  return nullptr;
}

std::string AnalysisMetricHelp() {
  std::string help = "Metric: ";
  for (const AnalysisMetric& metric : AnalysisMetrics()) {
    if (&metric != &AnalysisMetrics().front()) help += "; ";
    absl::StrAppend(&help, metric.name, ": ", metric.description);
  }
  return help;
}

}  // namespace paradnn::common
