#include "client/history_command.h"

#include <memory>

#include "client/analysis_views.h"
#include "client/analyze_command.h"
#include "client/analyze_flags.h"
#include "client/coordinator_source.h"
#include "common/analysis_metrics.h"

namespace paradnn::client {

CLI::App* AddHistoryCommand(CLI::App& app, HistoryFlags* flags, std::string* format) {
  CLI::App* history = app.add_subcommand(
      "history",
      "The same configuration on the same hardware over time (every sweep, or those given),\n"
      "grouped by stack fingerprint, with its change points: by how much the step time moved,\n"
      "with a 95 % interval, between which stacks, and what differs between them.");
  history->add_option("SWEEP", flags->sweeps, "Sweep ids (default: every sweep)")
      ->check(PositiveInteger("a sweep id"));
  history->add_option("--where", flags->where,
                      "Only results whose FIELD equals VALUE (repeatable)");
  history->add_option("--metric", flags->metric, common::AnalysisMetricHelp())
      ->capture_default_str();
  history
      ->add_option("--min-points", flags->min_points,
                   "Runs a level must hold for on each side of a change (shorter excursions are "
                   "set aside)")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  history->add_option("--significance", flags->significance, "p-value a split needs")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  history
      ->add_option("--format", *format,
                   "table (a line per change point or series), csv (one row per run) or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  AddDbFile(history, &flags->db);
  return history;
}

int RunHistory(const CommandContext& ctx, const HistoryFlags& flags, OutputFormat format) {
  absl::StatusOr<std::unique_ptr<CoordinatorSource>> source =
      CoordinatorSource::Open(ctx, flags.db);
  if (!source.ok()) return ReportError(ctx, source.status());
  CoordinatorClient& client = (*source)->client();
  std::vector<int64_t> sweep_ids = flags.sweeps;
  if (sweep_ids.empty()) {
    absl::StatusOr<std::vector<v1::SweepStatus>> sweeps = client.ListSweeps();
    if (!sweeps.ok()) return ReportError(ctx, sweeps.status());
    for (const v1::SweepStatus& sweep : *sweeps) sweep_ids.push_back(sweep.sweep_id());
    if (sweep_ids.empty()) {
      *ctx.out << "no sweeps yet: nothing has a history\n" << std::flush;
      return kExitOk;
    }
  }
  absl::StatusOr<v1::ResultSelection> selection = ParseSelection(sweep_ids, flags.where);
  if (!selection.ok()) return ReportError(ctx, selection.status());
  v1::AnalyzeRequest request;
  v1::HistoryRequest* history = request.mutable_history();
  *request.mutable_selection() = *std::move(selection);
  history->set_metric(flags.metric);
  history->set_min_points_each_side(flags.min_points);
  history->set_significance(flags.significance);
  absl::StatusOr<v1::AnalyzeResponse> response = client.Analyze(request);
  if (!response.ok()) return ReportError(ctx, response.status());
  ToDisplayUnits(&*response);
  *ctx.out << FormatAnalysis(*response, format) << std::flush;
  return kExitOk;
}

}  // namespace paradnn::client
