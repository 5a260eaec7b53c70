// The gnuplot script of a roofline analysis: log-log, the measured points
// (jobs and operators in different point types, a colour per precision and,
// when several, per platform) under every platform's roofs, a compute roof
// per dtype and kernel bounded by DRAM bandwidth, the silicon's theoretical
// matmul peak and the outermost cache level's roof. Internal to
// analysis_plots (callers use client/analysis_plots.h); a pure function,
// thread-safe.
#ifndef PARADNN_CLIENT_ROOFLINE_PLOT_SCRIPT_H_
#define PARADNN_CLIENT_ROOFLINE_PLOT_SCRIPT_H_

#include <string>

#include "client/gnuplot.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::internal {

// The whole program with its data inline, writing `out_path` through
// `terminal`; a figure that says so when there are neither points nor
// calibrated roofs. Points without a positive intensity or rate are left
// out and counted in the title.
std::string RooflineScript(const v1::RooflineResponse& roofline, gnuplot::Terminal terminal,
                           const std::string& out_path);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_ROOFLINE_PLOT_SCRIPT_H_
