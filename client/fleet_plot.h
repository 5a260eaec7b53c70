// The figure of `paradnn fleet report --plot FILE`: where the device time
// of the fleet and of each device kind went since the jobs were submitted,
// one stacked bar each (waiting for devices, productive, then each badput
// cause), MPG above it. Drawn with gnuplot (client/gnuplot.h).
#ifndef PARADNN_CLIENT_FLEET_PLOT_H_
#define PARADNN_CLIENT_FLEET_PLOT_H_

#include <string>

#include "absl/status/status.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::client {

// The gnuplot program drawing `report` into `out_path` (SVG for *.svg,
// else PNG). Pure.
std::string FleetPlotScript(const v1::FleetReportResponse& report, const std::string& out_path);

// Draws it. InvalidArgument naming --plot for a name not ending in .png or
// .svg; errors of gnuplot::Run otherwise.
absl::Status PlotFleetReport(const v1::FleetReportResponse& report, const std::string& out_path);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_FLEET_PLOT_H_
