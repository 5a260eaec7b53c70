// Other views of a sweep's results than one row per job: one row per
// configuration measured in several repeats (with the spread across them),
// and the operator breakdown of profiled results. Both are ResultTables, so
// every --format prints them.
#ifndef PARADNN_CLIENT_RESULT_VIEWS_H_
#define PARADNN_CLIENT_RESULT_VIEWS_H_

#include <cstddef>
#include <vector>

#include "client/output_format.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::client {

// One row per configuration (rows with equal config), in order of the first
// job: jobs (their ids, "3 15 27"), the configuration columns, then over the
// OK repeats: repeats_ok and repeats (all jobs), examples/s median, mean,
// min, max, spread_pct ((max - min) / median) and cv_pct (sample standard
// deviation / mean, empty below two OK repeats); the median of the repeats'
// step-time CI, and the outcomes other than OK with their counts.
ResultTable BuildRepeatsTable(const std::vector<v1::ResultRow>& rows);

// One row per (job, operator) of the profiled results: job_id, the
// configuration columns, operator, share of the step, calls, self and total
// ms per step, GFLOP/s where the profiler counted FLOPs, and the heaviest
// input shapes. Operators are summed by name over shapes; at most `top` per
// job, heaviest self time first (0 = all). Results without a profile have no
// rows.
ResultTable BuildOpsTable(const std::vector<v1::ResultRow>& rows, size_t top);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_RESULT_VIEWS_H_
