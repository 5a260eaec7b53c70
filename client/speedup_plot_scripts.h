// gnuplot scripts of the analyses that compare runs by speedup: the speedup
// of one setting over another per configuration (log-log against the
// parameter count, coloured by a field, a line at 1× and one at the
// geomean) and the scaling of the speedup with a field's level (against the
// ideal line, each level's efficiency written beside it). Each returns a
// whole program with its data inline, writing `out_path` through
// `terminal`; a response with nothing to draw becomes a figure that says
// so. Internal to analysis_plots (callers use client/analysis_plots.h);
// pure functions, thread-safe.
#ifndef PARADNN_CLIENT_SPEEDUP_PLOT_SCRIPTS_H_
#define PARADNN_CLIENT_SPEEDUP_PLOT_SCRIPTS_H_

#include <string>

#include "client/gnuplot.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::internal {

// Points coloured by color_value: one key entry per value, or a colour bar
// when there are more than 10 numeric values.
std::string SpeedupScript(const v1::SpeedupResponse& speedup, gnuplot::Terminal terminal,
                          const std::string& out_path);

// The median speedup per level with its min-max range; numeric levels on a
// log2 axis, others at positions 1, 2, 3, ...
std::string ScalingScript(const v1::ScalingResponse& scaling, gnuplot::Terminal terminal,
                          const std::string& out_path);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_SPEEDUP_PLOT_SCRIPTS_H_
