#include "client/roofline_plot_script.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "client/plot_scripts.h"

namespace paradnn::client::internal {

namespace {

// Roof colours: dark, so the roofs stand apart from the points.
constexpr const char* kRoofColors[] = {"#000000", "#8b4513", "#00468b", "#6a0d6a", "#2f4f2f"};
constexpr size_t kRoofColorCount = sizeof(kRoofColors) / sizeof(kRoofColors[0]);

// The memory roofs a roofline draws for one platform: DRAM (the level named
// so, else the slowest), which bounds the compute roofs, and every measured
// cache level, each its own slope, levels being listed from L1 outwards.
struct MemoryRoofs {
  const v1::BandwidthRoof* dram = nullptr;
  std::vector<const v1::BandwidthRoof*> caches;
};

bool IsMainMemory(const v1::BandwidthRoof& level) {
  return absl::StartsWithIgnoreCase(level.level(), "DRAM") ||
         absl::StartsWithIgnoreCase(level.level(), "HBM") ||
         absl::StartsWithIgnoreCase(level.level(), "memory");
}

MemoryRoofs PickMemoryRoofs(const v1::PlatformRoofs& roofs) {
  MemoryRoofs picked;
  for (const auto& level : roofs.bandwidth()) {
    if (!Positive(level.bytes_per_sec()) || !IsMainMemory(level)) continue;
    if (picked.dram == nullptr || level.bytes_per_sec() > picked.dram->bytes_per_sec()) {
      picked.dram = &level;
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
  }
  for (const auto& level : roofs.bandwidth()) {
    if (Positive(level.bytes_per_sec()) && &level != picked.dram && !IsMainMemory(level)) {
      picked.caches.push_back(&level);
    }
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
  rows.reserve(xs.size());
  for (double x : xs) {
    rows.push_back({x, Positive(bandwidth) ? std::min(peak, x * bandwidth) : peak});
  }
  return rows;
}

// Platform names by id, disambiguated when two platforms share a device
// name.
std::map<int64_t, std::string> PlatformNames(const v1::RooflineResponse& roofline) {
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
  return platform_name;
}

// What the figure shows: arithmetic intensity (FLOP/byte) on x, FLOP/s on
// y. Empty (lo > hi) until widened.
struct RooflineBounds {
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = 0;
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = 0;
};

// Points that share a series and whether they are operators: (platform when
// several, precision) share a colour; jobs and operators differ in point
// type.
struct PointGroup {
  std::string name;
  bool op = false;
  int color = 0;
  std::vector<std::vector<double>> rows;
};
using PointGroups = std::map<std::pair<std::string, bool>, PointGroup>;

// The points a log-log figure can show, grouped, with `bounds` widened to
// them; the others are counted in `skipped`.
PointGroups GroupPoints(const v1::RooflineResponse& roofline,
                        const std::map<int64_t, std::string>& platform_name, RooflineBounds* bounds,
                        size_t* skipped) {
  std::set<int64_t> point_platforms;
  for (const auto& point : roofline.points()) point_platforms.insert(point.platform_id());
  const bool many_platforms = point_platforms.size() > 1;

  PointGroups groups;
  std::map<std::string, int> colors;
  for (const auto& point : roofline.points()) {
    if (!Positive(point.intensity()) || !Positive(point.flops_per_sec())) {
      ++*skipped;
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
    PointGroup& group = groups[{series, point.op()}];
    group.name = absl::StrCat(series, point.op() ? " ops" : " jobs");
    group.op = point.op();
    group.color = color->second;
    group.rows.push_back({point.intensity(), point.flops_per_sec()});
    bounds->x_lo = std::min(bounds->x_lo, point.intensity());
    bounds->x_hi = std::max(bounds->x_hi, point.intensity());
    bounds->y_lo = std::min(bounds->y_lo, point.flops_per_sec());
    bounds->y_hi = std::max(bounds->y_hi, point.flops_per_sec());
  }
  return groups;
}

// Widens `bounds` to the compute peaks and their ridge points, which belong
// in view too. Returns the lowest calibrated peak (infinity for none).
double WidenToRoofs(const v1::RooflineResponse& roofline, RooflineBounds* bounds) {
  double peak_lo = std::numeric_limits<double>::infinity();
  for (const auto& roofs : roofline.roofs()) {
    const MemoryRoofs memory = PickMemoryRoofs(roofs);
    for (const auto& compute : roofs.compute()) {
      if (!Positive(compute.flops_per_sec())) continue;
      peak_lo = std::min(peak_lo, compute.flops_per_sec());
      bounds->y_hi =
          std::max({bounds->y_hi, compute.flops_per_sec(), compute.theoretical_flops_per_sec()});
      std::vector<const v1::BandwidthRoof*> levels = memory.caches;
      if (memory.dram != nullptr) levels.push_back(memory.dram);
      for (const v1::BandwidthRoof* level : levels) {
        const double ridge = compute.flops_per_sec() / level->bytes_per_sec();
        bounds->x_lo = std::min(bounds->x_lo, ridge);
        bounds->x_hi = std::max(bounds->x_hi, ridge);
      }
    }
  }
  return peak_lo;
}

// Margins around what is drawn; y reaches down to a thousandth of the
// lowest peak `peak_lo` so that the memory roofs' slopes show.
void PadBounds(double peak_lo, RooflineBounds* bounds) {
  if (!(bounds->x_lo <= bounds->x_hi)) {
    bounds->x_lo = 0.1;
    bounds->x_hi = 1000;
  }
  bounds->x_lo /= 4;
  bounds->x_hi *= 4;
  if (!std::isfinite(bounds->y_lo)) bounds->y_lo = peak_lo / 1000;
  if (std::isfinite(peak_lo)) bounds->y_lo = std::min(bounds->y_lo, peak_lo / 1000);
  bounds->y_lo /= 3;
  bounds->y_hi *= 3;
}

// The figure's datablocks and plot elements in drawing order. Datablocks
// are numbered across roofs and points so that their names never collide.
struct RooflinePlot {
  std::ostringstream data_blocks;
  std::vector<std::string> elements;
  int block = 0;

  // Writes `rows` as the next datablock, named `prefix` and its number;
  // returns the name.
  std::string AddBlock(absl::string_view prefix, const std::vector<std::vector<double>>& rows) {
    std::string data = absl::StrCat(prefix, block++);
    Datablock(data_blocks, data, rows);
    return data;
  }
};

// One calibrated compute roof of platform `name`, bounded by `memory`'s
// DRAM, in `color` and dash type `dash`; for matmul also the silicon's
// theoretical peak above it.
void AddComputeRoof(const v1::MatmulRoofValue& compute, const std::string& name,
                    const MemoryRoofs& memory, const char* color, int dash,
                    const RooflineBounds& bounds, RooflinePlot* plot) {
  const double dram = memory.dram != nullptr ? memory.dram->bytes_per_sec() : 0;
  const std::string data =
      plot->AddBlock("roof", RoofLine(compute.flops_per_sec(), dram, bounds.x_lo, bounds.x_hi));
  const bool matmul = compute.kernel().empty() || compute.kernel() == "matmul";
  std::string label = absl::StrCat(name, " ", matmul ? "" : compute.kernel() + " ", compute.dtype(),
                                   " ", SiRate(compute.flops_per_sec(), "FLOP/s"));
  if (memory.dram != nullptr) {
    absl::StrAppend(&label, ", ", memory.dram->level(), " ",
                    SiRate(memory.dram->bytes_per_sec(), "B/s"));
  }
  plot->elements.push_back(absl::StrCat("$", data, " using 1:2 with lines lw 2 dt ", dash,
                                        " lc rgb '", color, "' title ", Quote(label)));
  // The silicon's peak above the stack's best: the gap is the stack's.
  if (matmul && Positive(compute.theoretical_flops_per_sec())) {
    const std::string peak_data = plot->AddBlock(
        "roof", RoofLine(compute.theoretical_flops_per_sec(), dram, bounds.x_lo, bounds.x_hi));
    plot->elements.push_back(absl::StrCat(
        "$", peak_data, " using 1:2 with lines lw 1 dt 2 lc rgb '", color, "' title ",
        Quote(absl::StrCat(name, " ", compute.dtype(), " theoretical peak ",
                           SiRate(compute.theoretical_flops_per_sec(), "FLOP/s"),
                           // Drawn as it is, but never passed off as a ceiling.
                           compute.theoretical_flops_per_sec() < compute.flops_per_sec()
                               ? " (below the calibrated roof: its basis is wrong; "
                                 "--datasheet-peak)"
                               : ""))));
  }
}

// Every roof of one platform, named `name`, in `color`: its compute roofs
// (dash types 1..5 in turn) bounded by DRAM, then each cache level's slope
// under the best compute peak (dotted, thinner as the level is farther
// out), labelled with the level and its size.
void AddPlatformRoofs(const v1::PlatformRoofs& roofs, const std::string& name, const char* color,
                      const RooflineBounds& bounds, RooflinePlot* plot) {
  const MemoryRoofs memory = PickMemoryRoofs(roofs);
  double best_peak = 0;
  int dash = 1;
  for (const auto& compute : roofs.compute()) {
    if (!Positive(compute.flops_per_sec())) continue;
    best_peak = std::max(best_peak, compute.flops_per_sec());
    AddComputeRoof(compute, name, memory, color, dash, bounds, plot);
    dash = dash % 5 + 1;
  }
  if (best_peak <= 0) return;
  for (const v1::BandwidthRoof* cache : memory.caches) {
    const std::string data = plot->AddBlock(
        "roof", RoofLine(best_peak, cache->bytes_per_sec(), bounds.x_lo, bounds.x_hi));
    plot->elements.push_back(
        absl::StrCat("$", data, " using 1:2 with lines lw 1 dt 3 lc rgb '", color, "' title ",
                     Quote(absl::StrCat(name, " ", cache->level(), " ",
                                        SiRate(cache->bytes_per_sec(), "B/s")))));
  }
}

// Each data-parallel job's communication ceiling (RooflinePoint: the FLOP/s
// its step reaches at most with its all-reduce at the platform's roof, none
// of it hidden): a bar over the job's point, x / kCeilingHalfWidth to x *
// kCeilingHalfWidth, so that the gap between point and bar shows how close
// communication comes to limiting the job. Widens `bounds` to the bars.
constexpr double kCeilingHalfWidth = 1.4;

std::vector<std::vector<double>> CommunicationCeilings(const v1::RooflineResponse& roofline,
                                                       RooflineBounds* bounds) {
  std::vector<std::vector<double>> bars;  // x, y, dx, dy (gnuplot vectors)
  for (const auto& point : roofline.points()) {
    const double ceiling = point.communication_ceiling_flops_per_sec();
    if (!Positive(point.intensity()) || !Positive(ceiling)) continue;
    const double x = point.intensity();
    bars.push_back(
        {x / kCeilingHalfWidth, ceiling, x * kCeilingHalfWidth - x / kCeilingHalfWidth, 0});
    bounds->y_lo = std::min(bounds->y_lo, ceiling);
    bounds->y_hi = std::max(bounds->y_hi, ceiling);
  }
  return bars;
}

void AddCommunicationCeilings(const std::vector<std::vector<double>>& bars, RooflinePlot* plot) {
  if (bars.empty()) return;
  const std::string data = plot->AddBlock("ceilings", bars);
  plot->elements.push_back(absl::StrCat(
      "$", data, " using 1:2:3:4 with vectors nohead lw 3 lc rgb '#b22222' title ",
      Quote(
          "communication ceilings (each data-parallel job's all-reduce at its platform's roof)")));
}

// The measured points, a group at a time.
void AddPointGroups(const PointGroups& groups, RooflinePlot* plot) {
  for (const auto& [key, group] : groups) {
    const std::string data = plot->AddBlock("points", group.rows);
    plot->elements.push_back(absl::StrCat(
        "$", data, " using 1:2 with points ", group.op ? "pt 4 ps 0.7" : "pt 7 ps 0.8", " lc rgb '",
        kSeriesColors[group.color % kSeriesColorCount], "' title ", Quote(group.name)));
  }
}

}  // namespace

std::string RooflineScript(const v1::RooflineResponse& roofline, Terminal terminal,
                           const std::string& out_path) {
  std::ostringstream out;
  const std::string title = "roofline";
  const std::map<int64_t, std::string> platform_name = PlatformNames(roofline);
  RooflineBounds bounds;
  size_t skipped = 0;
  const PointGroups groups = GroupPoints(roofline, platform_name, &bounds, &skipped);
  const double peak_lo = WidenToRoofs(roofline, &bounds);
  const std::vector<std::vector<double>> ceilings = CommunicationCeilings(roofline, &bounds);
  if (groups.empty() && !std::isfinite(peak_lo)) {
    Prologue(out, terminal, Canvas{640, 360}, out_path);
    MessageFigure(out, title, "no points and no calibrated roofs to draw");
    return Finish(out);
  }
  PadBounds(peak_lo, &bounds);

  RooflinePlot plot;
  int roof_color = 0;
  for (const auto& roofs : roofline.roofs()) {
    AddPlatformRoofs(roofs, platform_name.at(roofs.platform_id()),
                     kRoofColors[roof_color++ % kRoofColorCount], bounds, &plot);
  }
  AddCommunicationCeilings(ceilings, &plot);
  AddPointGroups(groups, &plot);
  // The key sits under the x label in two columns (gnuplot 5.4's "below"
  // overlaps the x label): the bottom margin grows with its rows.
  const int key_rows = static_cast<int>((plot.elements.size() + 1) / 2);
  Prologue(out, terminal, Canvas{1000, 620 + 18 * key_rows}, out_path);
  out << plot.data_blocks.str();
  out << "set title "
      << Quote(skipped == 0
                   ? title
                   : absl::StrCat(title, " (", skipped, " points without intensity left out)"))
      << "\n";
  out << "set logscale xy 10\n";
  out << "set xrange [" << Num(bounds.x_lo) << ":" << Num(bounds.x_hi) << "]\n";
  out << "set yrange [" << Num(bounds.y_lo) << ":" << Num(bounds.y_hi) << "]\n";
  out << "set format y '%.0s%c'\n";
  out << "set xlabel 'arithmetic intensity (FLOP/byte)'\n";
  out << "set ylabel 'FLOP/s'\n";
  out << "set bmargin " << key_rows + 5 << "\n";
  out << "set key at screen 0.06, screen 0.01 left bottom Left reverse vertical maxrows "
      << std::max(1, key_rows) << "\n";
  out << "set mxtics 10\nset mytics 10\n";

  out << "plot " << absl::StrJoin(plot.elements, ", \\\n     ") << "\n";
  return Finish(out);
}

}  // namespace paradnn::client::internal
