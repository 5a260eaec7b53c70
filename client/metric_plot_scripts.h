// gnuplot scripts of the analyses that draw one metric over a sweep's
// fields: the heat map (the metric over two fields, one panel per panel
// value), the sensitivity (the metric's standardized weights per field) and
// the box plots (the metric's spread per group). Each returns a whole
// program with its data inline, writing `out_path` through `terminal`; a
// response with nothing to draw becomes a figure that says so. Internal to
// analysis_plots (callers use client/analysis_plots.h); pure functions,
// thread-safe.
#ifndef PARADNN_CLIENT_METRIC_PLOT_SCRIPTS_H_
#define PARADNN_CLIENT_METRIC_PLOT_SCRIPTS_H_

#include <string>

#include "client/gnuplot.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::internal {

// One panel per panel value (up to 3 a row) sharing one colour scale (log
// when the values span more than 100×); OOM, predicted-OOM and failed cells
// are labelled in words, not coloured.
std::string HeatmapScript(const v1::HeatmapResponse& heatmap, gnuplot::Terminal terminal,
                          const std::string& out_path);

// Horizontal bars of the weights, each labelled with its value; R² and the
// number of points in the title.
std::string SensitivityScript(const v1::SensitivityResponse& sensitivity,
                              gnuplot::Terminal terminal, const std::string& out_path);

// Box plots by Tukey's rule: box q1..q3, whiskers within 1.5 IQR, a median line and
// the outliers as points; log y when the values span more than 100×.
std::string BoxplotScript(const v1::BoxplotResponse& boxplot, gnuplot::Terminal terminal,
                          const std::string& out_path);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_METRIC_PLOT_SCRIPTS_H_
