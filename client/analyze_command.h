// `paradnn analyze KIND SWEEP...` (one analysis: table/CSV/JSON on stdout,
// optionally a figure) and `paradnn report SWEEP... --out DIR` (every
// analysis that applies, as one HTML page).
#ifndef PARADNN_CLIENT_ANALYZE_COMMAND_H_
#define PARADNN_CLIENT_ANALYZE_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "client/output_format.h"
#include "paradnn/v1/analysis.pb.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::client {

// The selection of `sweep_ids` filtered by `where` ("field=value" each);
// InvalidArgument naming --where for a filter without '=' or given twice.
absl::StatusOr<v1::ResultSelection> ParseSelection(const std::vector<int64_t>& sweep_ids,
                                                   const std::vector<std::string>& where);

// Runs `request` on the coordinator (or, when `db_path` is not empty, on a
// private read-only one serving that file), prints it in `format` and, when
// `plot_path` is not empty, draws it there (client/analysis_plots.h).
int RunAnalyze(const CommandContext& ctx, const v1::AnalyzeRequest& request, OutputFormat format,
               const std::string& plot_path, const std::string& db_path = "");

// One analysis a report asks for.
struct PlannedAnalysis {
  std::string title;
  std::string caption;
  v1::AnalyzeRequest request;
};

// The analyses that apply to `sweeps` (their specs say which
// hyper-parameters, precisions, devices and thread counts vary): per family
// a GFLOP/s and an MFU heat map over the two most-varied hyper-parameters
// (panels by precision, or by a third one), the sensitivity of GFLOP/s to
// the log2 hyper-parameters per precision, bf16-vs-fp32 speedup where both
// were swept, thread scaling where intra_op_threads varies; over all sweeps
// the roofline (with operators when profiled), box plots of GFLOP/s by
// family and precision, and the speedup between device kinds when the
// sweeps target more than one. Pure.
std::vector<PlannedAnalysis> PlanReport(const std::vector<v1::SweepStatus>& sweeps);

// `paradnn report SWEEP... --out DIR`: runs PlanReport's analyses (one that
// fails becomes a note saying why) and writes DIR/index.html. `db_path` as
// for RunAnalyze; `include_predicted` selects budgeted sweeps' predictions
// too (ResultSelection.include_predicted).
int RunReport(const CommandContext& ctx, const std::vector<int64_t>& sweep_ids,
              const std::string& out_dir, const std::string& db_path = "",
              bool include_predicted = false);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_ANALYZE_COMMAND_H_
