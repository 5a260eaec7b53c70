#include "client/analysis_plots.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "client/gnuplot.h"

namespace paradnn::client {
namespace {

using gnuplot::Canvas;
using gnuplot::Datablock;
using gnuplot::Finish;
using gnuplot::IndexTics;
using gnuplot::MessageFigure;
using gnuplot::Num;
using gnuplot::Prologue;
using gnuplot::Quote;
using gnuplot::QuoteLines;
using gnuplot::Terminal;

// Line colours of point groups and bars (colour-blind friendly, Tableau 10).
constexpr const char* kSeriesColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                         "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
constexpr size_t kSeriesColorCount = sizeof(kSeriesColors) / sizeof(kSeriesColors[0]);

// Roof colours: dark, so the roofs stand apart from the points.
constexpr const char* kRoofColors[] = {"#000000", "#8b4513", "#00468b", "#6a0d6a", "#2f4f2f"};
constexpr size_t kRoofColorCount = sizeof(kRoofColors) / sizeof(kRoofColors[0]);

// Above this many distinct numeric colour values a speedup plot uses a
// colour bar instead of one key entry per value.
constexpr size_t kMaxDiscreteColors = 10;

std::string Lower(absl::string_view text) { return absl::AsciiStrToLower(text); }

std::string Extension(const std::string& path) {
  return Lower(std::filesystem::path(path).extension().string());
}

bool Positive(double value) { return std::isfinite(value) && value > 0; }

std::optional<double> ParseNumber(absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) return std::nullopt;
  return value;
}

// 3 significant digits with an SI prefix: "1.23 TFLOP/s", "20.1 GB/s".
std::string SiRate(double value, absl::string_view unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int prefix = 0;
  double scaled = value;
  while (std::fabs(scaled) >= 1000 && prefix < 6) {
    scaled /= 1000;
    ++prefix;
  }
  return absl::StrCat(absl::StrFormat("%.3g", scaled), " ", kPrefixes[prefix], unit);
}

std::string MetricLabel(const std::string& metric, const std::string& unit) {
  if (unit.empty()) return metric;
  return absl::StrCat(metric, " (", unit, ")");
}

// ---- Heat map ---------------------------------------------------------------

std::string HeatmapScript(const v1::HeatmapResponse& heatmap, Terminal terminal,
                          const std::string& out_path) {
  std::ostringstream out;
  const int panels = heatmap.panels_size();
  const int columns = std::max(1, std::min(panels, 3));
  const int rows = std::max(1, (panels + columns - 1) / columns);
  const std::string title =
      absl::StrCat(heatmap.metric(), " by ", heatmap.x(), " and ", heatmap.y());
  const size_t nx = heatmap.x_values_size();
  const size_t ny = heatmap.y_values_size();
  if (panels == 0 || nx == 0 || ny == 0) {
    Prologue(out, terminal, Canvas{640, 360}, out_path);
    MessageFigure(out, title, "no results to draw");
    return Finish(out);
  }
  Prologue(out, terminal, Canvas{460 * columns + 40, 400 * rows + 40}, out_path);

  std::map<std::string, size_t> x_index;
  std::map<std::string, size_t> y_index;
  for (size_t i = 0; i < nx; ++i) x_index.emplace(heatmap.x_values(i), i);
  for (size_t i = 0; i < ny; ++i) y_index.emplace(heatmap.y_values(i), i);

  // One colour scale across panels, so that panels compare.
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (const auto& panel : heatmap.panels()) {
    for (const auto& cell : panel.cells()) {
      if (!cell.has_value() || !std::isfinite(cell.value())) continue;
      lo = std::min(lo, cell.value());
      hi = std::max(hi, cell.value());
    }
  }
  const bool any_value = lo <= hi;
  const bool log_cb = any_value && lo > 0 && hi / lo > 100;

  out << "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', "
         "1 '#fde725')\n";
  out << "set style fill solid 1.0 noborder\n";
  out << "unset key\nunset grid\n";
  out << "set xrange [-0.5:" << Num(nx - 0.5) << "]\n";
  out << "set yrange [-0.5:" << Num(ny - 0.5) << "]\n";
  std::vector<std::string> x_labels(heatmap.x_values().begin(), heatmap.x_values().end());
  std::vector<std::string> y_labels(heatmap.y_values().begin(), heatmap.y_values().end());
  out << "set xtics " << IndexTics(x_labels) << "\n";
  out << "set ytics " << IndexTics(y_labels) << "\n";
  if (nx > 8) out << "set xtics rotate by 45 right\n";
  out << "set xlabel " << Quote(heatmap.x()) << "\n";
  out << "set ylabel " << Quote(heatmap.y()) << "\n";
  out << "set cblabel " << Quote(MetricLabel(heatmap.metric(), heatmap.unit())) << " offset 1,0\n";
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
  out << "set multiplot layout " << rows << "," << columns << " title " << Quote(title) << "\n";

  for (int p = 0; p < panels; ++p) {
    const auto& panel = heatmap.panels(p);
    std::vector<std::vector<double>> cells;
    out << "unset label\n";
    int label = 1;
    for (const auto& cell : panel.cells()) {
      auto xi = x_index.find(cell.x());
      auto yi = y_index.find(cell.y());
      if (xi == x_index.end() || yi == y_index.end()) continue;
      if (cell.has_value() && std::isfinite(cell.value())) {
        cells.push_back(
            {static_cast<double>(xi->second), static_cast<double>(yi->second), cell.value()});
        continue;
      }
      // Not coloured: a cell without a value says why in words.
      std::string text;
      if (cell.oom_results() > 0) {
        text = "OOM";
      } else if (cell.predicted_oom_results() > 0) {
        text = "pOOM";
      } else if (cell.failed_results() > 0) {
        text = "fail";
      }
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
      continue;
    }
    const std::string block = absl::StrCat("panel", p);
    Datablock(out, block, cells);
    out << "plot $" << block
        << " using 1:2:($1-0.5):($1+0.5):($2-0.5):($2+0.5):3 with boxxyerror lc palette "
           "notitle\n";
  }
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

// ---- Roofline ---------------------------------------------------------------

// The memory roofs a roofline draws for one platform: DRAM (the level named
// so, else the slowest) and the outermost cache level (the last one that is
// not DRAM, levels being listed from L1 outwards).
struct MemoryRoofs {
  const v1::BandwidthRoof* dram = nullptr;
  const v1::BandwidthRoof* cache = nullptr;
};

MemoryRoofs PickMemoryRoofs(const v1::PlatformRoofs& roofs) {
  MemoryRoofs picked;
  for (const auto& level : roofs.bandwidth()) {
    if (!Positive(level.bytes_per_sec())) continue;
    if (absl::StartsWithIgnoreCase(level.level(), "DRAM") ||
        absl::StartsWithIgnoreCase(level.level(), "HBM") ||
        absl::StartsWithIgnoreCase(level.level(), "memory")) {
      if (picked.dram == nullptr || level.bytes_per_sec() > picked.dram->bytes_per_sec()) {
        picked.dram = &level;
      }
    } else {
      picked.cache = &level;
    }
  }
  if (picked.dram == nullptr) {
    // No level called DRAM: the slowest level bounds memory traffic.
    for (const auto& level : roofs.bandwidth()) {
      if (!Positive(level.bytes_per_sec())) continue;
      if (picked.dram == nullptr || level.bytes_per_sec() < picked.dram->bytes_per_sec()) {
        picked.dram = &level;
      }
    }
    if (picked.cache == picked.dram) picked.cache = nullptr;
  }
  return picked;
}

// Vertices of min(peak, I × bandwidth) over [x_lo, x_hi] (log x: straight
// segments in between).
std::vector<std::vector<double>> RoofLine(double peak, double bandwidth, double x_lo, double x_hi) {
  std::vector<double> xs = {x_lo};
  if (Positive(bandwidth)) {
    const double ridge = peak / bandwidth;
    if (ridge > x_lo && ridge < x_hi) xs.push_back(ridge);
  }
  xs.push_back(x_hi);
  std::vector<std::vector<double>> rows;
  for (double x : xs) {
    rows.push_back({x, Positive(bandwidth) ? std::min(peak, x * bandwidth) : peak});
  }
  return rows;
}

std::string RooflineScript(const v1::RooflineResponse& roofline, Terminal terminal,
                           const std::string& out_path) {
  std::ostringstream out;
  const std::string title = "roofline";

  // Platform names, disambiguated when two platforms share a device name.
  std::map<std::string, int> name_count;
  for (const auto& roofs : roofline.roofs()) ++name_count[roofs.device_name()];
  std::map<int64_t, std::string> platform_name;
  for (const auto& roofs : roofline.roofs()) {
    std::string name = roofs.device_name().empty() ? absl::StrCat("platform ", roofs.platform_id())
                                                   : roofs.device_name();
    if (name_count[roofs.device_name()] > 1) {
      name = absl::StrCat(name, " [", roofs.fingerprint().substr(0, 8), "]");
    }
    platform_name[roofs.platform_id()] = name;
  }
  std::set<int64_t> point_platforms;
  for (const auto& point : roofline.points()) point_platforms.insert(point.platform_id());
  const bool many_platforms = point_platforms.size() > 1;

  // Point groups: (platform when several, precision) share a colour; jobs
  // and operators differ in point type.
  struct Group {
    std::string name;
    bool op = false;
    int color = 0;
    std::vector<std::vector<double>> rows;
  };
  std::map<std::pair<std::string, bool>, Group> groups;
  std::map<std::string, int> colors;
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = 0;
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = 0;
  size_t skipped = 0;
  for (const auto& point : roofline.points()) {
    if (!Positive(point.intensity()) || !Positive(point.flops_per_sec())) {
      ++skipped;
      continue;
    }
    std::string series = point.precision().empty() ? "unknown precision" : point.precision();
    if (many_platforms) {
      auto name = platform_name.find(point.platform_id());
      series =
          absl::StrCat(name == platform_name.end() ? absl::StrCat("platform ", point.platform_id())
                                                   : name->second,
                       " ", series);
    }
    auto [color, inserted] = colors.emplace(series, static_cast<int>(colors.size()));
    Group& group = groups[{series, point.op()}];
    group.name = absl::StrCat(series, point.op() ? " ops" : " jobs");
    group.op = point.op();
    group.color = color->second;
    group.rows.push_back({point.intensity(), point.flops_per_sec()});
    x_lo = std::min(x_lo, point.intensity());
    x_hi = std::max(x_hi, point.intensity());
    y_lo = std::min(y_lo, point.flops_per_sec());
    y_hi = std::max(y_hi, point.flops_per_sec());
  }

  // The ridge points belong in view too.
  double peak_lo = std::numeric_limits<double>::infinity();
  for (const auto& roofs : roofline.roofs()) {
    const MemoryRoofs memory = PickMemoryRoofs(roofs);
    for (const auto& compute : roofs.compute()) {
      if (!Positive(compute.flops_per_sec())) continue;
      peak_lo = std::min(peak_lo, compute.flops_per_sec());
      y_hi = std::max({y_hi, compute.flops_per_sec(), compute.theoretical_flops_per_sec()});
      for (const v1::BandwidthRoof* level : {memory.dram, memory.cache}) {
        if (level == nullptr) continue;
        const double ridge = compute.flops_per_sec() / level->bytes_per_sec();
        x_lo = std::min(x_lo, ridge);
        x_hi = std::max(x_hi, ridge);
      }
    }
  }
  if (groups.empty() && !std::isfinite(peak_lo)) {
    Prologue(out, terminal, Canvas{640, 360}, out_path);
    MessageFigure(out, title, "no points and no calibrated roofs to draw");
    return Finish(out);
  }
  if (!(x_lo <= x_hi)) {
    x_lo = 0.1;
    x_hi = 1000;
  }
  x_lo /= 4;
  x_hi *= 4;
  if (!std::isfinite(y_lo)) y_lo = peak_lo / 1000;
  if (std::isfinite(peak_lo)) y_lo = std::min(y_lo, peak_lo / 1000);
  y_lo /= 3;
  y_hi *= 3;

  std::ostringstream data_blocks;
  std::vector<std::string> elements;
  int block = 0;
  int roof_color = 0;
  for (const auto& roofs : roofline.roofs()) {
    const std::string name = platform_name[roofs.platform_id()];
    const MemoryRoofs memory = PickMemoryRoofs(roofs);
    const char* color = kRoofColors[roof_color++ % kRoofColorCount];
    const double dram = memory.dram != nullptr ? memory.dram->bytes_per_sec() : 0;
    double best_peak = 0;
    int dash = 1;
    for (const auto& compute : roofs.compute()) {
      if (!Positive(compute.flops_per_sec())) continue;
      best_peak = std::max(best_peak, compute.flops_per_sec());
      const std::string data = absl::StrCat("roof", block++);
      Datablock(data_blocks, data, RoofLine(compute.flops_per_sec(), dram, x_lo, x_hi));
      const bool matmul = compute.kernel().empty() || compute.kernel() == "matmul";
      std::string label =
          absl::StrCat(name, " ", matmul ? "" : compute.kernel() + " ", compute.dtype(), " ",
                       SiRate(compute.flops_per_sec(), "FLOP/s"));
      if (memory.dram != nullptr) {
        absl::StrAppend(&label, ", ", memory.dram->level(), " ",
                        SiRate(memory.dram->bytes_per_sec(), "B/s"));
      }
      elements.push_back(absl::StrCat("$", data, " using 1:2 with lines lw 2 dt ", dash,
                                      " lc rgb '", color, "' title ", Quote(label)));
      dash = dash % 5 + 1;
      // The silicon's peak above the stack's best: the gap is the stack's.
      if (matmul && Positive(compute.theoretical_flops_per_sec())) {
        const std::string peak_data = absl::StrCat("roof", block++);
        Datablock(data_blocks, peak_data,
                  RoofLine(compute.theoretical_flops_per_sec(), dram, x_lo, x_hi));
        elements.push_back(absl::StrCat(
            "$", peak_data, " using 1:2 with lines lw 1 dt 2 lc rgb '", color, "' title ",
            Quote(absl::StrCat(name, " ", compute.dtype(), " theoretical peak ",
                               SiRate(compute.theoretical_flops_per_sec(), "FLOP/s")))));
      }
    }
    if (memory.cache != nullptr && best_peak > 0) {
      const std::string data = absl::StrCat("roof", block++);
      Datablock(data_blocks, data, RoofLine(best_peak, memory.cache->bytes_per_sec(), x_lo, x_hi));
      elements.push_back(
          absl::StrCat("$", data, " using 1:2 with lines lw 1 dt 3 lc rgb '", color, "' title ",
                       Quote(absl::StrCat(name, " ", memory.cache->level(), " ",
                                          SiRate(memory.cache->bytes_per_sec(), "B/s")))));
    }
  }
  for (const auto& [key, group] : groups) {
    const std::string data = absl::StrCat("points", block++);
    Datablock(data_blocks, data, group.rows);
    elements.push_back(absl::StrCat(
        "$", data, " using 1:2 with points ", group.op ? "pt 4 ps 0.7" : "pt 7 ps 0.8", " lc rgb '",
        kSeriesColors[group.color % kSeriesColorCount], "' title ", Quote(group.name)));
  }
  // The key sits under the x label in two columns (gnuplot 5.4's "below"
  // overlaps the x label): the bottom margin grows with its rows.
  const int key_rows = static_cast<int>((elements.size() + 1) / 2);
  Prologue(out, terminal, Canvas{1000, 620 + 18 * key_rows}, out_path);
  out << data_blocks.str();
  out << "set title "
      << Quote(skipped == 0
                   ? title
                   : absl::StrCat(title, " (", skipped, " points without intensity left out)"))
      << "\n";
  out << "set logscale xy 10\n";
  out << "set xrange [" << Num(x_lo) << ":" << Num(x_hi) << "]\n";
  out << "set yrange [" << Num(y_lo) << ":" << Num(y_hi) << "]\n";
  out << "set format y '%.0s%c'\n";
  out << "set xlabel 'arithmetic intensity (FLOP/byte)'\n";
  out << "set ylabel 'FLOP/s'\n";
  out << "set bmargin " << key_rows + 5 << "\n";
  out << "set key at screen 0.06, screen 0.01 left bottom Left reverse vertical maxrows "
      << std::max(1, key_rows) << "\n";
  out << "set mxtics 10\nset mytics 10\n";

  out << "plot " << absl::StrJoin(elements, ", \\\n     ") << "\n";
  return Finish(out);
}

// ---- Box plots --------------------------------------------------------------

std::string BoxplotScript(const v1::BoxplotResponse& boxplot, Terminal terminal,
                          const std::string& out_path) {
  std::ostringstream out;
  const std::string by =
      boxplot.group_by().empty() ? "group" : absl::StrJoin(boxplot.group_by(), ", ");
  const std::string title =
      absl::StrCat(boxplot.metric(), " by ", by, " (whiskers p2-p98, box p9-p91, median)");
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
    boxes.push_back(
        {static_cast<double>(i), group.p2(), group.p9(), group.p50(), group.p91(), group.p98()});
    for (double value : {group.p2(), group.p98()}) {
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
      "fs solid 0.35 border lc rgb '#1f77b4' title 'p2-p98, box p9-p91'",
      "$boxes using 1:4:4:4:4 with candlesticks lw 2 lc rgb '#000000' fs empty "
      "border lc rgb '#000000' title 'median'"};
  if (!outliers.empty()) {
    elements.push_back(
        "$outliers using 1:2 with points pt 6 ps 0.7 lc rgb '#d62728' title 'outliers'");
  }
  out << "plot " << absl::StrJoin(elements, ", \\\n     ") << "\n";
  return Finish(out);
}

// ---- Speedup ----------------------------------------------------------------

std::string SpeedupScript(const v1::SpeedupResponse& speedup, Terminal terminal,
                          const std::string& out_path) {
  std::ostringstream out;
  std::string title = absl::StrCat(speedup.metric(), " speedup");
  if (!speedup.field().empty()) {
    absl::StrAppend(&title, " of ", speedup.field(), "=", speedup.candidate(), " over ",
                    speedup.field(), "=", speedup.baseline());
  }
  const std::string summary = absl::StrFormat(
      "geomean %.3g×, min %.3g×, max %.3g×, %d configurations (%d baseline only, %d candidate "
      "only)",
      speedup.geomean_speedup(), speedup.min_speedup(), speedup.max_speedup(),
      speedup.points_size(), speedup.baseline_only(), speedup.candidate_only());

  // Distinct colour values, numeric order where every one is a number.
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
  const bool palette = numeric && values.size() > kMaxDiscreteColors;

  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = 0;
  double y_lo = 1;
  double y_hi = 1;
  std::map<std::string, std::vector<std::vector<double>>> by_color;
  std::vector<std::vector<double>> all;
  for (const auto& point : speedup.points()) {
    const double params = static_cast<double>(point.params());
    if (!Positive(params) || !Positive(point.speedup())) continue;
    x_lo = std::min(x_lo, params);
    x_hi = std::max(x_hi, params);
    y_lo = std::min(y_lo, point.speedup());
    y_hi = std::max(y_hi, point.speedup());
    by_color[point.color_value()].push_back({params, point.speedup()});
    if (palette) all.push_back({params, point.speedup(), *ParseNumber(point.color_value())});
  }
  if (!(x_lo <= x_hi)) {
    Prologue(out, terminal, Canvas{800, 360}, out_path);
    MessageFigure(out, title, "no configuration measured on both sides");
    return Finish(out);
  }
  Prologue(out, terminal, Canvas{900, 560}, out_path);
  out << "set title " << QuoteLines({title, summary}) << "\n";
  out << "set logscale x 10\nset logscale y 2\n";
  out << "set xrange [" << Num(x_lo / 1.6) << ":" << Num(x_hi * 1.6) << "]\n";
  out << "set yrange [" << Num(y_lo / 1.25) << ":" << Num(y_hi * 1.25) << "]\n";
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
  std::vector<std::string> elements;
  if (Positive(speedup.geomean_speedup())) {
    // A key entry for the geomean line (drawn as an arrow).
    elements.push_back(absl::StrFormat("NaN with lines dt 2 lc rgb '#888888' title 'geomean %.3g×'",
                                       speedup.geomean_speedup()));
  }
  if (palette) {
    Datablock(out, "speedup", all);
    out << "set palette defined (0 '#440154', 0.5 '#21918c', 1 '#fde725')\n";
    out << "set cblabel " << Quote(speedup.color_by()) << "\n";
    const double first = *ParseNumber(values.front());
    const double last = *ParseNumber(values.back());
    if (first > 0 && last / first > 16) out << "set logscale cb 2\n";
    elements.push_back("$speedup using 1:2:3 with points pt 7 ps 0.9 lc palette notitle");
  } else {
    int color = 0;
    for (const auto& value : values) {
      auto rows = by_color.find(value);
      if (rows == by_color.end()) continue;  // only non-positive points
      const std::string data = absl::StrCat("speedup", color);
      Datablock(out, data, rows->second);
      std::string name;
      if (speedup.color_by().empty()) {
        name = value.empty() ? "configurations" : value;
      } else {
        name = absl::StrCat(speedup.color_by(), "=", value);
      }
      elements.push_back(absl::StrCat("$", data, " using 1:2 with points pt 7 ps 0.9 lc rgb '",
                                      kSeriesColors[color % kSeriesColorCount], "' title ",
                                      Quote(name)));
      ++color;
    }
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

std::string ScriptFor(const v1::AnalyzeResponse& response, Terminal terminal,
                      const std::string& out_path) {
  switch (response.analysis_case()) {
    case v1::AnalyzeResponse::kHeatmap:
      return HeatmapScript(response.heatmap(), terminal, out_path);
    case v1::AnalyzeResponse::kSensitivity:
      return SensitivityScript(response.sensitivity(), terminal, out_path);
    case v1::AnalyzeResponse::kRoofline:
      return RooflineScript(response.roofline(), terminal, out_path);
    case v1::AnalyzeResponse::kBoxplot:
      return BoxplotScript(response.boxplot(), terminal, out_path);
    case v1::AnalyzeResponse::kSpeedup:
      return SpeedupScript(response.speedup(), terminal, out_path);
    case v1::AnalyzeResponse::kScaling:
      return ScalingScript(response.scaling(), terminal, out_path);
    case v1::AnalyzeResponse::ANALYSIS_NOT_SET:
      break;
  }
  std::ostringstream out;
  Prologue(out, terminal, Canvas{640, 360}, out_path);
  MessageFigure(out, "", "no analysis in the response");
  return Finish(out);
}

}  // namespace

std::string GnuplotScript(const v1::AnalyzeResponse& response, const std::string& out_path) {
  // PlotAnalysis refuses other extensions; anything not .svg draws a PNG.
  const Terminal terminal = Extension(out_path) == ".svg" ? Terminal::kSvg : Terminal::kPng;
  return ScriptFor(response, terminal, out_path);
}

absl::Status PlotAnalysis(const v1::AnalyzeResponse& response, const std::string& out_path) {
  const std::string extension = Extension(out_path);
  if (extension != ".png" && extension != ".svg") {
    return absl::InvalidArgumentError(absl::StrCat("--plot: cannot draw '", out_path,
                                                   "': the file name must end in .png or .svg"));
  }
  return gnuplot::Run(GnuplotScript(response, out_path), out_path);
}

absl::StatusOr<std::string> RenderSvg(const v1::AnalyzeResponse& response) {
  return gnuplot::Render(
      [&response](const std::string& path) { return GnuplotScript(response, path); }, "figure.svg");
}

}  // namespace paradnn::client
