// Human and JSON renderings of runner output. Torch-free.
#ifndef PARADNN_WORKER_RUNNER_REPORT_H_
#define PARADNN_WORKER_RUNNER_REPORT_H_

#include <google/protobuf/message.h>

#include <string>

#include "absl/status/statusor.h"
#include "model/model_counts.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::WorkCounts;

// Proto JSON with every field printed (zeros included) and proto field names
// (snake_case), indented. int64 fields are strings, as proto3 JSON defines.
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

// --describe: the config, every ModelCounts field (as JSON numbers), the
// derived arithmetic intensities, the byte/FLOP breakdown and the operator
// width (heavy operators, longest chain, average), indented.
std::string DescribeJson(const v1::ModelConfig& config, const WorkCounts& work);

// Rows of the operator table FormatSummary appends to a profiled result.
inline constexpr size_t kSummaryOps = 12;

// The operator breakdown of a profiled measurement (op_profile summed by
// operator name), at most `max_rows` operators, heaviest self time first:
// share of the step, calls, self and total ms per step, GFLOP/s where the
// profiler counted FLOPs.
std::string FormatOpProfile(const v1::Measurement& measurement, size_t max_rows);

// The readable multi-line summary of a standalone measurement: config,
// params, examples/s, median step ± CI, p10/p90, GFLOP/s (model, executed),
// steps, stop reason, threads, peak RSS; or the outcome and error.
std::string FormatSummary(const v1::Measurement& measurement);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_REPORT_H_
