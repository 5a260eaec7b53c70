// The allreduce analysis (v1::AllreduceResponse: a platform's communication
// roof) as the CLI shows it: its table and CSV (what the table of kinds,
// client/analysis_kinds.cc, points at for FormatAnalysis) and its figure:
// bus bandwidth against message size on a log x axis, the measured points
// and the fitted roof's curve per (platform, backend, ranks). Pure
// functions; thread-safe.
#ifndef PARADNN_CLIENT_ALLREDUCE_VIEWS_H_
#define PARADNN_CLIENT_ALLREDUCE_VIEWS_H_

#include <string>

#include "client/gnuplot.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::internal {

// "alpha 40.0µs, beta 2.00 GB/s [1.9 GB/s, 2.1 GB/s] (sweep 12, 24 runs at
// 8 sizes, residual 1.2 %)", or why there is no fit.
std::string RoofSummary(const v1::AllreduceRoof& roof);
// Per series a heading (platform, backend, ranks) and its roof, then one
// row per message size.
std::string AllreduceTable(const v1::AllreduceResponse& a);
// One row per point, with its series' fields and roof first; raw numbers.
std::string AllreduceCsv(const v1::AllreduceResponse& a);
// The gnuplot program of the figure, data inline, writing `out_path`.
std::string AllreduceScript(const v1::AllreduceResponse& a, gnuplot::Terminal terminal,
                            const std::string& out_path);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_ALLREDUCE_VIEWS_H_
