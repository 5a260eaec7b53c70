#include "client/analysis_kinds.h"

#include <CLI/CLI.hpp>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/allreduce_views.h"
#include "client/analysis_kind_views.h"
#include "client/analyze_flags.h"
#include "client/metric_plot_scripts.h"
#include "client/roofline_plot_script.h"
#include "client/scale_out_views.h"
#include "client/speedup_plot_scripts.h"
#include "client/tuning_views.h"
#include "common/analysis_metrics.h"

namespace paradnn::client {
namespace {

using gnuplot::Terminal;

// ---- `paradnn analyze KIND`: each kind's options and its part of the request ----

void HeatmapOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_option("--metric", flags->metric, common::AnalysisMetricHelp())->required();
  command->add_option("--x", flags->x, "Field on the x axis (e.g. node)")->required();
  command->add_option("--y", flags->y, "Field on the y axis (e.g. batch)")->required();
  command->add_option("--panel", flags->panel, "Field with one panel per value (e.g. precision)");
}

void FillHeatmap(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  v1::HeatmapRequest* heatmap = request->mutable_heatmap();
  heatmap->set_metric(flags.metric);
  heatmap->set_x(flags.x);
  heatmap->set_y(flags.y);
  heatmap->set_panel(flags.panel);
}

void SensitivityOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_option("--metric", flags->metric, common::AnalysisMetricHelp())->required();
  command
      ->add_option("--features", flags->features,
                   "Numeric fields to regress on, comma-separated (default: every varying "
                   "hyper-parameter)")
      ->delimiter(',');
  command->add_flag("--log2", flags->log2_features, "Features as log2(value)");
  command->add_flag("--log2-target", flags->log2_target, "The metric as log2(value)");
  command->add_flag("--interactions", flags->interactions,
                    "Add every pairwise product of features");
}

void FillSensitivity(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  v1::SensitivityRequest* sensitivity = request->mutable_sensitivity();
  sensitivity->set_metric(flags.metric);
  for (const std::string& feature : flags.features) sensitivity->add_features(feature);
  sensitivity->set_log2_features(flags.log2_features);
  sensitivity->set_log2_target(flags.log2_target);
  sensitivity->set_interactions(flags.interactions);
}

void RooflineOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_flag("--ops", flags->ops, "Also one point per profiled operator with FLOPs");
}

void FillRoofline(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  request->mutable_roofline()->set_include_ops(flags.ops);
}

void BoxplotOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_option("--metric", flags->metric, common::AnalysisMetricHelp())->required();
  command
      ->add_option("--group-by", flags->group_by,
                   "Fields naming a box, comma-separated (default: family,device_name)")
      ->delimiter(',');
}

void FillBoxplot(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  v1::BoxplotRequest* boxplot = request->mutable_boxplot();
  boxplot->set_metric(flags.metric);
  for (const std::string& field : flags.group_by) boxplot->add_group_by(field);
}

void SpeedupOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_option("--metric", flags->metric,
                      "Default examples_per_sec. " + common::AnalysisMetricHelp());
  command->add_option("--field", flags->field, "The field that differs between the sides")
      ->required();
  command->add_option("--baseline", flags->baseline,
                      "Its value on the baseline side (default: the first of exactly two)");
  command->add_option("--candidate", flags->candidate, "Its value on the other side");
  command->add_option("--color-by", flags->color_by, "Hyper-parameter to colour points by");
  command
      ->add_option("--fdr", flags->fdr,
                   "False discovery rate of the verdicts across configurations (default 0.05)")
      ->check(CLI::Range(0.0, 1.0));
}

void FillSpeedup(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  v1::SpeedupRequest* speedup = request->mutable_speedup();
  speedup->set_metric(flags.metric);
  speedup->set_field(flags.field);
  speedup->set_baseline(flags.baseline);
  speedup->set_candidate(flags.candidate);
  speedup->set_color_by(flags.color_by);
  speedup->set_fdr(flags.fdr);
}

void ScalingOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_option("--metric", flags->metric,
                      "Default examples_per_sec. " + common::AnalysisMetricHelp());
  command->add_option("--field", flags->field,
                      "The scaled field (default intra_op_threads); hosts or devices: the "
                      "data-parallel analysis, as `analyze scale_out` (examples/s and the step, "
                      "no --metric)");
}

void ScaleOutOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_option("--field", flags->field,
                      "hosts (default: processes of a gang, one per worker) or devices (replicas "
                      "per process)");
}

void FillScaleOut(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  request->mutable_scale_out()->set_field(flags.field);
}

// Thread scaling, or for a data-parallel count the scale-out analysis: the
// issue asks for it as `analyze scaling --field hosts|devices`.
bool IsDataParallelCount(const std::string& field) {
  return field == "hosts" || field == "devices";
}

void FillScaling(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  if (IsDataParallelCount(flags.field)) {
    FillScaleOut(flags, request);
    return;
  }
  v1::ScalingRequest* scaling = request->mutable_scaling();
  scaling->set_metric(flags.metric);
  scaling->set_field(flags.field);
}

void TuningOptions(CLI::App* command, AnalyzeFlags* flags) {
  command->add_option("--metric", flags->metric,
                      "Default step_time. " + common::AnalysisMetricHelp());
  command
      ->add_option("--fdr", flags->fdr,
                   "False discovery rate of the verdicts across configurations (default 0.05)")
      ->check(CLI::Range(0.0, 1.0));
}

void FillTuning(const AnalyzeFlags& flags, v1::AnalyzeRequest* request) {
  v1::TuningRequest* tuning = request->mutable_tuning();
  tuning->set_metric(flags.metric);
  tuning->set_fdr(flags.fdr);
}

// ---- The table ------------------------------------------------------------------

constexpr AnalysisKind kAnalysisKinds[] = {
    {"heatmap",
     "A metric over two hyper-parameters (median over the others), optionally one "
     "panel per value of a third field; OOM cells shown as such (paper Fig. 2, 7)",
     HeatmapOptions, FillHeatmap,
     [](const v1::AnalyzeResponse& r) { return internal::HeatmapTable(r.heatmap()); },
     [](const v1::AnalyzeResponse& r) { return internal::HeatmapCsv(r.heatmap()); },
     [](v1::AnalyzeResponse* r) { internal::HeatmapToDisplayUnits(r->mutable_heatmap()); },
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::HeatmapScript(r.heatmap(), terminal, out_path);
     }},
    {"sensitivity",
     "Standardized linear-regression weights of a metric on the hyper-parameters, with R² "
     "(paper §2.3)",
     SensitivityOptions, FillSensitivity,
     [](const v1::AnalyzeResponse& r) { return internal::SensitivityTable(r.sensitivity()); },
     [](const v1::AnalyzeResponse& r) { return internal::SensitivityCsv(r.sensitivity()); },
     nullptr,  // weights are unitless
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::SensitivityScript(r.sensitivity(), terminal, out_path);
     }},
    {"roofline",
     "Jobs (and with --ops, profiled operators) at their arithmetic intensity and achieved "
     "FLOP/s under the calibrated roofs (paper Fig. 3)",
     RooflineOptions, FillRoofline,
     [](const v1::AnalyzeResponse& r) { return internal::RooflineTable(r.roofline()); },
     [](const v1::AnalyzeResponse& r) { return internal::RooflineCsv(r.roofline()); },
     nullptr,  // FLOP/B and FLOP/s
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::RooflineScript(r.roofline(), terminal, out_path);
     }},
    {"boxplot",
     "Distribution of a metric per group with the paper's 2/9/50/91/98th percentile whiskers "
     "and outliers (paper Fig. 11)",
     BoxplotOptions, FillBoxplot,
     [](const v1::AnalyzeResponse& r) { return internal::BoxplotTable(r.boxplot()); },
     [](const v1::AnalyzeResponse& r) { return internal::BoxplotCsv(r.boxplot()); },
     [](v1::AnalyzeResponse* r) { internal::BoxplotToDisplayUnits(r->mutable_boxplot()); },
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::BoxplotScript(r.boxplot(), terminal, out_path);
     }},
    {"speedup",
     "The same configurations on two sides of a field (device_kind, worker, libtorch_version,\n"
     "blas_backend, precision, ...) joined config by config: speedup against parameter count\n"
     "and its sensitivity (paper Fig. 8-10, §6)",
     SpeedupOptions, FillSpeedup,
     [](const v1::AnalyzeResponse& r) { return internal::SpeedupTable(r.speedup()); },
     [](const v1::AnalyzeResponse& r) { return internal::SpeedupCsv(r.speedup()); },
     [](v1::AnalyzeResponse* r) { internal::SpeedupToDisplayUnits(r->mutable_speedup()); },
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::SpeedupScript(r.speedup(), terminal, out_path);
     }},
    {"scaling",
     "Throughput at 1 vs N threads for the same configurations (paper Fig. 4 on CPU threads);\n"
     "--field hosts|devices: the data-parallel scale_out analysis",
     ScalingOptions, FillScaling,
     [](const v1::AnalyzeResponse& r) { return internal::ScalingTable(r.scaling()); },
     [](const v1::AnalyzeResponse& r) { return internal::ScalingCsv(r.scaling()); },
     [](v1::AnalyzeResponse* r) { internal::ScalingToDisplayUnits(r->mutable_scaling()); },
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::ScalingScript(r.scaling(), terminal, out_path);
     }},
    // `paradnn history` (client/history_command.h); no figure yet.
    {"history", nullptr, nullptr, nullptr,
     [](const v1::AnalyzeResponse& r) { return internal::HistoryTable(r.history()); },
     [](const v1::AnalyzeResponse& r) { return internal::HistoryCsv(r.history()); }, nullptr,
     nullptr},
    // `paradnn bisect` (client/bisect_command.h) prints the search in full;
    // as an analysis, its summary.
    {"bisect", nullptr, nullptr, nullptr,
     [](const v1::AnalyzeResponse& r) { return absl::StrCat(r.bisect().summary(), "\n"); },
     [](const v1::AnalyzeResponse&) { return std::string(); }, nullptr, nullptr},
    {"scale_out",
     "Data-parallel scaling over hosts or devices: throughput against N with the ideal line,\n"
     "weak and strong efficiency against the smallest N, the step's breakdown and where\n"
     "communication passes half of it (issue 39; the paper's future multi-chip work)",
     ScaleOutOptions, FillScaleOut,
     [](const v1::AnalyzeResponse& r) { return internal::ScaleOutTable(r.scale_out()); },
     [](const v1::AnalyzeResponse& r) { return internal::ScaleOutCsv(r.scale_out()); },
     nullptr,  // efficiencies and shares are ratios, seconds and examples/s stay
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::ScaleOutScript(r.scale_out(), terminal, out_path);
     }},
    {"allreduce",
     "A platform's communication roof from allreduce sweeps: per platform, backend and ranks\n"
     "the all-reduce's time and bus bandwidth by message size and the fitted alpha-beta model\n"
     "(latency alpha, bus bandwidth beta) that scale_out and the roofline compare jobs with",
     [](CLI::App*, AnalyzeFlags*) {},  // no options of its own
     [](const AnalyzeFlags&, v1::AnalyzeRequest* request) { request->mutable_allreduce(); },
     [](const v1::AnalyzeResponse& r) { return internal::AllreduceTable(r.allreduce()); },
     [](const v1::AnalyzeResponse& r) { return internal::AllreduceCsv(r.allreduce()); },
     nullptr,  // seconds and bytes/s stay
     [](const v1::AnalyzeResponse& r, Terminal terminal, const std::string& out_path) {
       return internal::AllreduceScript(r.allreduce(), terminal, out_path);
     }},
    {"tuning",
     "The thread-setting findings of Wang et al. (TACO 2021) checked per family on sweeps that\n"
     "vary stack.threads (paradnn tune) or intra_op_threads/inter_op_threads: narrow models\n"
     "fastest with one pool and every core, wide models with several pools, small batches\n"
     "gaining more from pools than large ones; with the measurements behind each",
     TuningOptions, FillTuning,
     [](const v1::AnalyzeResponse& r) { return internal::TuningTable(r.tuning()); },
     [](const v1::AnalyzeResponse& r) { return internal::TuningCsv(r.tuning()); },
     [](v1::AnalyzeResponse* r) { internal::TuningToDisplayUnits(r->mutable_tuning()); },
     nullptr},  // no figure: the table is the answer
};

}  // namespace

const std::vector<AnalysisKind>& AnalysisKinds() {
  static const std::vector<AnalysisKind> kinds(std::begin(kAnalysisKinds),
                                               std::end(kAnalysisKinds));
  return kinds;
}

const AnalysisKind* FindAnalysisKind(absl::string_view name) {
  for (const AnalysisKind& kind : kAnalysisKinds) {
    if (name == kind.name) return &kind;
  }
  return nullptr;
}

const AnalysisKind* KindOf(const v1::AnalyzeResponse& response) {
  const google::protobuf::OneofDescriptor* oneof =
      v1::AnalyzeResponse::descriptor()->FindOneofByName("analysis");
  const google::protobuf::FieldDescriptor* set =
      response.GetReflection()->GetOneofFieldDescriptor(response, oneof);
  return set == nullptr ? nullptr : FindAnalysisKind(set->name());
}

}  // namespace paradnn::client
