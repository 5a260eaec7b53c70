#include "client/allreduce_views.h"

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
#include "model/families/allreduce.h"

namespace paradnn::client::internal {
namespace {

using gnuplot::Canvas;
using gnuplot::Datablock;
using gnuplot::Num;
using gnuplot::Quote;
using gnuplot::Terminal;

// The figure draws this many series at most; the table has them all.
constexpr int kMaxDrawnRoofSeries = 8;
constexpr int kCurveSamples = 48;

std::string DurationText(double seconds) { return HumanMillis(seconds * 1e3); }

// "Synthetic cpu cpu-a, gloo, 4 ranks".
std::string SeriesName(const v1::AllreduceSeries& s) {
  return absl::StrCat(s.platform().empty() ? s.fingerprint() : s.platform(), ", ", s.backend(),
                      ", ", s.ranks(), s.ranks() == 1 ? " rank" : " ranks");
}

std::string Interval(bool has_low, double low, bool has_high, double high, absl::string_view unit) {
  if (!has_low) return "";
  const std::string upper = has_high ? WithPrefix(high, unit) : std::string("unbounded");
  return absl::StrCat(" [", WithPrefix(low, unit), ", ", upper, "]");
}

// The roof's bus bandwidth at `bytes`: busbytes / (alpha + busbytes / beta).
double RoofBusBandwidth(const v1::AllreduceRoof& roof, double bytes, int32_t ranks) {
  const double bus = bytes * model::AllReduceBusFactor(ranks);
  const double t =
      roof.alpha_s() + (roof.beta_bytes_per_sec() > 0 ? bus / roof.beta_bytes_per_sec() : 0);
  return t > 0 ? bus / t : NAN;
}

}  // namespace

std::string RoofSummary(const v1::AllreduceRoof& roof) {
  const std::string basis = absl::StrCat(
      roof.sweep_ids_size() == 1 ? "sweep " : "sweeps ", absl::StrJoin(roof.sweep_ids(), ", "),
      ", ", roof.runs(), " runs at ", roof.sizes(), roof.sizes() == 1 ? " size" : " sizes");
  if (!roof.fitted()) return absl::StrCat("no roof: ", roof.note(), " (", basis, ")");
  const std::string alpha = absl::StrCat(
      DurationText(roof.alpha_s()), roof.has_alpha_low_s()
                                        ? absl::StrCat(" [", DurationText(roof.alpha_low_s()), ", ",
                                                       DurationText(roof.alpha_high_s()), "]")
                                        : "");
  const std::string beta =
      roof.beta_bytes_per_sec() > 0
          ? absl::StrCat(
                WithPrefix(roof.beta_bytes_per_sec(), "B/s"),
                Interval(roof.has_beta_low_bytes_per_sec(), roof.beta_low_bytes_per_sec(),
                         roof.has_beta_high_bytes_per_sec(), roof.beta_high_bytes_per_sec(), "B/s"))
          : std::string("unresolved (latency-bound)");
  std::string out = absl::StrCat("alpha ", alpha, ", beta ", beta, " (", basis, ", residual ",
                                 Percent(roof.relative_residual()), ")");
  if (!roof.constraint().empty()) absl::StrAppend(&out, "; ", roof.constraint());
  if (!roof.note().empty()) absl::StrAppend(&out, "; ", roof.note());
  return out;
}

std::string AllreduceTable(const v1::AllreduceResponse& a) {
  std::string out = absl::StrFormat(
      "all-reduce roofs: %d series (platform, backend, ranks); t(M) = alpha + M x 2(n-1)/n / "
      "beta, 95 %% intervals in brackets\n",
      a.series_size());
  if (!a.note().empty()) absl::StrAppend(&out, "note: ", a.note(), "\n");
  const std::vector<std::string> header = {"bytes",  "runs",      "time",   "alg BW",
                                           "bus BW", "roof time", "of roof"};
  const std::vector<bool> right(header.size(), true);
  for (const v1::AllreduceSeries& series : a.series()) {
    absl::StrAppend(&out, "\n", SeriesName(series), "\n  roof: ", RoofSummary(series.roof()), "\n");
    Rows rows;
    rows.reserve(static_cast<size_t>(series.points_size()));
    for (const v1::AllreducePoint& p : series.points()) {
      rows.push_back({absl::StrCat(p.bytes()), absl::StrCat(p.runs()), DurationText(p.time_s()),
                      WithPrefix(p.algorithm_bytes_per_sec(), "B/s"),
                      WithPrefix(p.bus_bytes_per_sec(), "B/s"),
                      p.roof_time_s() > 0 ? DurationText(p.roof_time_s()) : "-",
                      p.roof_fraction() > 0 ? Percent(p.roof_fraction()) : "-"});
    }
    absl::StrAppend(&out, AlignColumns(header, rows, right));
  }
  return out;
}

std::string AllreduceCsv(const v1::AllreduceResponse& a) {
  std::string out = CsvLine({"platform",
                             "fingerprint",
                             "backend",
                             "ranks",
                             "fitted",
                             "alpha_s",
                             "alpha_low_s",
                             "alpha_high_s",
                             "beta_bytes_per_sec",
                             "beta_low_bytes_per_sec",
                             "beta_high_bytes_per_sec",
                             "relative_residual",
                             "sizes",
                             "constraint",
                             "bytes",
                             "runs",
                             "time_s",
                             "algorithm_bytes_per_sec",
                             "bus_bytes_per_sec",
                             "roof_time_s",
                             "roof_fraction"});
  auto optional = [](bool has, double value) { return has ? ShortestDouble(value) : ""; };
  for (const v1::AllreduceSeries& s : a.series()) {
    const v1::AllreduceRoof& r = s.roof();
    for (const v1::AllreducePoint& p : s.points()) {
      absl::StrAppend(
          &out, CsvLine({s.platform(),
                         s.fingerprint(),
                         s.backend(),
                         absl::StrCat(s.ranks()),
                         r.fitted() ? "true" : "false",
                         ShortestDouble(r.alpha_s()),
                         optional(r.has_alpha_low_s(), r.alpha_low_s()),
                         optional(r.has_alpha_high_s(), r.alpha_high_s()),
                         ShortestDouble(r.beta_bytes_per_sec()),
                         optional(r.has_beta_low_bytes_per_sec(), r.beta_low_bytes_per_sec()),
                         optional(r.has_beta_high_bytes_per_sec(), r.beta_high_bytes_per_sec()),
                         ShortestDouble(r.relative_residual()),
                         absl::StrCat(r.sizes()),
                         r.constraint(),
                         absl::StrCat(p.bytes()),
                         absl::StrCat(p.runs()),
                         ShortestDouble(p.time_s()),
                         ShortestDouble(p.algorithm_bytes_per_sec()),
                         ShortestDouble(p.bus_bytes_per_sec()),
                         ShortestDouble(p.roof_time_s()),
                         ShortestDouble(p.roof_fraction())}));
    }
  }
  return out;
}

std::string AllreduceScript(const v1::AllreduceResponse& a, Terminal terminal,
                            const std::string& out_path) {
  std::ostringstream out;
  const std::string title = "all-reduce bus bandwidth vs message size";
  std::vector<std::string> plots;
  for (int i = 0; i < std::min(a.series_size(), kMaxDrawnRoofSeries); ++i) {
    const v1::AllreduceSeries& s = a.series(i);
    if (s.ranks() <= 1 || s.points_size() == 0) continue;  // one rank moves no bus bytes
    std::vector<std::vector<double>> points;
    for (const v1::AllreducePoint& p : s.points()) {
      if (p.bytes() > 0) points.push_back({static_cast<double>(p.bytes()), p.bus_bytes_per_sec()});
    }
    if (points.empty()) continue;
    const std::string block = absl::StrCat("points", i);
    Datablock(out, block, points);
    plots.push_back(absl::StrCat("$", block, " using 1:2 with points pt 7 ps 1.2 lc ", i + 1,
                                 " title ", Quote(SeriesName(s))));
    if (!s.roof().fitted() || s.roof().beta_bytes_per_sec() <= 0) continue;
    std::vector<std::vector<double>> curve;
    curve.reserve(kCurveSamples);
    const double lo = std::log(points.front()[0]), hi = std::log(points.back()[0]);
    for (int k = 0; k < kCurveSamples; ++k) {
      const double bytes = std::exp(lo + (hi - lo) * k / (kCurveSamples - 1));
      curve.push_back({bytes, RoofBusBandwidth(s.roof(), bytes, s.ranks())});
    }
    Datablock(out, absl::StrCat("roof", i), curve);
    plots.push_back(absl::StrCat(
        "$roof", i, " using 1:2 with lines lw 2 lc ", i + 1, " title ",
        Quote(absl::StrCat("roof: beta ", WithPrefix(s.roof().beta_bytes_per_sec(), "B/s")))));
  }
  if (plots.empty()) {
    gnuplot::Prologue(out, terminal, Canvas{640, 360}, out_path);
    gnuplot::MessageFigure(out, title, "no series with two or more ranks to draw");
    return gnuplot::Finish(out);
  }
  gnuplot::Prologue(out, terminal, Canvas{900, 520}, out_path);
  std::string heading = absl::StrCat(title, " (lines: the fitted roof alpha + busbytes/beta)");
  if (a.series_size() > kMaxDrawnRoofSeries) {
    absl::StrAppend(&heading, "; the first ", kMaxDrawnRoofSeries, " of ", a.series_size(),
                    " series");
  }
  out << "set title " << Quote(heading) << "\n";
  out << "set logscale x 2\nset format x '%.0b%B'\nset format y '%.1s%c'\n";
  out << "set xlabel 'message (bytes)'\nset ylabel 'bus bandwidth (B/s)'\nset yrange [0:*]\n";
  out << "set key top left Left reverse font ',8'\n";
  out << "plot " << absl::StrJoin(plots, ", \\\n     ") << "\n";
  return gnuplot::Finish(out);
}

}  // namespace paradnn::client::internal
