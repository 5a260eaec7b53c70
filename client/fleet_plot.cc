#include "client/fleet_plot.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/gnuplot.h"

namespace paradnn::client {
namespace {

// Percent of the group's device time since submission, in stacking order:
// waiting, productive, then the badput causes.
std::vector<double> Segments(const v1::GoodputAggregate& a) {
  const double elapsed = a.device_elapsed_s();
  if (!(elapsed > 0)) return std::vector<double>(8, 0.0);
  const v1::GoodputParts& p = a.device_parts();
  auto percent = [elapsed](double seconds) { return 100 * seconds / elapsed; };
  return {percent(elapsed - a.device_holding_s()),
          percent(p.productive_s()),
          percent(p.initialization_s()),
          percent(p.compilation_s()),
          percent(p.data_loading_s()),
          percent(p.checkpointing_s()),
          percent(p.lost_progress_s()),
          percent(p.other_s())};
}

// No '%' in it: gnuplot reads tic labels as formats.
std::string Label(const v1::GoodputAggregate& a, const std::string& name) {
  return a.has_mpg() ? absl::StrFormat("%s (MPG %.4f)", name, a.mpg())
                     : absl::StrFormat("%s (MPG -)", name);
}

}  // namespace

std::string FleetPlotScript(const v1::FleetReportResponse& report, const std::string& out_path) {
  using gnuplot::Quote;
  // PlotFleetReport refuses other extensions; anything not .svg draws a PNG.
  const gnuplot::Terminal terminal =
      gnuplot::PlotTerminal(out_path).value_or(gnuplot::Terminal::kPng);
  std::vector<std::vector<double>> rows = {Segments(report.fleet())};
  std::vector<std::string> labels = {Label(report.fleet(), "fleet")};
  for (const v1::GoodputAggregate& kind : report.by_device_kind()) {
    rows.push_back(Segments(kind));
    labels.push_back(Label(kind, kind.group()));
  }
  std::ostringstream out;
  gnuplot::Prologue(out, terminal, {std::max(640, 150 * static_cast<int>(rows.size())), 480},
                    out_path);
  out << "set title "
      << Quote(absl::StrCat("Where the device time went: ", report.fleet().jobs(),
                            " jobs since submission"))
      << "\n";
  out << "set style data histograms\nset style histogram rowstacked\n";
  out << "set style fill solid 0.9 border -1\nset boxwidth 0.6\n";
  out << "set yrange [0:100]\nset ylabel 'percent of device time (requested devices x time)'\n";
  out << "set key outside right top vertical\n";
  out << "set xtics " << gnuplot::IndexTics(labels) << " rotate by -20\n";
  gnuplot::Datablock(out, "time", rows);
  const char* kSegments[] = {"waiting for devices", "productive",   "initialization",
                             "compilation",         "data loading", "checkpointing",
                             "lost progress",       "other"};
  const char* kColours[] = {"#bbbbbb", "#2ca02c", "#1f77b4", "#9467bd",
                            "#ff7f0e", "#8c564b", "#d62728", "#7f7f7f"};
  out << "plot ";
  for (int i = 0; i < 8; ++i) {
    out << (i == 0 ? "$time" : ", ''") << " using " << (i + 1) << " title " << Quote(kSegments[i])
        << " lc rgb " << Quote(kColours[i]);
  }
  out << "\n";
  return gnuplot::Finish(out);
}

absl::Status PlotFleetReport(const v1::FleetReportResponse& report, const std::string& out_path) {
  if (absl::StatusOr<gnuplot::Terminal> terminal = gnuplot::PlotTerminal(out_path);
      !terminal.ok()) {
    return terminal.status();
  }
  return gnuplot::Run(FleetPlotScript(report, out_path), out_path);
}

}  // namespace paradnn::client
