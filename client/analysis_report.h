// `paradnn report`: one self-contained HTML page (inline SVG figures and
// tables, no external files or scripts) with every analysis that applies to
// the given sweeps.
#ifndef PARADNN_CLIENT_ANALYSIS_REPORT_H_
#define PARADNN_CLIENT_ANALYSIS_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/analyze_command.h"
#include "paradnn/v1/analysis.pb.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::client {

// One section of the report: a heading, a sentence of what it shows, and
// the analysis (drawn as SVG and printed as a table).
struct ReportSection {
  std::string title;
  std::string caption;
  v1::AnalyzeResponse response;
};

// What the report covers: the sweeps (as GetSweep returned them) and the
// workers' platforms (ListWorkers), for the header's fingerprint table.
struct ReportInput {
  std::vector<v1::SweepStatus> sweeps;
  std::vector<v1::WorkerInfo> workers;
  std::vector<ReportSection> sections;
  std::vector<std::string> notes;  // analyses that did not apply, and why
};

// Writes DIR/index.html (creating DIR): title, sweeps table, platform
// fingerprints with calibrated roofs, then each section's figure (SVG drawn
// by PlotAnalysis, inlined) and its table (FormatAnalysis table text in
// <pre>), then the notes. The page is client/report_template.mustache,
// built into the binary, rendered with every text from `input` HTML-escaped.
// Internal/Unavailable as PlotAnalysis returns them.
absl::Status WriteReport(const ReportInput& input, const std::string& out_dir);

// The report's data-parallel sections: per family whose sweeps take more
// than one value of params.hosts, one scale_out analysis over them along
// hosts, and the same for params.devices; none when neither varies. Each
// section's figure is throughput against N with the ideal line beside the
// step's breakdown; its table the weak and strong efficiencies and which
// baseline they rest on. PlanReport (analyze_command.h) adds them. Pure.
std::vector<PlannedAnalysis> PlanScaleOutSections(const std::vector<v1::SweepStatus>& sweeps);

// The report's communication-roof section: one allreduce analysis over the
// sweeps of family allreduce (bus bandwidth against message size with the
// fitted alpha-beta roof per platform, backend and ranks); none when no
// sweep is of that family. PlanReport adds it. Pure.
std::vector<PlannedAnalysis> PlanAllreduceSections(const std::vector<v1::SweepStatus>& sweeps);

// The family whose sweeps calibrate the communication roof: PlanReport
// gives them the allreduce section instead of the training families'.
inline constexpr char kAllreduceFamily[] = "allreduce";

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_ANALYSIS_REPORT_H_
