#include "client/analyze_flags.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/analysis_kinds.h"
#include "client/analyze_command.h"
#include "common/analysis_metrics.h"

namespace paradnn::client {
namespace {

// The options every `analyze` kind takes: SWEEP..., --where, --format, --plot.
void AddAnalyzeCommon(CLI::App* command, AnalyzeFlags* flags, std::string* format) {
  AddSweepIds(command, &flags->sweep_ids);
  command->add_option("--where", flags->where,
                      "Only results whose FIELD equals VALUE (FIELD=VALUE, repeatable): a "
                      "hyper-parameter, family, precision, optimizer, worker, device_kind, "
                      "libtorch_version, blas_backend, ...");
  command
      ->add_option("--format", *format,
                   "table (aligned, human units), csv (RFC 4180, raw numbers, one row per cell, "
                   "term, point, box or configuration) or json (the AnalyzeResponse object)")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  command->add_flag("--include-predicted", flags->include_predicted,
                    "Also the predicted results of budgeted sweeps (docs/prediction.md): heat-map "
                    "cells with predictions are marked, the sensitivity is also fitted on the "
                    "measured results alone, boxes and speedups count their predicted points");
  command->add_option("--plot", flags->plot, "Also draw the figure with gnuplot (FILE.png|.svg)");
  AddDbFile(command, &flags->db);
}

}  // namespace

CLI::Validator PositiveInteger(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        int64_t value = 0;
        if (!absl::SimpleAtoi(text, &value) || value <= 0) {
          return absl::StrCat("'", text, "' is not ", what, " (a positive integer)");
        }
        return "";
      },
      "", "positive integer");
}

void AddDbFile(CLI::App* command, std::string* db_path) {
  command->add_option("--db", *db_path,
                      "Analyse this SQLite file (a colleague's paradnn.db) instead of asking the "
                      "coordinator: opened read-only by a private coordinator, so none needs to "
                      "be running and the file is not changed");
}

void AddSweepIds(CLI::App* command, std::vector<int64_t>* sweep_ids) {
  command
      ->add_option("SWEEP", *sweep_ids,
                   "Sweep ids whose results are analysed together (as printed by submit)")
      ->required()
      ->check(PositiveInteger("a sweep id"));
}

void AddAnalyzeKinds(CLI::App* analyze, AnalyzeFlags* flags, std::string* format) {
  for (const AnalysisKind& kind : AnalysisKinds()) {
    if (kind.description == nullptr) continue;  // a command of its own
    CLI::App* command = analyze->add_subcommand(kind.name, kind.description);
    AddAnalyzeCommon(command, flags, format);
    kind.add_options(command, flags);
  }
}

absl::StatusOr<v1::AnalyzeRequest> BuildAnalyzeRequest(const std::string& kind,
                                                       const AnalyzeFlags& flags) {
  const AnalysisKind* found = FindAnalysisKind(kind);
  if (found == nullptr || found->fill == nullptr) {
    std::vector<std::string> names;
    for (const AnalysisKind& candidate : AnalysisKinds()) {
      if (candidate.fill != nullptr) names.emplace_back(candidate.name);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "analyze: '", kind, "' is not an analysis",
        found == nullptr ? "" : absl::StrCat(" of `analyze` (see `paradnn ", kind, "`)"),
        "; one of ", absl::StrJoin(names, ", ")));
  }
  v1::AnalyzeRequest request;
  absl::StatusOr<v1::ResultSelection> selection = ParseSelection(flags.sweep_ids, flags.where);
  if (!selection.ok()) return selection.status();
  *request.mutable_selection() = *std::move(selection);
  request.mutable_selection()->set_include_predicted(flags.include_predicted);
  found->fill(flags, &request);
  return request;
}

}  // namespace paradnn::client
