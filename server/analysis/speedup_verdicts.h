// A verdict on every point of a speedup (issue "differences you can
// trust"): each configuration's speedup with its 95 % interval and p-value
// (comparison_stats.h: paired by repeat round where both sides were
// measured in one, each configuration's spread moderated by the others'
// (SpreadPrior); unpaired otherwise; the platforms' re-run model for a side
// measured once), Benjamini-Hochberg across configurations, and the
// geometric mean's interval. Pure; thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_SPEEDUP_VERDICTS_H_
#define PARADNN_SERVER_ANALYSIS_SPEEDUP_VERDICTS_H_

#include <vector>

#include "paradnn/v1/analysis.pb.h"
#include "server/analysis/analysis_math.h"

namespace paradnn::server::analysis {

// The false discovery rate verdicts hold unless asked otherwise.
inline constexpr double kDefaultFdr = 0.05;

// Fills the interval, p- and q-values, basis, run counts and verdict of
// every point of `response` (as JoinSpeedup made it from `rows`), and the
// response's geomean interval, fdr and verdict counts. `lower_is_better`
// as for JoinSpeedup. A point with a predicted side gets "not enough data":
// a prediction is not a measurement to judge by.
void AddSpeedupVerdicts(const std::vector<SpeedupRow>& rows, bool lower_is_better, double fdr,
                        v1::SpeedupResponse* response);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_SPEEDUP_VERDICTS_H_
