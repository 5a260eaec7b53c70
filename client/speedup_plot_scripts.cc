#include "client/speedup_plot_scripts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/plot_scripts.h"

namespace paradnn::client::internal {

namespace {

// Above this many distinct numeric colour values a speedup plot uses a
// colour bar instead of one key entry per value.
constexpr size_t kMaxDiscreteColors = 10;

// "METRIC speedup", and "of FIELD=CANDIDATE over FIELD=BASELINE" when the
// response names the field.
std::string SpeedupTitle(const v1::SpeedupResponse& speedup) {
  std::string title = absl::StrCat(speedup.metric(), " speedup");
  if (!speedup.field().empty()) {
    absl::StrAppend(&title, " of ", speedup.field(), "=", speedup.candidate(), " over ",
                    speedup.field(), "=", speedup.baseline());
  }
  return title;
}

// The points' distinct colour values, in numeric order where every one is a
// number (`numeric`), else in text order.
struct ColorValues {
  std::vector<std::string> values;
  bool numeric = false;
};

ColorValues DistinctColorValues(const v1::SpeedupResponse& speedup) {
  std::vector<std::string> values;
  {
    std::set<std::string> seen;
    for (const auto& point : speedup.points()) {
      if (seen.insert(point.color_value()).second) values.push_back(point.color_value());
    }
  }
  bool numeric = !values.empty();
  for (const auto& value : values) numeric = numeric && ParseNumber(value).has_value();
  if (numeric) {
    std::sort(values.begin(), values.end(), [](const std::string& a, const std::string& b) {
      return *ParseNumber(a) < *ParseNumber(b);
    });
  } else {
    std::sort(values.begin(), values.end());
  }
  return {std::move(values), numeric};
}

// The points a log-log figure can show and their bounds (y always spans
// 1×): (params, speedup) rows per colour value and, for a colour bar, all
// rows with the colour value as a third column.
struct SpeedupPoints {
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = 0;
  double y_lo = 1;
  double y_hi = 1;
  std::map<std::string, std::vector<std::vector<double>>> by_color;
  std::vector<std::vector<double>> all;
};

SpeedupPoints CollectSpeedupPoints(const v1::SpeedupResponse& speedup, bool palette) {
  SpeedupPoints points;
  for (const auto& point : speedup.points()) {
    const double params = static_cast<double>(point.params());
    if (!Positive(params) || !Positive(point.speedup())) continue;
    points.x_lo = std::min(points.x_lo, params);
    points.x_hi = std::max(points.x_hi, params);
    points.y_lo = std::min(points.y_lo, point.speedup());
    points.y_hi = std::max(points.y_hi, point.speedup());
    points.by_color[point.color_value()].push_back({params, point.speedup()});
    if (palette) points.all.push_back({params, point.speedup(), *ParseNumber(point.color_value())});
  }
  return points;
}

// The title (`title` over `summary`), the log axes over `points`, their
// labels and the key; lines at 1× and at the geomean.
void WriteSpeedupAxes(std::ostringstream& out, const v1::SpeedupResponse& speedup,
                      const std::string& title, const std::string& summary,
                      const SpeedupPoints& points) {
  out << "set title " << QuoteLines({title, summary}) << "\n";
  out << "set logscale x 10\nset logscale y 2\n";
  out << "set xrange [" << Num(points.x_lo / 1.6) << ":" << Num(points.x_hi * 1.6) << "]\n";
  out << "set yrange [" << Num(points.y_lo / 1.25) << ":" << Num(points.y_hi * 1.25) << "]\n";
  out << "set format x '%.0s%c'\n";
  out << "set xlabel 'trainable parameters'\n";
  out << "set ylabel "
      << Quote(
             absl::StrCat("speedup of ", speedup.candidate(), " over ", speedup.baseline(), " (×)"))
      << "\n";
  out << "set key outside right top vertical Left reverse\n";
  out << "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 1.5 lc rgb '#000000'\n";
  if (Positive(speedup.geomean_speedup())) {
    out << "set arrow 2 from graph 0, first " << Num(speedup.geomean_speedup())
        << " to graph 1, first " << Num(speedup.geomean_speedup())
        << " nohead dt 2 lc rgb '#888888'\n";
  }
}

// All points in one datablock, coloured through a palette over the numeric
// colour `values` (log2 when they span more than 16×).
void AddPalettePoints(std::ostringstream& out, const v1::SpeedupResponse& speedup,
                      const std::vector<std::string>& values, const SpeedupPoints& points,
                      std::vector<std::string>* elements) {
  Datablock(out, "speedup", points.all);
  out << "set palette defined (0 '#440154', 0.5 '#21918c', 1 '#fde725')\n";
  out << "set cblabel " << Quote(speedup.color_by()) << "\n";
  const double first = *ParseNumber(values.front());
  const double last = *ParseNumber(values.back());
  if (first > 0 && last / first > 16) out << "set logscale cb 2\n";
  elements->push_back("$speedup using 1:2:3 with points pt 7 ps 0.9 lc palette notitle");
}

// One datablock and key entry per colour value, in the order of `values`.
void AddPointSeries(std::ostringstream& out, const v1::SpeedupResponse& speedup,
                    const std::vector<std::string>& values, const SpeedupPoints& points,
                    std::vector<std::string>* elements) {
  int color = 0;
  for (const auto& value : values) {
    auto rows = points.by_color.find(value);
    if (rows == points.by_color.end()) continue;  // only non-positive points
    const std::string data = absl::StrCat("speedup", color);
    Datablock(out, data, rows->second);
    std::string name;
    if (speedup.color_by().empty()) {
      name = value.empty() ? "configurations" : value;
    } else {
      name = absl::StrCat(speedup.color_by(), "=", value);
    }
    elements->push_back(absl::StrCat("$", data, " using 1:2 with points pt 7 ps 0.9 lc rgb '",
                                     kSeriesColors[color % kSeriesColorCount], "' title ",
                                     Quote(name)));
    ++color;
  }
}

}  // namespace

std::string SpeedupScript(const v1::SpeedupResponse& speedup, Terminal terminal,
                          const std::string& out_path) {
  std::ostringstream out;
  const std::string title = SpeedupTitle(speedup);
  const std::string summary = absl::StrFormat(
      "geomean %.3g×, min %.3g×, max %.3g×, %d configurations (%d baseline only, %d candidate "
      "only)",
      speedup.geomean_speedup(), speedup.min_speedup(), speedup.max_speedup(),
      speedup.points_size(), speedup.baseline_only(), speedup.candidate_only());
  const ColorValues colors = DistinctColorValues(speedup);
  const bool palette = colors.numeric && colors.values.size() > kMaxDiscreteColors;
  const SpeedupPoints points = CollectSpeedupPoints(speedup, palette);
  if (!(points.x_lo <= points.x_hi)) {
    Prologue(out, terminal, Canvas{800, 360}, out_path);
    MessageFigure(out, title, "no configuration measured on both sides");
    return Finish(out);
  }
  Prologue(out, terminal, Canvas{900, 560}, out_path);
  WriteSpeedupAxes(out, speedup, title, summary, points);
  std::vector<std::string> elements;
  if (Positive(speedup.geomean_speedup())) {
    // A key entry for the geomean line (drawn as an arrow).
    elements.push_back(absl::StrFormat("NaN with lines dt 2 lc rgb '#888888' title 'geomean %.3g×'",
                                       speedup.geomean_speedup()));
  }
  if (palette) {
    AddPalettePoints(out, speedup, colors.values, points, &elements);
  } else {
    AddPointSeries(out, speedup, colors.values, points, &elements);
  }
  out << "plot " << absl::StrJoin(elements, ", \\\n     ") << "\n";
  return Finish(out);
}

// ---- Scaling ----------------------------------------------------------------

std::string ScalingScript(const v1::ScalingResponse& scaling, Terminal terminal,
                          const std::string& out_path) {
  std::ostringstream out;
  const std::string title = absl::StrCat(scaling.metric(), " scaling with ", scaling.field());
  // Numeric levels on a log2 axis; otherwise positions 1, 2, 3, ...
  bool numeric = scaling.summary_size() > 0;
  for (const auto& level : scaling.summary()) {
    auto value = ParseNumber(level.value());
    numeric = numeric && value.has_value() && *value > 0;
  }
  std::vector<std::vector<double>> rows;
  std::vector<std::string> labels;
  double base = 0;
  double y_lo = 1;
  double y_hi = 1;
  for (int i = 0; i < scaling.summary_size(); ++i) {
    const auto& level = scaling.summary(i);
    const double x = numeric ? *ParseNumber(level.value()) : i + 1;
    if (i == 0) base = x;
    const double ideal = x / base;
    labels.push_back(level.value());
    y_hi = std::max(y_hi, ideal);
    if (!Positive(level.median_speedup())) continue;
    const double low = Positive(level.min_speedup()) ? level.min_speedup() : level.median_speedup();
    const double high =
        Positive(level.max_speedup()) ? level.max_speedup() : level.median_speedup();
    rows.push_back({x, level.median_speedup(), low, high, ideal});
    y_lo = std::min(y_lo, low);
    y_hi = std::max(y_hi, high);
  }
  if (rows.empty()) {
    Prologue(out, terminal, Canvas{640, 360}, out_path);
    MessageFigure(out, title, "no levels to draw");
    return Finish(out);
  }
  Prologue(out, terminal, Canvas{760, 520}, out_path);
  Datablock(out, "levels", rows);
  std::vector<std::vector<double>> ideal_rows;
  for (int i = 0; i < scaling.summary_size(); ++i) {
    const double x = numeric ? *ParseNumber(scaling.summary(i).value()) : i + 1;
    ideal_rows.push_back({x, x / base});
  }
  Datablock(out, "ideal", ideal_rows);
  out << "set title " << Quote(title) << "\n";
  const double x_lo = ideal_rows.front()[0];
  const double x_hi = ideal_rows.back()[0];
  out << "set logscale x 2\nset logscale y 2\n";
  out << "set xrange [" << Num(x_lo / 1.3) << ":" << Num(x_hi * 1.3) << "]\n";
  out << "set yrange [" << Num(y_lo / 1.3) << ":" << Num(y_hi * 1.3) << "]\n";
  std::vector<std::string> tics;
  tics.reserve(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    tics.push_back(absl::StrCat(Quote(labels[i]), " ", Num(ideal_rows[i][0])));
  }
  out << "set xtics (" << absl::StrJoin(tics, ", ") << ")\n";
  out << "set xlabel " << Quote(scaling.field()) << "\n";
  out << "set ylabel "
      << Quote(absl::StrCat("speedup over ", scaling.field(), "=", scaling.summary(0).value(),
                            " (×)"))
      << "\n";
  out << "set key top left\n";
  int label = 1;
  for (int i = 0; i < scaling.summary_size(); ++i) {
    const auto& level = scaling.summary(i);
    if (!Positive(level.median_speedup()) || !std::isfinite(level.median_efficiency())) continue;
    const double x = ideal_rows[i][0];
    out << "set label " << label << " "
        << Quote(absl::StrFormat("%.0f%%", 100 * level.median_efficiency())) << " at " << Num(x)
        << ", " << Num(level.median_speedup()) << " left offset 0.8,0.6 tc rgb '#555555'\n";
    ++label;
  }
  out << "plot $ideal using 1:2 with lines dt 2 lc rgb '#888888' title 'ideal (level / base)', \\\n"
         "     $levels using 1:2:3:4 with yerrorlines pt 7 lw 2 lc rgb '#1f77b4' "
         "title 'median speedup (min-max), efficiency %'\n";
  return Finish(out);
}

}  // namespace paradnn::client::internal
