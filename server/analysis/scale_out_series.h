// The arithmetic of the scale-out analysis (ScaleOutResponse) on runs
// already read from the database (scaling_analysis.cc does the reading):
// weak and strong series per configuration, their efficiencies against the
// smallest N, the step's breakdown and where communication crosses half of
// the step. Pure functions of their inputs; thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_SCALE_OUT_SERIES_H_
#define PARADNN_SERVER_ANALYSIS_SCALE_OUT_SERIES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::server::analysis {

// The fields a scale-out analysis scales along.
inline constexpr const char* kScaleOutFields[] = {"hosts", "devices"};

// One OK run (one repeat of one job) as the analysis sees it.
struct ScaleOutRun {
  std::string config;  // every other hyper-parameter, family, precision, optimizer
  int32_t n = 0;       // the value of the scaled field
  int32_t ranks = 0;   // replicas in all (hosts x devices)
  int64_t batch = 0;   // per replica
  double step_s = 0;   // the job's median step
  bool predicted = false;
  // The job's DataParallelStep, when it has one (ranks > 1, or a 1-rank
  // job the runner wrapped all the same).
  bool data_parallel = false;
  std::string backend;
  double compute_s = 0;
  double exposed_communication_s = 0;
  double optimizer_s = 0;
  double allreduce_s = 0;
  double bus_bytes_per_sec = 0;
  int64_t allreduce_bytes = 0;
  int32_t buckets = 0;
  // The platform's communication roof's time for this run's all-reduce
  // (communication_roofs.h); 0 when it has none.
  double roof_allreduce_s = 0;
};

// A configuration's (N, batch) that has results, none of them OK (an OOM,
// a broken run): named in a series' note when it would have come before
// the baseline.
struct ScaleOutGap {
  std::string config;
  int32_t n = 0;
  int64_t batch = 0;
  std::string outcome;  // "OOM", "ERROR", ...
};

// The series of `runs` along `field` (hosts or devices): per configuration
// one weak series per batch and one strong series per global batch that
// span at least two N, or, when neither exists but the configuration has
// several N, one "neither" series of all its points. Repeats are combined
// by their median, value by value. InvalidArgument when no configuration
// has two N ("scale_out needs results at two or more values of hosts ...").
absl::StatusOr<v1::ScaleOutResponse> BuildScaleOut(const std::vector<ScaleOutRun>& runs,
                                                   const std::vector<ScaleOutGap>& gaps,
                                                   const std::string& field);

// The N at which `share` (by ascending `n`, all positive) first reaches
// 0.5, on log N between the two measured N around it; nullopt when it
// never does. A share of 0.5 or more at the first N answers that N.
std::optional<double> ShareCrossing(const std::vector<int32_t>& n,
                                    const std::vector<double>& share);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_SCALE_OUT_SERIES_H_
