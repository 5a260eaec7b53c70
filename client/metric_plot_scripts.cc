#include "client/metric_plot_scripts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/plot_scripts.h"

namespace paradnn::client::internal {

namespace {

// ---- Heat map ---------------------------------------------------------------

// The finite values' bounds over every panel; lo > hi when there is none.
struct ValueRange {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
};

// One colour scale across panels, so that panels compare.
ValueRange HeatmapValueRange(const v1::HeatmapResponse& heatmap) {
  ValueRange range;
  for (const auto& panel : heatmap.panels()) {
    for (const auto& cell : panel.cells()) {
      if (!cell.has_value() || !std::isfinite(cell.value())) continue;
      range.lo = std::min(range.lo, cell.value());
      range.hi = std::max(range.hi, cell.value());
    }
  }
  return range;
}

// The palette and the axes' labels.
void WriteHeatmapAxes(std::ostringstream& out, const v1::HeatmapResponse& heatmap) {
  out << "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', "
         "1 '#fde725')\n";
  out << "set style fill solid 1.0 noborder\n";
  out << "unset key\nunset grid\n";
  out << "set xlabel " << Quote(heatmap.x()) << "\n";
  out << "set ylabel " << Quote(heatmap.y()) << "\n";
  out << "set cblabel " << Quote(MetricLabel(heatmap.metric(), heatmap.unit())) << " offset 1,0\n";
}

// The colour bar over `range` (log when it spans more than 100×), or none
// when no cell has a value.
void WriteHeatmapColorBar(std::ostringstream& out, ValueRange range) {
  const double lo = range.lo;
  const double hi = range.hi;
  const bool any_value = lo <= hi;
  const bool log_cb = any_value && lo > 0 && hi / lo > 100;
  if (any_value) {
    double cb_lo = lo;
    double cb_hi = hi;
    if (cb_lo == cb_hi) {
      const double pad = cb_lo == 0 ? 1 : std::fabs(cb_lo) * 0.1;
      cb_lo -= pad;
      cb_hi += pad;
      if (lo > 0 && cb_lo <= 0) cb_lo = lo / 2;
    }
    out << "set cbrange [" << Num(cb_lo) << ":" << Num(cb_hi) << "]\n";
    if (log_cb) out << "set logscale cb\n";
    // Tic labels of at most ~6 characters (large values as 10k, 250k) and
    // a right margin for them and the label: gnuplot does not make room
    // for the colour bar's tic labels itself.
    const char* format = "'%.4g'";
    if (hi >= 1e4) format = (cb_hi - cb_lo) / cb_hi > 0.2 ? "'%.0s%c'" : "'%.1s%c'";
    out << "set format cb " << format << "\n";
    out << "set rmargin 12\n";
  } else {
    out << "set cbrange [0:1]\nunset colorbox\n";
  }
}

// Why a cell without a value has none, in words; "" when it does not say.
std::string MissingCellText(const v1::HeatmapCell& cell) {
  if (cell.oom_results() > 0) return "OOM";
  if (cell.predicted_oom_results() > 0) return "pOOM";
  if (cell.failed_results() > 0) return "fail";
  return "";
}

// What hovering over a cell says (an SVG tooltip): its coordinates, value,
// counts and, for predictions, their interval. No quotes or markup: it
// travels in a gnuplot string, an SVG attribute and (NativeSvgTooltips) an
// SVG title.
std::string CellTooltip(const v1::HeatmapResponse& heatmap, const v1::HeatmapCell& cell) {
  std::string text = absl::StrCat(heatmap.x(), "=", cell.x(), ", ", heatmap.y(), "=", cell.y());
  if (cell.has_value()) {
    absl::StrAppend(&text, ": ", absl::StrFormat("%.4g", cell.value()),
                    heatmap.unit().empty() ? "" : " ", heatmap.unit(), " (median of ",
                    cell.ok_results(), " OK");
    if (cell.predicted_results() > 0) {
      absl::StrAppend(&text, ", ", cell.predicted_results(), " predicted");
      if (cell.has_predicted_low() && cell.has_predicted_high()) {
        absl::StrAppend(&text, absl::StrFormat(", their 90%% interval %.4g to %.4g",
                                               cell.predicted_low(), cell.predicted_high()));
      }
    }
    text += ")";
  }
  if (cell.oom_results() > 0) absl::StrAppend(&text, "; ", cell.oom_results(), " OOM");
  if (cell.predicted_oom_results() > 0) {
    absl::StrAppend(&text, "; ", cell.predicted_oom_results(), " predicted not to fit");
  }
  if (cell.failed_results() > 0) absl::StrAppend(&text, "; ", cell.failed_results(), " failed");
  for (char& c : text) {
    if (c == '"' || c == '\'' || c == '\\' || c == '<' || c == '>' || c == '&' ||
        static_cast<unsigned char>(c) < 0x20) {
      c = ' ';
    }
  }
  return text;
}

// One panel's axis values as ranges and tics; returns each value's index.
std::map<std::string, size_t> WritePanelAxis(std::ostringstream& out, const char* axis,
                                             const std::vector<std::string>& values) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < values.size(); ++i) index.emplace(values[i], i);
  out << "set " << axis << "range [-0.5:" << Num(values.size() - 0.5) << "]\n";
  out << "set " << axis << "tics " << IndexTics(values) << "\n";
  if (std::string(axis) == "x") {
    out << (values.size() > 8 ? "set xtics rotate by 45 right\n" : "set xtics norotate\n");
  }
  return index;
}

// Panel `p`: its own axes (the values it has results at), its cells with a
// value as coloured boxes, the others labelled (MissingCellText).
void WriteHeatmapPanel(std::ostringstream& out, const v1::HeatmapResponse& heatmap, int p) {
  const auto& panel = heatmap.panels(p);
  const auto& xs = panel.x_values().empty() ? heatmap.x_values() : panel.x_values();
  const auto& ys = panel.y_values().empty() ? heatmap.y_values() : panel.y_values();
  const std::map<std::string, size_t> x_index =
      WritePanelAxis(out, "x", std::vector<std::string>(xs.begin(), xs.end()));
  const std::map<std::string, size_t> y_index =
      WritePanelAxis(out, "y", std::vector<std::string>(ys.begin(), ys.end()));
  std::vector<std::vector<double>> cells;
  std::vector<std::vector<double>> predicted;  // cells whose median includes predictions
  std::vector<std::string> tooltips;           // "x y \"text\"" per cell with results
  out << "unset label\n";
  int label = 1;
  for (const auto& cell : panel.cells()) {
    auto xi = x_index.find(cell.x());
    auto yi = y_index.find(cell.y());
    if (xi == x_index.end() || yi == y_index.end()) continue;
    const double x = static_cast<double>(xi->second);
    const double y = static_cast<double>(yi->second);
    if (cell.ok_results() + cell.oom_results() + cell.predicted_oom_results() +
            cell.failed_results() >
        0) {
      tooltips.push_back(
          absl::StrCat(Num(x), " ", Num(y), " \"", CellTooltip(heatmap, cell), "\""));
    }
    if (cell.has_value() && std::isfinite(cell.value())) {
      cells.push_back({x, y, cell.value()});
      if (cell.predicted_results() > 0) predicted.push_back({x, y});
      continue;
    }
    // Not coloured: a cell without a value says why in words.
    const std::string text = MissingCellText(cell);
    if (text.empty()) continue;
    out << "set label " << label++ << " " << Quote(text) << " at " << xi->second << ", "
        << yi->second << " center front tc rgb '#b00000'\n";
  }
  if (heatmap.panel().empty()) {
    out << "set title ''\n";
  } else {
    out << "set title " << Quote(absl::StrCat(heatmap.panel(), "=", panel.panel_value())) << "\n";
  }
  if (cells.empty()) {
    out << "plot NaN notitle\n";
    return;
  }
  const std::string block = absl::StrCat("panel", p);
  const std::string hatched = absl::StrCat("predicted", p);
  const std::string tips = absl::StrCat("tips", p);
  Datablock(out, block, cells);
  if (!predicted.empty()) Datablock(out, hatched, predicted);
  out << "$" << tips << " << EOD\n";
  for (const std::string& tip : tooltips) out << tip << "\n";
  out << "EOD\n";
  out << "plot $" << block
      << " using 1:2:($1-0.5):($1+0.5):($2-0.5):($2+0.5):3 with boxxyerror lc palette notitle";
  if (!predicted.empty()) {
    // Hatched over the colour: the cell's median includes predictions.
    out << ", $" << hatched
        << " using 1:2:($1-0.5):($1+0.5):($2-0.5):($2+0.5) with boxxyerror fs transparent "
           "pattern 4 noborder lc rgb '#ffffff' notitle";
  }
  // Invisible points that carry each cell's tooltip (SVG; PNG draws
  // nothing for them).
  out << ", $" << tips
      << " using 1:2:3 with labels hypertext point pt 5 ps 5 lc rgb '#ff000000' notitle\n";
}

}  // namespace

std::string HeatmapScript(const v1::HeatmapResponse& heatmap, Terminal terminal,
                          const std::string& out_path) {
  std::ostringstream out;
  const int panels = heatmap.panels_size();
  const int columns = std::max(1, std::min(panels, 3));
  const int rows = std::max(1, (panels + columns - 1) / columns);
  std::string title = absl::StrCat(heatmap.metric(), " by ", heatmap.x(), " and ", heatmap.y());
  const bool any_predicted = std::any_of(
      heatmap.panels().begin(), heatmap.panels().end(), [](const v1::HeatmapPanel& panel) {
        return std::any_of(
            panel.cells().begin(), panel.cells().end(),
            [](const v1::HeatmapCell& cell) { return cell.predicted_results() > 0; });
      });
  if (any_predicted) title += " (hatched: includes predicted results)";
  const size_t nx = heatmap.x_values_size();
  const size_t ny = heatmap.y_values_size();
  if (panels == 0 || nx == 0 || ny == 0) {
    Prologue(out, terminal, Canvas{640, 360}, out_path);
    MessageFigure(out, title, "no results to draw");
    return Finish(out);
  }
  Prologue(out, terminal, Canvas{460 * columns + 40, 400 * rows + 40}, out_path);

  const ValueRange range = HeatmapValueRange(heatmap);
  WriteHeatmapAxes(out, heatmap);
  WriteHeatmapColorBar(out, range);
  out << "set multiplot layout " << rows << "," << columns << " title " << Quote(title) << "\n";
  for (int p = 0; p < panels; ++p) WriteHeatmapPanel(out, heatmap, p);
  out << "unset multiplot\n";
  return Finish(out);
}

// ---- Sensitivity ------------------------------------------------------------

std::string SensitivityScript(const v1::SensitivityResponse& sensitivity, Terminal terminal,
                              const std::string& out_path) {
  std::ostringstream out;
  const std::string target = sensitivity.log2_target()
                                 ? absl::StrCat("log2(", sensitivity.metric(), ")")
                                 : sensitivity.metric();
  const std::string title = absl::StrFormat("sensitivity of %s%s: R² = %.3f, %d points", target,
                                            sensitivity.log2_features() ? " to log2 features" : "",
                                            sensitivity.r_squared(), sensitivity.points());
  const int terms = sensitivity.weights_size();
  if (terms == 0) {
    Prologue(out, terminal, Canvas{640, 360}, out_path);
    MessageFigure(out, title, "no terms to draw");
    return Finish(out);
  }
  Prologue(out, terminal, Canvas{760, std::max(320, 140 + 30 * terms)}, out_path);
  double lo = 0;
  double hi = 0;
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < terms; ++i) {
    const auto& weight = sensitivity.weights(i);
    const double w = std::isfinite(weight.weight()) ? weight.weight() : 0;
    lo = std::min(lo, w);
    hi = std::max(hi, w);
    names.push_back(weight.term());
    rows.push_back({static_cast<double>(i), w});
  }
  const double span = hi - lo > 0 ? hi - lo : 1;
  Datablock(out, "weights", rows);
  out << "set title " << Quote(title) << "\n";
  out << "unset key\n";
  out << "set grid noytics\n";
  out << "set xlabel 'standardized weight'\n";
  out << "set ytics " << IndexTics(names) << "\n";
  out << "set yrange [" << Num(terms - 0.5) << ":-0.5]\n";
  out << "set xrange [" << Num(lo - 0.22 * span) << ":" << Num(hi + 0.22 * span) << "]\n";
  out << "set style fill solid 0.85 noborder\n";
  out << "set arrow 1 from 0, graph 0 to 0, graph 1 nohead lc rgb '#000000'\n";
  for (int i = 0; i < terms; ++i) {
    const double w = rows[i][1];
    out << "set label " << (i + 1) << " " << Quote(absl::StrFormat("%+.3f", w)) << " at " << Num(w)
        << ", " << i << (w < 0 ? " right offset -0.5,0" : " left offset 0.5,0") << "\n";
  }
  out << "plot $weights using 2:1:(($2 < 0) ? $2 : 0):(($2 < 0) ? 0 : $2):($1 - 0.35):($1 + 0.35):"
         "(($2 < 0) ? 0xd62728 : 0x1f77b4) with boxxyerror lc rgb variable notitle\n";
  return Finish(out);
}

// ---- Box plots --------------------------------------------------------------

std::string BoxplotScript(const v1::BoxplotResponse& boxplot, Terminal terminal,
                          const std::string& out_path) {
  std::ostringstream out;
  const std::string by =
      boxplot.group_by().empty() ? "group" : absl::StrJoin(boxplot.group_by(), ", ");
  const std::string title =
      absl::StrCat(boxplot.metric(), " by ", by, " (box q1-q3, whiskers 1.5 IQR, median)");
  const int n = boxplot.groups_size();
  if (n == 0) {
    Prologue(out, terminal, Canvas{640, 360}, out_path);
    MessageFigure(out, title, "no groups to draw");
    return Finish(out);
  }
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  std::vector<std::string> names;
  size_t longest = 0;
  std::vector<std::vector<double>> boxes;
  std::vector<std::vector<double>> outliers;
  for (int i = 0; i < n; ++i) {
    const auto& group = boxplot.groups(i);
    names.push_back(group.name());
    longest = std::max(longest, group.name().size());
    boxes.push_back({static_cast<double>(i), group.whisker_low(), group.q1(), group.p50(),
                     group.q3(), group.whisker_high()});
    for (double value : {group.whisker_low(), group.whisker_high()}) {
      if (!std::isfinite(value)) continue;
      lo = std::min(lo, value);
      hi = std::max(hi, value);
    }
    for (double value : group.outliers()) {
      if (!std::isfinite(value)) continue;
      outliers.push_back({static_cast<double>(i), value});
      lo = std::min(lo, value);
      hi = std::max(hi, value);
    }
  }
  if (!(lo <= hi)) {
    lo = 0;
    hi = 1;
  }
  const bool log_y = lo > 0 && hi / lo > 100;
  const bool rotate = n > 6 || longest > 14;
  Prologue(out, terminal, Canvas{std::max(640, 200 + 70 * n), rotate ? 560 : 480}, out_path);
  Datablock(out, "boxes", boxes);
  if (!outliers.empty()) Datablock(out, "outliers", outliers);
  out << "set title " << Quote(title) << "\n";
  out << "set ylabel " << Quote(MetricLabel(boxplot.metric(), boxplot.unit())) << "\n";
  out << "set xtics " << IndexTics(names) << "\n";
  if (rotate) out << "set xtics rotate by 30 right\n";
  out << "set grid noxtics\n";
  out << "set xrange [-0.6:" << Num(n - 0.4) << "]\n";
  if (log_y) {
    out << "set logscale y\n";
    out << "set yrange [" << Num(lo / 1.5) << ":" << Num(hi * 1.5) << "]\n";
  } else {
    double pad = (hi - lo) * 0.08;
    if (pad <= 0) pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    double y_lo = lo - pad;
    if (lo >= 0 && y_lo < 0) y_lo = 0;
    out << "set yrange [" << Num(y_lo) << ":" << Num(hi + pad) << "]\n";
  }
  out << "set key outside top center horizontal\n";
  out << "set boxwidth 0.5\n";
  std::vector<std::string> elements = {
      "$boxes using 1:3:2:6:5 with candlesticks whiskerbars 0.5 lc rgb '#1f77b4' "
      "fs solid 0.35 border lc rgb '#1f77b4' title 'box q1-q3, whiskers 1.5 IQR'",
      "$boxes using 1:4:4:4:4 with candlesticks lw 2 lc rgb '#000000' fs empty "
      "border lc rgb '#000000' title 'median'"};
  if (!outliers.empty()) {
    elements.push_back(
        "$outliers using 1:2 with points pt 6 ps 0.7 lc rgb '#d62728' title 'outliers'");
  }
  out << "plot " << absl::StrJoin(elements, ", \\\n     ") << "\n";
  return Finish(out);
}

}  // namespace paradnn::client::internal
