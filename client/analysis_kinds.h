// The client's one table of analysis kinds: per kind of AnalyzeRequest (by
// its oneof name) the `paradnn analyze KIND` subcommand (help, options and
// how they fill the kind's part of the request), the table and CSV
// FormatAnalysis prints, what ToDisplayUnits scales, and the gnuplot figure
// PlotAnalysis draws. analyze_flags, analysis_views and analysis_plots
// dispatch through it and switch on no kind themselves; a new kind is one
// row here (docs/extending.md "Add an analysis kind"), and
// analysis_kinds_test fails, naming the kind, while the proto has a kind
// the table lacks. Thread-safe (the table is constant).
#ifndef PARADNN_CLIENT_ANALYSIS_KINDS_H_
#define PARADNN_CLIENT_ANALYSIS_KINDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "client/gnuplot.h"
#include "paradnn/v1/analysis.pb.h"

namespace CLI {
class App;
}  // namespace CLI

namespace paradnn::client {

struct AnalyzeFlags;  // client/analyze_flags.h

struct AnalysisKind {
  // The AnalyzeRequest and AnalyzeResponse oneof field: "heatmap", ...
  const char* name;
  // `paradnn analyze NAME`: its help, its options beyond SWEEP..., --where,
  // --format and --plot, and how they fill its part of the request (the
  // selection is the request's own, from SWEEP... and --where). All three
  // null for a kind with a command of its own (history: `paradnn history`,
  // bisect: `paradnn bisect`).
  const char* description;
  void (*add_options)(CLI::App* command, AnalyzeFlags* flags);
  void (*fill)(const AnalyzeFlags& flags, v1::AnalyzeRequest* request);
  // FormatAnalysis's table and CSV of a response holding this kind
  // (client/analysis_views.h).
  std::string (*table)(const v1::AnalyzeResponse& response);
  std::string (*csv)(const v1::AnalyzeResponse& response);
  // Scales the metric values it holds as fractions to percent
  // (ToDisplayUnits); null when it holds none.
  void (*to_display_units)(v1::AnalyzeResponse* response);
  // The gnuplot program of its figure, data inline, writing `out_path`;
  // null when the kind has no figure.
  std::string (*plot_script)(const v1::AnalyzeResponse& response, gnuplot::Terminal terminal,
                             const std::string& out_path);
};

// Every kind, in the proto's order (`paradnn analyze --help` lists those
// with a description in this order).
const std::vector<AnalysisKind>& AnalysisKinds();

// The kind called `name`; null when there is none.
const AnalysisKind* FindAnalysisKind(absl::string_view name);

// The kind `response` holds; null when it holds none (or one this table
// lacks).
const AnalysisKind* KindOf(const v1::AnalyzeResponse& response);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_ANALYSIS_KINDS_H_
