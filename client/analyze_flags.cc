#include "client/analyze_flags.h"

#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/analyze_command.h"
#include "common/analysis_metrics.h"

namespace paradnn::client {
namespace {

std::string MetricHelp() { return common::AnalysisMetricHelp(); }

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

constexpr AnalysisKind kAnalysisKinds[] = {
    {"heatmap",
     "A metric over two hyper-parameters (median over the others), optionally one "
     "panel per value of a third field; OOM cells shown as such (paper Fig. 2, 7)",
     [](CLI::App* command, AnalyzeFlags* flags) {
       command->add_option("--metric", flags->metric, MetricHelp())->required();
       command->add_option("--x", flags->x, "Field on the x axis (e.g. node)")->required();
       command->add_option("--y", flags->y, "Field on the y axis (e.g. batch)")->required();
       command->add_option("--panel", flags->panel,
                           "Field with one panel per value (e.g. precision)");
     },
     [](const AnalyzeFlags& flags, const v1::ResultSelection& selection,
        v1::AnalyzeRequest* request) {
       v1::HeatmapRequest* heatmap = request->mutable_heatmap();
       *heatmap->mutable_selection() = selection;
       heatmap->set_metric(flags.metric);
       heatmap->set_x(flags.x);
       heatmap->set_y(flags.y);
       heatmap->set_panel(flags.panel);
     }},
    {"sensitivity",
     "Standardized linear-regression weights of a metric on the hyper-parameters, with R² "
     "(paper §2.3)",
     [](CLI::App* command, AnalyzeFlags* flags) {
       command->add_option("--metric", flags->metric, MetricHelp())->required();
       command
           ->add_option("--features", flags->features,
                        "Numeric fields to regress on, comma-separated (default: every varying "
                        "hyper-parameter)")
           ->delimiter(',');
       command->add_flag("--log2", flags->log2_features, "Features as log2(value)");
       command->add_flag("--log2-target", flags->log2_target, "The metric as log2(value)");
       command->add_flag("--interactions", flags->interactions,
                         "Add every pairwise product of features");
     },
     [](const AnalyzeFlags& flags, const v1::ResultSelection& selection,
        v1::AnalyzeRequest* request) {
       v1::SensitivityRequest* sensitivity = request->mutable_sensitivity();
       *sensitivity->mutable_selection() = selection;
       sensitivity->set_metric(flags.metric);
       for (const std::string& feature : flags.features) sensitivity->add_features(feature);
       sensitivity->set_log2_features(flags.log2_features);
       sensitivity->set_log2_target(flags.log2_target);
       sensitivity->set_interactions(flags.interactions);
     }},
    {"roofline",
     "Jobs (and with --ops, profiled operators) at their arithmetic intensity and achieved "
     "FLOP/s under the calibrated roofs (paper Fig. 3)",
     [](CLI::App* command, AnalyzeFlags* flags) {
       command->add_flag("--ops", flags->ops, "Also one point per profiled operator with FLOPs");
     },
     [](const AnalyzeFlags& flags, const v1::ResultSelection& selection,
        v1::AnalyzeRequest* request) {
       *request->mutable_roofline()->mutable_selection() = selection;
       request->mutable_roofline()->set_include_ops(flags.ops);
     }},
    {"boxplot",
     "Distribution of a metric per group with the paper's 2/9/50/91/98th percentile whiskers "
     "and outliers (paper Fig. 11)",
     [](CLI::App* command, AnalyzeFlags* flags) {
       command->add_option("--metric", flags->metric, MetricHelp())->required();
       command
           ->add_option("--group-by", flags->group_by,
                        "Fields naming a box, comma-separated (default: family,device_name)")
           ->delimiter(',');
     },
     [](const AnalyzeFlags& flags, const v1::ResultSelection& selection,
        v1::AnalyzeRequest* request) {
       v1::BoxplotRequest* boxplot = request->mutable_boxplot();
       *boxplot->mutable_selection() = selection;
       boxplot->set_metric(flags.metric);
       for (const std::string& field : flags.group_by) boxplot->add_group_by(field);
     }},
    {"speedup",
     "The same configurations on two sides of a field (device_kind, worker, libtorch_version,\n"
     "blas_backend, precision, ...) joined config by config: speedup against parameter count\n"
     "and its sensitivity (paper Fig. 8-10, §6)",
     [](CLI::App* command, AnalyzeFlags* flags) {
       command->add_option("--metric", flags->metric, "Default examples_per_sec. " + MetricHelp());
       command->add_option("--field", flags->field, "The field that differs between the sides")
           ->required();
       command->add_option("--baseline", flags->baseline,
                           "Its value on the baseline side (default: the first of exactly two)");
       command->add_option("--candidate", flags->candidate, "Its value on the other side");
       command->add_option("--color-by", flags->color_by, "Hyper-parameter to colour points by");
       command
           ->add_option("--fdr", flags->fdr,
                        "False discovery rate of the verdicts across configurations "
                        "(default 0.05)")
           ->check(CLI::Range(0.0, 1.0));
     },
     [](const AnalyzeFlags& flags, const v1::ResultSelection& selection,
        v1::AnalyzeRequest* request) {
       v1::SpeedupRequest* speedup = request->mutable_speedup();
       *speedup->mutable_selection() = selection;
       speedup->set_metric(flags.metric);
       speedup->set_field(flags.field);
       speedup->set_baseline(flags.baseline);
       speedup->set_candidate(flags.candidate);
       speedup->set_color_by(flags.color_by);
       speedup->set_fdr(flags.fdr);
     }},
    {"scaling",
     "Throughput at 1 vs N threads for the same configurations (paper Fig. 4 on CPU threads)",
     [](CLI::App* command, AnalyzeFlags* flags) {
       command->add_option("--metric", flags->metric, "Default examples_per_sec. " + MetricHelp());
       command->add_option("--field", flags->field, "The scaled field (default intra_op_threads)");
     },
     [](const AnalyzeFlags& flags, const v1::ResultSelection& selection,
        v1::AnalyzeRequest* request) {
       v1::ScalingRequest* scaling = request->mutable_scaling();
       *scaling->mutable_selection() = selection;
       scaling->set_metric(flags.metric);
       scaling->set_field(flags.field);
     }},
};

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

const std::vector<AnalysisKind>& AnalysisKinds() {
  static const std::vector<AnalysisKind> kinds(std::begin(kAnalysisKinds),
                                               std::end(kAnalysisKinds));
  return kinds;
}

void AddAnalyzeKinds(CLI::App* analyze, AnalyzeFlags* flags, std::string* format) {
  for (const AnalysisKind& kind : kAnalysisKinds) {
    CLI::App* command = analyze->add_subcommand(kind.name, kind.description);
    AddAnalyzeCommon(command, flags, format);
    kind.add_options(command, flags);
  }
}

absl::StatusOr<v1::AnalyzeRequest> BuildAnalyzeRequest(const std::string& kind,
                                                       const AnalyzeFlags& flags) {
  const AnalysisKind* found = nullptr;
  std::vector<std::string> names;
  for (const AnalysisKind& candidate : kAnalysisKinds) {
    names.emplace_back(candidate.name);
    if (kind == candidate.name) found = &candidate;
  }
  if (found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "analyze: '", kind, "' is not an analysis; one of ", absl::StrJoin(names, ", ")));
  }
  absl::StatusOr<v1::ResultSelection> selection = ParseSelection(flags.sweep_ids, flags.where);
  if (!selection.ok()) return selection.status();
  selection->set_include_predicted(flags.include_predicted);
  v1::AnalyzeRequest request;
  found->fill(flags, *selection, &request);
  return request;
}

}  // namespace paradnn::client
