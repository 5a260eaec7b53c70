#include "client/scale_out_views.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/analysis_kind_views.h"
#include "client/output_format.h"

namespace paradnn::client::internal {
namespace {

using gnuplot::Canvas;
using gnuplot::Datablock;
using gnuplot::Num;
using gnuplot::Quote;
using gnuplot::Terminal;

// The figure draws this many series at most; the table has them all.
constexpr int kMaxDrawnSeries = 8;
constexpr size_t kMaxLegendChars = 48;

// "weak scaling, batch 64 per replica" / "strong scaling, global batch 256".
std::string SeriesKind(const v1::ScaleOutSeries& series) {
  if (series.mode() == "weak") {
    return absl::StrCat("weak scaling, batch ", series.batch(), " per replica");
  }
  if (series.mode() == "strong") {
    return absl::StrCat("strong scaling, global batch ", series.global_batch());
  }
  return "neither weak nor strong scaling";
}

std::string Seconds(double seconds) { return HumanMillis(seconds * 1e3); }

std::string OptionalTimes(bool has, double value) { return has ? Times(value) : "-"; }

std::string OptionalPercent(bool has, double value) { return has ? Percent(value) : "-"; }

std::vector<std::string> PointRow(const v1::ScaleOutPoint& p) {
  return {absl::StrCat(p.n()),
          absl::StrCat(p.ranks()),
          absl::StrCat(p.batch()),
          absl::StrCat(p.global_batch()),
          absl::StrCat(p.predicted() ? kPredictedMark : "", HumanCount(p.examples_per_sec())),
          p.ideal_examples_per_sec() > 0 ? HumanCount(p.ideal_examples_per_sec()) : "-",
          OptionalTimes(p.has_speedup(), p.speedup()),
          OptionalPercent(p.has_efficiency(), p.efficiency()),
          Seconds(p.step_s()),
          Seconds(p.compute_s()),
          Seconds(p.exposed_communication_s()),
          Seconds(p.optimizer_s()),
          Seconds(p.other_s()),
          Percent(p.communication_share()),
          p.bus_bytes_per_sec() > 0 ? WithPrefix(p.bus_bytes_per_sec(), "B/s") : "-",
          p.roof_allreduce_s() > 0 ? Seconds(p.roof_allreduce_s()) : "-",
          p.roof_fraction() > 0 ? Percent(p.roof_fraction()) : "-",
          p.data_parallel() ? p.backend() : "plain"};
}

// A series' legend entry, short enough for the figure.
std::string Legend(const v1::ScaleOutSeries& series) {
  std::string text =
      absl::StrCat(series.mode(), " ",
                   series.mode() == "strong" ? absl::StrCat("B=", series.global_batch())
                                             : absl::StrCat("b=", series.batch()),
                   " ", series.config());
  if (series.mode() == "neither") text = absl::StrCat("neither ", series.config());
  if (text.size() > kMaxLegendChars) text = text.substr(0, kMaxLegendChars - 3) + "...";
  return text;
}

// Left: examples/s against N (log-log), each series solid with its ideal
// line dashed in the same colour.
void ThroughputPlot(const v1::ScaleOutResponse& s, int drawn, std::ostringstream& out) {
  double lo = INFINITY;
  double hi = 0;
  std::vector<std::string> plots;
  for (int i = 0; i < drawn; ++i) {
    const v1::ScaleOutSeries& series = s.series(i);
    std::vector<std::vector<double>> rows;
    for (const v1::ScaleOutPoint& p : series.points()) {
      rows.push_back({static_cast<double>(p.n()), p.examples_per_sec(),
                      p.ideal_examples_per_sec() > 0 ? p.ideal_examples_per_sec() : NAN});
      for (double v : {p.examples_per_sec(), p.ideal_examples_per_sec()}) {
        if (!(v > 0)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
    const std::string block = absl::StrCat("series", i);
    Datablock(out, block, rows);
    plots.push_back(absl::StrCat("$", block, " using 1:2 with linespoints pt 7 lw 2 lc ", i + 1,
                                 " title ", Quote(Legend(series))));
    if (series.mode() != "neither") {
      plots.push_back(
          absl::StrCat("$", block, " using 1:3 with lines dt 2 lc ", i + 1, " notitle"));
    }
  }
  out << "set title " << Quote("examples/s vs " + s.field() + " (dashed: ideal)") << "\n";
  out << "set logscale xy 2\nset format y '%.1s%c'\n";
  out << "set xlabel " << Quote(s.field()) << "\nset ylabel 'examples/s (whole job)'\n";
  if (hi > 0) out << "set yrange [" << Num(lo / 1.3) << ":" << Num(hi * 1.3) << "]\n";
  out << "set key top left Left reverse font ',8'\n";
  out << "plot " << absl::StrJoin(plots, ", \\\n     ") << "\n";
  out << "unset logscale\nunset format\nunset yrange\n";
}

// Right: the first series' step, stacked: compute, exposed
// communication, optimizer, the rest.
void BreakdownPlot(const v1::ScaleOutResponse& s, std::ostringstream& out) {
  const v1::ScaleOutSeries& series = s.series(0);
  std::vector<std::vector<double>> rows;
  for (const v1::ScaleOutPoint& p : series.points()) {
    rows.push_back({static_cast<double>(p.n()), p.compute_s() * 1e3,
                    p.exposed_communication_s() * 1e3, p.optimizer_s() * 1e3, p.other_s() * 1e3});
  }
  Datablock(out, "parts", rows);
  std::vector<std::string> title = {absl::StrCat("step of the first series (", series.mode(), " ",
                                                 series.mode() == "strong"
                                                     ? absl::StrCat("B=", series.global_batch())
                                                     : absl::StrCat("b=", series.batch()),
                                                 ")")};
  if (series.has_crossover_n()) {
    title.push_back(absl::StrFormat("communication >= 50%% of the step from %s ~ %.3g", s.field(),
                                    series.crossover_n()));
  }
  out << "set title " << gnuplot::QuoteLines(title) << "\n";
  out << "set style data histograms\nset style histogram rowstacked\n";
  out << "set style fill solid 0.85 border -1\nset boxwidth 0.7\n";
  out << "set xlabel " << Quote(s.field()) << "\nset ylabel 'ms per step'\nset yrange [0:*]\n";
  out << "set key top left Left reverse font ',8'\n";
  out << "plot $parts using 2:xtic(1) lc rgb '#1f77b4' title 'compute', \\\n"
         "     '' using 3 lc rgb '#d62728' title 'exposed communication', \\\n"
         "     '' using 4 lc rgb '#2ca02c' title 'optimizer', \\\n"
         "     '' using 5 lc rgb '#bbbbbb' title 'other'\n";
}

}  // namespace

std::string ScaleOutTable(const v1::ScaleOutResponse& s) {
  std::string out =
      absl::StrFormat("scale-out over %s: %d series (%d weak, %d strong, %d neither)\n", s.field(),
                      s.series_size(), s.weak_series(), s.strong_series(), s.neither_series());
  const std::vector<std::string> header = {
      s.field(), "ranks",  "batch",  "global batch", "examples/s",   "ideal",
      "speedup", "eff.",   "step",   "compute",      "exposed comm", "optimizer",
      "other",   "comm %", "bus BW", "roof AR",      "of roof",      "path"};
  std::vector<bool> right(header.size(), true);
  right.back() = false;
  bool any_predicted = false;
  for (const v1::ScaleOutSeries& series : s.series()) {
    absl::StrAppend(&out, "\n", SeriesKind(series), ": ", series.config(), "\n");
    if (!series.baseline().empty()) absl::StrAppend(&out, "  baseline ", series.baseline(), "\n");
    if (!series.crossover().empty()) {
      absl::StrAppend(&out, "  communication share crosses 50 %: ", series.crossover(), "\n");
    }
    if (!series.note().empty()) absl::StrAppend(&out, "  note: ", series.note(), "\n");
    for (const std::string& roof : series.roofs()) {
      absl::StrAppend(&out, "  all-reduce roof ", roof, "\n");
    }
    Rows rows;
    for (const v1::ScaleOutPoint& p : series.points()) {
      any_predicted = any_predicted || p.predicted();
      rows.push_back(PointRow(p));
    }
    absl::StrAppend(&out, AlignColumns(header, rows, right));
  }
  if (any_predicted) absl::StrAppend(&out, kPredictedMark, ": predicted\n");
  return out;
}

std::string ScaleOutCsv(const v1::ScaleOutResponse& s) {
  std::string out = CsvLine({"config",
                             "mode",
                             "series_batch",
                             "series_global_batch",
                             "baseline_n",
                             "baseline_kind",
                             "crossover_n",
                             s.field(),
                             "ranks",
                             "batch",
                             "global_batch",
                             "runs",
                             "step_s",
                             "examples_per_sec",
                             "ideal_examples_per_sec",
                             "speedup",
                             "efficiency",
                             "compute_s",
                             "exposed_communication_s",
                             "optimizer_s",
                             "other_s",
                             "communication_share",
                             "allreduce_s",
                             "bus_bytes_per_sec",
                             "allreduce_bytes",
                             "buckets",
                             "roof_allreduce_s",
                             "roof_fraction",
                             "backend",
                             "data_parallel",
                             "predicted"});
  for (const v1::ScaleOutSeries& series : s.series()) {
    for (const v1::ScaleOutPoint& p : series.points()) {
      absl::StrAppend(&out,
                      CsvLine({series.config(),
                               series.mode(),
                               absl::StrCat(series.batch()),
                               absl::StrCat(series.global_batch()),
                               absl::StrCat(series.baseline_n()),
                               series.baseline_kind(),
                               series.has_crossover_n() ? ShortestDouble(series.crossover_n()) : "",
                               absl::StrCat(p.n()),
                               absl::StrCat(p.ranks()),
                               absl::StrCat(p.batch()),
                               absl::StrCat(p.global_batch()),
                               absl::StrCat(p.runs()),
                               ShortestDouble(p.step_s()),
                               ShortestDouble(p.examples_per_sec()),
                               ShortestDouble(p.ideal_examples_per_sec()),
                               p.has_speedup() ? ShortestDouble(p.speedup()) : "",
                               p.has_efficiency() ? ShortestDouble(p.efficiency()) : "",
                               ShortestDouble(p.compute_s()),
                               ShortestDouble(p.exposed_communication_s()),
                               ShortestDouble(p.optimizer_s()),
                               ShortestDouble(p.other_s()),
                               ShortestDouble(p.communication_share()),
                               ShortestDouble(p.allreduce_s()),
                               ShortestDouble(p.bus_bytes_per_sec()),
                               absl::StrCat(p.allreduce_bytes()),
                               absl::StrCat(p.buckets()),
                               ShortestDouble(p.roof_allreduce_s()),
                               ShortestDouble(p.roof_fraction()),
                               p.backend(),
                               p.data_parallel() ? "true" : "false",
                               p.predicted() ? "true" : "false"}));
    }
  }
  return out;
}

std::string ScaleOutScript(const v1::ScaleOutResponse& s, Terminal terminal,
                           const std::string& out_path) {
  std::ostringstream out;
  const std::string title = absl::StrCat("data-parallel scaling over ", s.field());
  if (s.series_size() == 0) {
    gnuplot::Prologue(out, terminal, Canvas{640, 360}, out_path);
    gnuplot::MessageFigure(out, title, "no series to draw");
    return gnuplot::Finish(out);
  }
  const int drawn = std::min(s.series_size(), kMaxDrawnSeries);
  gnuplot::Prologue(out, terminal, Canvas{1200, 520}, out_path);
  std::string heading = title;
  if (drawn < s.series_size()) {
    absl::StrAppend(&heading, " (the first ", drawn, " of ", s.series_size(),
                    " series; the table has them all)");
  }
  out << "set multiplot layout 1,2 title " << Quote(heading) << "\n";
  ThroughputPlot(s, drawn, out);
  BreakdownPlot(s, out);
  out << "unset multiplot\n";
  return gnuplot::Finish(out);
}

}  // namespace paradnn::client::internal
