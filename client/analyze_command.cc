#include "client/analyze_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/analysis_plots.h"
#include "client/analysis_report.h"
#include "client/analysis_views.h"
#include "client/coordinator_source.h"
#include "client/local_runner.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

// How many values a swept parameter takes (1 for a fixed one, or one the
// family does not know), as the sweep expands it.
int64_t ValueCount(const std::string& family, const std::string& name, const v1::ParamSpec& spec) {
  const model::FamilyDef* schema = model::FindFamily(family);
  const model::ParamRule* param = schema == nullptr ? nullptr : model::FindParam(*schema, name);
  if (param == nullptr) return 1;
  absl::StatusOr<std::vector<int64_t>> values =
      model::ParamValues(spec, *param, absl::StrCat("params.", name));
  return values.ok() ? static_cast<int64_t>(values->size()) : 1;
}

// What the sweeps of one family vary.
struct FamilyPlan {
  std::vector<int64_t> sweep_ids;
  std::map<std::string, int64_t> param_values;  // most values seen per varying parameter
  std::set<std::string> precisions;
  bool threads_vary = false;
};

v1::ResultSelection Selection(const std::vector<int64_t>& sweep_ids,
                              const std::map<std::string, std::string>& where) {
  v1::ResultSelection selection;
  for (int64_t id : sweep_ids) selection.add_sweep_ids(id);
  for (const auto& [field, value] : where) (*selection.mutable_where())[field] = value;
  return selection;
}

// The varying parameters, most values first (ties by name).
std::vector<std::string> RankedParams(const FamilyPlan& plan) {
  std::vector<std::pair<int64_t, std::string>> ranked;
  for (const auto& [name, count] : plan.param_values) {
    if (name != "intra_op_threads" && name != "inter_op_threads") ranked.emplace_back(-count, name);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> names;
  names.reserve(ranked.size());
  for (const auto& entry : ranked) names.push_back(entry.second);
  return names;
}

// Examples/s scaling with `field` over the family's sweeps.
PlannedAnalysis ScalingAnalysis(const FamilyPlan& plan,
                                const std::map<std::string, std::string>& where_family,
                                const std::string& field, std::string title, std::string caption) {
  PlannedAnalysis analysis;
  analysis.title = std::move(title);
  analysis.caption = std::move(caption);
  v1::ScalingRequest* scaling = analysis.request.mutable_scaling();
  *analysis.request.mutable_selection() = Selection(plan.sweep_ids, where_family);
  scaling->set_metric("examples_per_sec");
  scaling->set_field(field);
  return analysis;
}

void PlanFamily(const std::string& family, const FamilyPlan& plan,
                std::vector<PlannedAnalysis>* out) {
  const std::vector<std::string> params = RankedParams(plan);
  const std::map<std::string, std::string> where_family = {{"family", family}};
  if (params.size() >= 2) {
    std::string panel;
    if (plan.precisions.size() > 1) {
      panel = "precision";
    } else if (params.size() >= 3 && plan.param_values.at(params[2]) <= 6) {
      panel = params[2];
    }
    for (const char* metric : {"gflops", "mfu"}) {
      PlannedAnalysis analysis;
      analysis.title =
          absl::StrCat(family, ": ", metric == std::string("gflops") ? "GFLOP/s" : "MFU", " by ",
                       params[0], " and ", params[1]);
      analysis.caption = absl::StrCat(
          "Median over the other hyper-parameters of each cell (paper Fig. 2, 7)",
          panel.empty() ? "" : absl::StrCat("; one panel per ", panel),
          ". OOM cells ran out of memory; pOOM cells were predicted not to fit and not run.");
      v1::HeatmapRequest* heatmap = analysis.request.mutable_heatmap();
      *analysis.request.mutable_selection() = Selection(plan.sweep_ids, where_family);
      heatmap->set_metric(metric);
      heatmap->set_x(params[0]);
      heatmap->set_y(params[1]);
      heatmap->set_panel(panel);
      out->push_back(std::move(analysis));
    }
  }
  if (!params.empty()) {
    for (const std::string& precision : plan.precisions) {
      PlannedAnalysis analysis;
      analysis.title = absl::StrCat(family, " ", precision, ": sensitivity of GFLOP/s");
      analysis.caption =
          "Standardized weights of a linear regression of GFLOP/s on the log2 "
          "hyper-parameters (paper §2.3, Fig. 2d-f): the sign says which way a larger value "
          "moves performance, the size how strongly; R² says how much the linear model explains.";
      v1::SensitivityRequest* sensitivity = analysis.request.mutable_sensitivity();
      std::map<std::string, std::string> where = where_family;
      where["precision"] = precision;
      *analysis.request.mutable_selection() = Selection(plan.sweep_ids, where);
      sensitivity->set_metric("gflops");
      sensitivity->set_log2_features(true);
      out->push_back(std::move(analysis));
    }
  }
  if (plan.precisions.count("float32") != 0 && plan.precisions.size() == 2) {
    const std::string other = *std::find_if(plan.precisions.begin(), plan.precisions.end(),
                                            [](const std::string& p) { return p != "float32"; });
    PlannedAnalysis analysis;
    analysis.title = absl::StrCat(family, ": ", other, " over float32");
    analysis.caption = absl::StrCat(
        "Speedup in examples/s of ", other,
        " over float32 for every configuration measured in "
        "both, against the parameter count (paper Fig. 8-10 for platforms; here precisions)",
        params.empty() ? "" : absl::StrCat(", coloured by ", params.back()), ".");
    v1::SpeedupRequest* speedup = analysis.request.mutable_speedup();
    *analysis.request.mutable_selection() = Selection(plan.sweep_ids, where_family);
    speedup->set_metric("examples_per_sec");
    speedup->set_field("precision");
    speedup->set_baseline("float32");
    speedup->set_candidate(other);
    if (!params.empty()) speedup->set_color_by(params.back());
    out->push_back(std::move(analysis));
  }
  if (plan.threads_vary) {
    out->push_back(ScalingAnalysis(
        plan, where_family, "intra_op_threads",
        absl::StrCat(family, ": scaling with intra-op threads"),
        "Examples/s at each thread count over the smallest, per configuration (paper Fig. 4's "
        "multi-chip overhead, on CPU threads); efficiency 100 % is perfect scaling."));
  }
}

}  // namespace

absl::StatusOr<v1::ResultSelection> ParseSelection(const std::vector<int64_t>& sweep_ids,
                                                   const std::vector<std::string>& where) {
  v1::ResultSelection selection;
  for (int64_t id : sweep_ids) selection.add_sweep_ids(id);
  for (const std::string& filter : where) {
    const size_t equals = filter.find('=');
    if (equals == std::string::npos || equals == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--where '", filter, "': expected FIELD=VALUE (e.g. --where precision=float32)"));
    }
    const std::string field = filter.substr(0, equals);
    if (selection.where().count(field) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--where: field '", field, "' is given twice (one value per field)"));
    }
    (*selection.mutable_where())[field] = filter.substr(equals + 1);
  }
  return selection;
}

int RunAnalyze(const CommandContext& ctx, const v1::AnalyzeRequest& request, OutputFormat format,
               const std::string& plot_path, const std::string& db_path) {
  absl::StatusOr<std::unique_ptr<CoordinatorSource>> source = CoordinatorSource::Open(ctx, db_path);
  if (!source.ok()) return ReportError(ctx, source.status());
  CoordinatorClient& client = (*source)->client();
  absl::StatusOr<v1::AnalyzeResponse> response = client.Analyze(request);
  if (!response.ok()) return ReportError(ctx, response.status());
  ToDisplayUnits(&*response);
  *ctx.out << FormatAnalysis(*response, format) << std::flush;
  if (!plot_path.empty()) {
    if (absl::Status s = PlotAnalysis(*response, plot_path); !s.ok()) return ReportError(ctx, s);
    *ctx.err << "paradnn: wrote " << plot_path << "\n";
  }
  return kExitOk;
}

std::vector<PlannedAnalysis> PlanReport(const std::vector<v1::SweepStatus>& sweeps) {
  std::map<std::string, FamilyPlan> families;
  std::vector<int64_t> all_ids;
  std::set<std::string> devices;
  bool profiled = false;
  for (const v1::SweepStatus& sweep : sweeps) {
    const v1::SweepSpec& spec = sweep.spec();
    FamilyPlan& plan = families[sweep.family()];
    plan.sweep_ids.push_back(sweep.sweep_id());
    all_ids.push_back(sweep.sweep_id());
    devices.insert(sweep.device());
    profiled = profiled || spec.run().profile();
    for (const auto& [name, param] : spec.params()) {
      const int64_t count = ValueCount(sweep.family(), name, param);
      if (count <= 1) continue;
      int64_t& seen = plan.param_values[name];
      seen = std::max(seen, count);
      if (name == "intra_op_threads") plan.threads_vary = true;
    }
    if (spec.precision().empty()) plan.precisions.insert("float32");
    for (const std::string& precision : spec.precision()) plan.precisions.insert(precision);
  }
  std::vector<PlannedAnalysis> planned;
  // Categorical options (block_fn, cell) are not numeric: they take no part
  // in heat-map axes or regressions.
  // The allreduce family times communication alone: its own section.
  for (const auto& [family, plan] : families) {
    if (family != kAllreduceFamily) PlanFamily(family, plan, &planned);
  }
  // Data-parallel sweeps (params.hosts or devices): scale-out per field.
  for (PlannedAnalysis& scale_out : PlanScaleOutSections(sweeps)) {
    planned.push_back(std::move(scale_out));
  }
  for (PlannedAnalysis& allreduce : PlanAllreduceSections(sweeps)) {
    planned.push_back(std::move(allreduce));
  }

  PlannedAnalysis roofline;
  roofline.title = "Roofline";
  roofline.caption = absl::StrCat(
      "Each job at its arithmetic intensity (executed FLOPs / bytes moved per step) and achieved "
      "FLOP/s under the platforms' calibrated roofs (paper Fig. 3)",
      profiled ? "; operators of profiled jobs as separate points" : "", ".");
  *roofline.request.mutable_selection() = Selection(all_ids, {});
  roofline.request.mutable_roofline()->set_include_ops(profiled);
  planned.push_back(std::move(roofline));

  PlannedAnalysis boxplot;
  boxplot.title = "GFLOP/s by family and precision";
  boxplot.caption =
      "Distribution of GFLOP/s over every configuration (paper Fig. 11): box from the 25th to "
      "the 75th percentile with the median, whiskers at the most extreme values within 1.5 IQR "
      "of the box, outliers beyond them (Tukey).";
  v1::BoxplotRequest* box = boxplot.request.mutable_boxplot();
  *boxplot.request.mutable_selection() = Selection(all_ids, {});
  box->set_metric("gflops");
  box->add_group_by("family");
  box->add_group_by("precision");
  planned.push_back(std::move(boxplot));

  if (devices.size() == 2) {
    PlannedAnalysis speedup;
    speedup.title = absl::StrCat(*devices.rbegin(), " over ", *devices.begin());
    speedup.caption =
        "Speedup in examples/s between the device kinds, configuration by "
        "configuration (paper Fig. 8-10).";
    v1::SpeedupRequest* request = speedup.request.mutable_speedup();
    *speedup.request.mutable_selection() = Selection(all_ids, {});
    request->set_metric("examples_per_sec");
    request->set_field("device_kind");
    request->set_baseline(*devices.begin());
    request->set_candidate(*devices.rbegin());
    planned.push_back(std::move(speedup));
  }
  return planned;
}

int RunReport(const CommandContext& ctx, const std::vector<int64_t>& sweep_ids,
              const std::string& out_dir, const std::string& db_path, bool include_predicted) {
  absl::StatusOr<std::unique_ptr<CoordinatorSource>> source = CoordinatorSource::Open(ctx, db_path);
  if (!source.ok()) return ReportError(ctx, source.status());
  CoordinatorClient& client = (*source)->client();
  ReportInput input;
  for (int64_t id : sweep_ids) {
    absl::StatusOr<v1::SweepStatus> sweep = client.GetSweep(id);
    if (!sweep.ok()) return ReportError(ctx, sweep.status());
    input.sweeps.push_back(*std::move(sweep));
  }
  absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers();
  if (!workers.ok()) return ReportError(ctx, workers.status());
  input.workers = *std::move(workers);
  for (PlannedAnalysis& planned : PlanReport(input.sweeps)) {
    planned.request.mutable_selection()->set_include_predicted(include_predicted);
    absl::StatusOr<v1::AnalyzeResponse> response = client.Analyze(planned.request);
    if (!response.ok()) {
      if (ExitCodeFor(response.status()) == kExitUnavailable) {
        return ReportError(ctx, response.status());
      }
      input.notes.push_back(
          absl::StrCat(planned.title, ": not shown: ", response.status().message()));
      continue;
    }
    ToDisplayUnits(&*response);
    // Every caption says what its figure covers and what it combined.
    std::string caption = planned.caption;
    if (std::string scope = ScopeSummary(response->scope()); !scope.empty()) {
      absl::StrAppend(&caption, " Over ", scope, ".");
    }
    if (response->predicted_results() > 0) {
      absl::StrAppend(
          &caption, " ", response->predicted_results(), " of its ", response->results(),
          " results are predicted by the budgeted sweep's model, not measured",
          response->has_heatmap() ? " (hatched cells; hover a cell for its interval)" : "", ".");
    }
    input.sections.push_back({planned.title, std::move(caption), *std::move(response)});
  }
  if (absl::Status s = WriteReport(input, out_dir); !s.ok()) return ReportError(ctx, s);
  *ctx.out << "wrote " << out_dir << "/index.html: " << input.sections.size() << " figures"
           << (input.notes.empty() ? "" : absl::StrCat(", ", input.notes.size(), " not applicable"))
           << "\n"
           << std::flush;
  return kExitOk;
}

}  // namespace paradnn::client
