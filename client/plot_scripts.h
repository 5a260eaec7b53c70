// Pieces the analysis figures' gnuplot scripts share: the gnuplot writer's
// short names, the series colours, number tests and parsing, and the labels
// of rates and metrics. Internal to analysis_plots (callers use
// client/analysis_plots.h); pure functions and constant tables, thread-safe.
#ifndef PARADNN_CLIENT_PLOT_SCRIPTS_H_
#define PARADNN_CLIENT_PLOT_SCRIPTS_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "client/gnuplot.h"

namespace paradnn::client::internal {

// The gnuplot writer's pieces, by their short names in every figure's script
// (an internal namespace, so the names stay out of callers' way).
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
inline constexpr const char* kSeriesColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                                "#bcbd22", "#7f7f7f"};
inline constexpr size_t kSeriesColorCount = sizeof(kSeriesColors) / sizeof(kSeriesColors[0]);

// True for a finite value above zero (one that a log axis can show).
bool Positive(double value);

// `text` as a finite number; nullopt when it is not one.
std::optional<double> ParseNumber(absl::string_view text);

// 3 significant digits with an SI prefix: "1.23 TFLOP/s", "20.1 GB/s".
std::string SiRate(double value, absl::string_view unit);

// "metric (unit)", or the metric alone when `unit` is empty.
std::string MetricLabel(const std::string& metric, const std::string& unit);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_PLOT_SCRIPTS_H_
