// The CLI's commands against a coordinator (client/commands.h); the
// CoordinatorClient they call is in coordinator_client.cc.
#include "client/commands.h"

#include <google/protobuf/util/json_util.h>

#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/coordinator_source.h"
#include "client/listing_format.h"
#include "client/presets.h"
#include "client/progress.h"
#include "client/result_views.h"
#include "client/sweep_file.h"
#include "common/clock.h"
#include "common/human_units.h"
#include "common/state_names.h"
#include "model/sweep.h"

namespace paradnn::client {

int ExitCodeForSweep(const v1::SweepStatus& status) {
  // A budgeted sweep is complete when every job is measured or predicted.
  const bool complete = status.state() != v1::SWEEP_RUNNING &&
                        status.done_jobs() + status.predicted_jobs() == status.total_jobs();
  return complete ? kExitOk : kExitFailed;
}

int ReportError(const CommandContext& ctx, const absl::Status& status) {
  *ctx.err << "paradnn: " << status.message() << "\n" << std::flush;
  return ExitCodeFor(status);
}

void PrintResults(const CommandContext& ctx, const std::vector<v1::ResultRow>& rows,
                  OutputFormat format, const ResultsView& view) {
  ResultTable table;
  bool samples = false;
  if (view.kind == ResultsView::kOps) {
    table = BuildOpsTable(rows, view.top_ops);
    if (table.rows.empty() && format == OutputFormat::kTable) {
      *ctx.out << "no profiled results in this sweep; profile with `profile: true` in the sweep "
                  "file (or paradnn-runner --profile)\n"
               << std::flush;
      return;
    }
  } else if (view.kind == ResultsView::kAuto && HasRepeats(rows) && !view.samples) {
    table = BuildRepeatsTable(rows);
  } else {
    table = BuildResultTable(rows);
    samples = view.samples;
  }
  switch (format) {
    case OutputFormat::kCsv:
      *ctx.out << FormatCsv(table, samples);
      break;
    case OutputFormat::kJson:
      *ctx.out << FormatJson(table, samples);
      break;
    case OutputFormat::kTable:
      *ctx.out << (view.wide ? FormatHumanTable(table) : FormatNarrowTable(table));
      break;
  }
  ctx.out->flush();
}

absl::StatusOr<v1::SweepSpec> LoadSweep(const SweepSource& source, int64_t max_jobs) {
  if (source.file.empty() == source.preset.empty()) {
    return absl::InvalidArgumentError(
        "give a sweep file or --preset NAME (one of them; paradnn presets lists the presets)");
  }
  absl::StatusOr<v1::SweepSpec> spec = source.preset.empty() ? ReadSweepFile(source.file, max_jobs)
                                                             : LoadPreset(source.preset, max_jobs);
  if (spec.ok() && source.run_predicted_oom) spec->set_run_predicted_oom(true);
  if (spec.ok() && source.fresh) spec->mutable_run()->set_fresh(true);
  if (spec.ok() && (source.budget_seconds > 0 || source.target_interval > 0)) {
    if (source.budget_seconds > 0) spec->mutable_run()->set_budget_seconds(source.budget_seconds);
    if (source.target_interval > 0) {
      spec->mutable_run()->set_target_interval(source.target_interval);
    }
    if (absl::Status s = model::ValidateSweep(*spec, max_jobs); !s.ok()) return s;
  }
  return spec;
}

std::string FormatSubmitted(const std::string& name, const v1::SubmitSweepResponse& response) {
  std::string text = absl::StrCat("submitted sweep ", response.sweep_id(), " (", name,
                                  "): ", response.jobs(), " jobs\n");
  if (response.jobs() == 0) return text;
  const std::string params =
      response.min_params() == response.max_params()
          ? HumanCount(static_cast<double>(response.max_params()))
          : absl::StrCat(HumanCount(static_cast<double>(response.min_params())), " .. ",
                         HumanCount(static_cast<double>(response.max_params())));
  absl::StrAppend(&text,
                  "  model FLOPs per step, all jobs: ", HumanCount(response.total_model_flops()),
                  "; parameters ", params, "; largest memory estimate ",
                  common::HumanBytes(response.max_peak_memory_estimate_bytes()), "\n");
  return text;
}

std::string NoWorkerForDevice(const std::string& device,
                              const std::vector<v1::WorkerInfo>& workers) {
  std::map<std::string, int> connected;
  for (const v1::WorkerInfo& worker : workers) {
    if (worker.connected()) ++connected[worker.device_kind()];
  }
  if (connected.count(device) > 0) return "";
  std::vector<std::string> kinds;
  kinds.reserve(connected.size());
  for (const auto& [kind, count] : connected) kinds.push_back(absl::StrCat(kind, " x", count));
  return absl::StrCat("no connected worker has device '", device,
                      "' (connected: ", kinds.empty() ? "none" : absl::StrJoin(kinds, ", "),
                      "); its jobs wait until one connects: paradnn-worker --device ", device);
}

int RunSubmit(const CommandContext& ctx, const SweepSource& source, bool quiet, int64_t max_jobs) {
  absl::StatusOr<v1::SweepSpec> spec = LoadSweep(source, max_jobs);
  if (!spec.ok()) return ReportError(ctx, spec.status());
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<v1::SubmitSweepResponse> response = client.SubmitSweep(*spec, max_jobs);
  if (!response.ok()) return ReportError(ctx, response.status());
  if (quiet) {
    *ctx.out << response->sweep_id() << "\n";
  } else {
    *ctx.out << FormatSubmitted(spec->name(), *response);
  }
  ctx.out->flush();
  // A sweep nobody can run is a common slip (device: cuda on a CPU fleet).
  if (absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers(); workers.ok()) {
    const std::string device = spec->device().empty() ? "cpu" : spec->device();
    if (std::string warning = NoWorkerForDevice(device, *workers); !warning.empty()) {
      *ctx.err << "paradnn: warning: " << warning << "\n" << std::flush;
    }
  }
  return kExitOk;
}

int RunPresets(const CommandContext& ctx) {
  const std::vector<std::string> header = {"PRESET", "FAMILY", "JOBS", "DESCRIPTION"};
  std::vector<std::vector<std::string>> rows;
  for (const Preset& preset : Presets()) {
    // No cap here: the listing shows what each preset expands to.
    absl::StatusOr<v1::SweepSpec> spec =
        LoadPreset(preset.name, std::numeric_limits<int64_t>::max());
    if (!spec.ok()) return ReportError(ctx, spec.status());  // a broken build; tests catch it
    rows.push_back({std::string(preset.name), spec->family(),
                    absl::StrCat(model::CountConfigurations(*spec)), PresetSummary(preset)});
  }
  *ctx.out << AlignColumns(header, rows, {false, false, true, false})
           << "\nsubmit one with: paradnn submit --preset NAME (or paradnn local --preset NAME)\n"
           << std::flush;
  return kExitOk;
}

int RunWatch(const CommandContext& ctx, int64_t sweep_id) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  return WatchWithProgress(ctx, client, sweep_id);
}

int RunStatus(const CommandContext& ctx, std::optional<int64_t> sweep_id, OutputFormat format) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  if (sweep_id.has_value()) {
    absl::StatusOr<v1::SweepStatus> status = client.GetSweep(*sweep_id);
    if (!status.ok()) return ReportError(ctx, status.status());
    *ctx.out << (format == OutputFormat::kTable ? FormatSweepDetail(*status)
                                                : FormatSweeps({*status}, format))
             << std::flush;
    return kExitOk;
  }
  absl::StatusOr<std::vector<v1::SweepStatus>> sweeps = client.ListSweeps();
  if (!sweeps.ok()) return ReportError(ctx, sweeps.status());
  if (format != OutputFormat::kTable) {
    *ctx.out << FormatSweeps(*sweeps, format) << std::flush;
    return kExitOk;
  }
  if (sweeps->empty()) {
    *ctx.out << "no sweeps yet; submit one with: paradnn submit FILE.yaml\n" << std::flush;
    return kExitOk;
  }
  *ctx.out << FormatSweepList(*sweeps) << std::flush;
  return kExitOk;
}

int RunResults(const CommandContext& ctx, const std::vector<int64_t>& sweep_ids,
               OutputFormat format, const ResultsView& view, const std::string& db_path) {
  absl::StatusOr<std::unique_ptr<CoordinatorSource>> source = CoordinatorSource::Open(ctx, db_path);
  if (!source.ok()) return ReportError(ctx, source.status());
  CoordinatorClient& client = (*source)->client();
  std::vector<v1::ResultRow> all;
  for (int64_t sweep_id : sweep_ids) {
    absl::StatusOr<std::vector<v1::ResultRow>> rows =
        client.QueryResults(sweep_id, view.samples, ctx.interrupts);
    if (!rows.ok()) return ReportError(ctx, rows.status());
    all.insert(all.end(), std::make_move_iterator(rows->begin()),
               std::make_move_iterator(rows->end()));
  }
  PrintResults(ctx, all, format, view);
  return kExitOk;
}

int RunWorkers(const CommandContext& ctx, OutputFormat format) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers();
  if (!workers.ok()) return ReportError(ctx, workers.status());
  if (format != OutputFormat::kTable) {
    *ctx.out << FormatWorkerList(*workers, format) << std::flush;
    return kExitOk;
  }
  if (workers->empty()) {
    *ctx.out << "no workers have connected; start one with: paradnn-worker --coordinator "
             << ctx.address << "\n"
             << std::flush;
    return kExitOk;
  }
  *ctx.out << FormatWorkers(*workers, common::SystemClock().NowUnixMs()) << std::flush;
  return kExitOk;
}

int RunCancel(const CommandContext& ctx, int64_t sweep_id) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<v1::SweepStatus> status = client.CancelSweep(sweep_id);
  if (!status.ok()) return ReportError(ctx, status.status());
  *ctx.out << FormatSweepDetail(*status) << std::flush;
  return kExitOk;
}

std::string FormatFleetGoodput(const v1::FleetGoodputResponse& goodput) {
  std::string out = absl::StrFormat("%-8s %7s %10s %10s %7s %5s %10s %10s %8s %7s %7s\n", "device",
                                    "workers", "connected", "busy", "sched", "jobs", "job wall",
                                    "timed", "runtime", "program", "goodput");
  auto row = [&out](const v1::Goodput& g, const std::string& name) {
    out += absl::StrFormat(
        "%-8s %7d %9.1fs %9.1fs %6.1f%% %5d %9.1fs %9.1fs %7.1f%% %6.1f%% %6.2f%%\n", name,
        g.workers(), g.connected_seconds(), g.busy_seconds(), g.scheduling() * 100, g.jobs(),
        g.job_wall_seconds(), g.timed_seconds(), g.runtime() * 100, g.program() * 100,
        g.goodput() * 100);
  };
  for (const v1::Goodput& g : goodput.device_kinds()) row(g, g.device_kind());
  if (goodput.device_kinds_size() > 1) row(goodput.total(), "all");
  out += absl::StrFormat(
      "window %.1f s. sched = busy / connected worker time; runtime = timed steps / job wall "
      "(lease .. result stored);\nprogram = HFU (executed FLOP/s / calibrated roof) weighted by "
      "timed seconds over %d OK results; goodput = sched x runtime x program\n",
      static_cast<double>(goodput.to_unix_ms() - goodput.from_unix_ms()) / 1000.0,
      goodput.total().utilization_results());
  return out;
}

namespace {

// One field of a goodput row as CSV text (raw numbers, as json prints them).
std::string GoodputField(const v1::Goodput& row, const google::protobuf::FieldDescriptor* field) {
  const google::protobuf::Reflection* reflection = row.GetReflection();
  switch (field->cpp_type()) {
    case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
      return reflection->GetString(row, field);
    case google::protobuf::FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(reflection->GetInt32(row, field));
    case google::protobuf::FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(reflection->GetInt64(row, field));
    case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrCat(reflection->GetDouble(row, field));
    default:
      return "";
  }
}

// A row per device kind and the total (device_kind "total"), a column per
// Goodput field under its proto name, so it loads as the json does.
std::string FleetCsv(const v1::FleetGoodputResponse& goodput) {
  const google::protobuf::Descriptor* descriptor = v1::Goodput::descriptor();
  std::vector<std::string> header;
  header.reserve(descriptor->field_count());
  for (int i = 0; i < descriptor->field_count(); ++i) {
    header.push_back(descriptor->field(i)->name());
  }
  std::string out = CsvLine(header);
  std::vector<v1::Goodput> rows(goodput.device_kinds().begin(), goodput.device_kinds().end());
  rows.push_back(goodput.total());
  rows.back().set_device_kind("total");
  for (const v1::Goodput& row : rows) {
    std::vector<std::string> fields;
    fields.reserve(descriptor->field_count());
    for (int i = 0; i < descriptor->field_count(); ++i) {
      fields.push_back(GoodputField(row, descriptor->field(i)));
    }
    absl::StrAppend(&out, CsvLine(fields));
  }
  return out;
}

}  // namespace

int RunFleet(const CommandContext& ctx, int64_t sweep_id, double window_seconds,
             const std::string& format) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  v1::FleetGoodputRequest request;
  request.set_sweep_id(sweep_id);
  request.set_window_seconds(window_seconds);
  absl::StatusOr<v1::FleetGoodputResponse> goodput = client.FleetGoodput(request);
  if (!goodput.ok()) return ReportError(ctx, goodput.status());
  if (format == "json") {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.always_print_primitive_fields = true;
    options.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(*goodput, &json, options).ok()) {
      return ReportError(ctx, absl::InternalError("could not print the goodput as JSON"));
    }
    *ctx.out << json << "\n" << std::flush;
    return kExitOk;
  }
  if (format == "csv") {
    *ctx.out << FleetCsv(*goodput) << std::flush;
    return kExitOk;
  }
  if (goodput->device_kinds_size() == 0) {
    *ctx.out << "no worker time and no finished job in the window\n" << std::flush;
    return kExitOk;
  }
  *ctx.out << FormatFleetGoodput(*goodput) << std::flush;
  return kExitOk;
}

}  // namespace paradnn::client
