// Figures of analyses drawn with gnuplot (Debian gnuplot-nox): PNG
// (pngcairo) or SVG by the output file's extension. One function per
// analysis; each writes the data and a gnuplot script into a private
// temporary folder, runs `gnuplot` and removes the folder.
// Thread-compatible (each call uses its own folder).
#ifndef PARADNN_CLIENT_ANALYSIS_PLOTS_H_
#define PARADNN_CLIENT_ANALYSIS_PLOTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client {

// Draws `response` into `out_path` (*.png or *.svg; InvalidArgument naming
// --plot otherwise). Heat maps: one panel per panel value side by side, a
// colour bar with the metric and unit, log2 axes labels as the values,
// OOM / predicted-OOM cells marked with text, not coloured as zero, cells
// whose median includes predicted results hatched, and in SVG every cell's
// configuration, value, counts and interval as its tooltip.
// Sensitivity: horizontal bars of the weights with R² and points in the
// title. Roofline: log-log, the points (ops in another style), every
// platform's compute roofs per dtype and memory roofs drawn as lines,
// axes "arithmetic intensity (FLOP/byte)" and "FLOP/s". Box plots: the
// Tukey boxes (q1..q3, whiskers within 1.5 IQR, median line), outliers as points,
// log y when the values span more than 100×. Speedup: log-log speedup
// against parameter count, coloured by color_value, a line at 1×. Scaling:
// speedup against the level with the ideal line.
// Unavailable when gnuplot is not installed; Internal with gnuplot's
// stderr when it fails.
absl::Status PlotAnalysis(const v1::AnalyzeResponse& response, const std::string& out_path);

// `response` drawn as SVG, the file's text (for pages that inline it).
// Errors as PlotAnalysis.
absl::StatusOr<std::string> RenderSvg(const v1::AnalyzeResponse& response);

// gnuplot's SVG hypertext (which needs its gnuplot_svg.js) as native SVG
// <title> tooltips, which every browser shows on hover without a script.
std::string NativeSvgTooltips(const std::string& svg);

// The gnuplot program PlotAnalysis runs for `response`, with its data
// inline (datablocks), writing to `out_path`; exposed for tests.
std::string GnuplotScript(const v1::AnalyzeResponse& response, const std::string& out_path);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_ANALYSIS_PLOTS_H_
