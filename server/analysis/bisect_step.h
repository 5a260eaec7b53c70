// The Analyze RPC's bisect (v1::BisectRequest): one step of the search for
// the settings that make stack B slower (or faster) than stack A
// (bisect_search.h), for `paradnn bisect`, which runs the measurements as
// jobs. Stateless: the search is deterministic, so replaying it over the
// measurements the request carries, in the order it asked for them, brings
// it to where it was; the response says what to measure next, or the
// result. Pure; thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_BISECT_STEP_H_
#define PARADNN_SERVER_ANALYSIS_BISECT_STEP_H_

#include "absl/status/statusor.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::server::analysis {

// Bounds on a request, so that one cannot make the coordinator work hard.
inline constexpr int kMaxBisectSettings = 64;        // per stack
inline constexpr int kMaxBisectMeasurements = 1000;  // also caps max_measurements
inline constexpr int kMaxBisectStepTimes = 100'000;  // per measurement

// InvalidArgument naming the field for stacks that do not differ, options
// out of range, a request past the bounds, or a measurement that is not
// the one the search asked for at its place (bisect.measurements[i]).
absl::StatusOr<v1::BisectResponse> BisectStep(const v1::BisectRequest& request);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_BISECT_STEP_H_
