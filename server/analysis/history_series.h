// The history analysis (analysis.proto HistoryRequest): the selected runs
// grouped by configuration and hardware class, each series in measurement
// order, searched for change points (change_points.h), and each change
// named by what differs between the stacks on its two sides. Pure;
// thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_HISTORY_SERIES_H_
#define PARADNN_SERVER_ANALYSIS_HISTORY_SERIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "paradnn/v1/analysis.pb.h"
#include "server/analysis/change_points.h"

namespace paradnn::server::analysis {

// One measured run as the history sees it.
struct HistoryRun {
  std::string config;    // the configuration label
  std::string hardware;  // "cpu AMD EPYC"
  std::string fingerprint;
  int64_t sweep_id = 0;
  int32_t repeat = 0;
  int64_t job_id = 0;
  double value = 0;
  // The stack settings of the run's platform the change names
  // (libtorch_version, blas_backend, blas_core, aten_capability).
  std::map<std::string, std::string> stack;
};

// "libtorch_version 1.13.1 -> 2.1.0, blas_core Haswell -> Zen": the
// settings whose values differ, in key order; "" when none do.
std::string StackChange(const std::map<std::string, std::string>& before,
                        const std::map<std::string, std::string>& after);

// The series of `runs` (any order): ordered by sweep, repeat and job;
// searched when they hold at least 2 x options.min_points_each_side
// points. Series with changes come first, then by config and hardware.
v1::HistoryResponse BuildHistory(std::vector<HistoryRun> runs, const ChangePointOptions& options);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_HISTORY_SERIES_H_
