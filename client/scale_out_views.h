// The scale-out analysis (v1::ScaleOutResponse) as the CLI shows it: its
// table and CSV (what the table of kinds, client/analysis_kinds.cc, points
// at for FormatAnalysis) and its figure: throughput against N on log axes
// with each series' ideal line, beside the stacked breakdown of the first
// series' step. Pure functions; thread-safe.
#ifndef PARADNN_CLIENT_SCALE_OUT_VIEWS_H_
#define PARADNN_CLIENT_SCALE_OUT_VIEWS_H_

#include <string>

#include "client/gnuplot.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::internal {

// Per series a heading (mode, batch, configuration), its baseline and
// where communication crosses half the step, then one row per N.
std::string ScaleOutTable(const v1::ScaleOutResponse& s);
// One row per point, with its series' fields first; raw numbers.
std::string ScaleOutCsv(const v1::ScaleOutResponse& s);
// The gnuplot program of the figure, data inline, writing `out_path`.
std::string ScaleOutScript(const v1::ScaleOutResponse& s, gnuplot::Terminal terminal,
                           const std::string& out_path);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_SCALE_OUT_VIEWS_H_
