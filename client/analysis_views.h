// How `paradnn analyze` prints an analysis: a readable table (default), CSV
// (one row per cell / weight / point / box / configuration, raw numbers) or
// JSON (the response as an object, proto field names). Pure functions of
// their inputs; thread-safe.
#ifndef PARADNN_CLIENT_ANALYSIS_VIEWS_H_
#define PARADNN_CLIENT_ANALYSIS_VIEWS_H_

#include <string>

#include "client/output_format.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client {

// The text `paradnn analyze` writes to stdout for `response` in `format`.
//  - heatmap: table = one grid per panel (y down, x across, values in human
//    units; "OOM" / "pOOM" / "fail" / "—" for cells without an OK value);
//    csv = panel,x,y,value,ok_results,oom_results,predicted_oom_results,failed_results.
//  - sensitivity: table = term and weight sorted by |weight| with a bar, then
//    R² and points; csv = term,weight plus rows for intercept, r_squared, points.
//  - roofline: table = the roofs per platform then points (label, intensity
//    FLOP/B, GFLOP/s, % of the dtype's roof); csv = the points.
//  - boxplot: one row per group: count, the Tukey box (whiskers, q1, median,
//    q3), mean, outliers, the paper's p2/p98 (CSV: every percentile).
//  - speedup: summary line (geomean, min, max, counts), points, then the
//    sensitivity of the speedup.
//  - scaling: per level summary, then per configuration values.
// Table cells read the unit as the response names it: "%" values are
// percentages (42 prints 42.0%), "fraction" values fractions (0.42 prints
// 42.0% too), "s" seconds (12.3 ms), "bytes" bytes
// (1.5 GiB), anything else gets SI suffixes (1.23k, 2.50M). Speedup and
// scaling responses carry no unit; mfu/hfu, step_time and peak_rss are
// recognised by the metric's name.
// JSON is the whole AnalyzeResponse in the proto3 JSON mapping with proto
// field names, always including defaults (so it reads back with
// JsonStringToMessage): one key naming the analysis ("heatmap", ...) plus
// "results"; 64-bit integers are strings ("results": "12"), NaN is "NaN",
// an unset heat-map cell value is absent. Two-space indent, then a newline.
std::string FormatAnalysis(const v1::AnalyzeResponse& response, OutputFormat format);

// What an analysis covered, in a line: "sweeps 1, 2 where precision=float32;
// AMD EPYC; median of each cell across layer (2, 4), sweep (1, 2)". With
// `compact`, a field with more than three values shows its count instead
// (for figure titles). "" for an empty scope.
std::string ScopeSummary(const v1::AnalysisScope& scope, bool compact = false);

// The coordinator sends utilization and variation metrics (mfu, hfu,
// silicon_mfu, silicon_hfu, step_cv) as fractions, unit "fraction". The CLI
// shows them in percent everywhere, as the results table does (mfu_pct):
// this scales every metric value of `response` (heat-map cells, box
// statistics and outliers, speedup baseline and candidate values, scaling
// values) by 100 and names the unit "%", so the table, CSV, JSON, the plots
// and the report all read 42 (%). Ratios (speedups, efficiencies,
// sensitivity weights) are unitless and stay. Other units are left as they are.
void ToDisplayUnits(v1::AnalyzeResponse* response);

// The unit `metric` is shown in after ToDisplayUnits ("%" for a fraction).
std::string DisplayUnitOfMetric(const std::string& metric);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_ANALYSIS_VIEWS_H_
