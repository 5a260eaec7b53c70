#include "client/fleet_events_command.h"

#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/fleet_plot.h"
#include "fleet/job_goodput.h"

namespace paradnn::client {
namespace {

constexpr int kLinesPerBatch = 4096;
constexpr int kExitBadInput = 1;

std::string Percent(bool has, double share) {
  return has ? absl::StrFormat("%6.1f%%", share * 100) : std::string("      -");
}

std::string AggregateRow(const v1::GoodputAggregate& a, const std::string& name) {
  const double holding = a.device_holding_s();
  auto part = [holding](double seconds) {
    return holding > 0 ? absl::StrFormat("%5.1f%%", seconds / holding * 100) : std::string("    -");
  };
  const v1::GoodputParts& p = a.device_parts();
  return absl::StrFormat(
      "%-14s %6d %s %s %s %s | %s %s %s %s %s %s\n", name.substr(0, 14), a.jobs(),
      Percent(a.has_scheduling(), a.scheduling()), Percent(a.has_runtime(), a.runtime()),
      Percent(a.has_program(), a.program()), Percent(a.has_mpg(), a.mpg()),
      part(p.initialization_s()), part(p.compilation_s()), part(p.data_loading_s()),
      part(p.checkpointing_s()), part(p.lost_progress_s()), part(p.other_s()));
}

std::string AggregateTable(const std::string& title,
                           const google::protobuf::RepeatedPtrField<v1::GoodputAggregate>& rows) {
  std::string out = absl::StrFormat("\nby %s\n", title);
  for (const v1::GoodputAggregate& a : rows) out += AggregateRow(a, a.group());
  return out;
}

// Reads `path` ("-": standard input) and streams it to the coordinator.
absl::StatusOr<v1::IngestFleetEventsResponse> IngestOne(const CommandContext& ctx,
                                                        CoordinatorClient& client,
                                                        const std::string& path) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
    in = &file;
  }
  int64_t next_line = 1;
  return client.IngestFleetEvents(
      [&](v1::FleetEventLines* batch) {
        batch->set_source(path);
        batch->set_first_line_number(next_line);
        std::string line;
        while (batch->lines_size() < kLinesPerBatch && std::getline(*in, line)) {
          batch->add_lines(std::move(line));
        }
        next_line += batch->lines_size();
        return batch->lines_size() > 0;
      },
      ctx.interrupts);
}

}  // namespace

FleetEventCommands AddFleetEventCommands(CLI::App* fleet, FleetEventFlags* flags) {
  FleetEventCommands commands;
  commands.ingest = fleet->add_subcommand(
      "ingest",
      "Store training jobs' events (JSON Lines, docs/fleet-events.md) in the coordinator's "
      "database: each event once (a re-ingest adds nothing); bad lines named, the rest stored");
  commands.ingest->add_option("FILE", flags->files, "Event files; - reads standard input")
      ->required();
  commands.report = fleet->add_subcommand(
      "report",
      "The stored training jobs' ML Productivity Goodput: scheduling x runtime x program, "
      "badput by cause and the jobs behind it, by device kind, size, framework, workload, day");
  commands.report
      ->add_option("--roofs", flags->roofs,
                   "A roofs file (JSON) for device kinds the fleet's workers did not calibrate")
      ->check(CLI::ExistingFile);
  commands.report->add_flag("--jobs", flags->jobs, "Every job's decomposition too (json)");
  commands.report->add_option("--top", flags->top, "Jobs shown per badput cause")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  commands.report->add_option("--plot", flags->plot,
                              "Draw where the device time went, per device kind (*.svg, *.png)");
  commands.report->add_option("--format", flags->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return commands;
}

int RunFleetIngest(const CommandContext& ctx, const FleetEventFlags& flags) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  int status = kExitOk;
  for (const std::string& path : flags.files) {
    absl::StatusOr<v1::IngestFleetEventsResponse> r = IngestOne(ctx, client, path);
    if (!r.ok()) return ReportError(ctx, r.status());
    *ctx.out << absl::StrFormat("%s: %d lines, %d events stored, %d already stored, %d bad lines\n",
                                path, r->lines(), r->stored(), r->duplicates(), r->bad_lines());
    for (const v1::FleetLineError& e : r->errors()) {
      *ctx.err << absl::StrFormat("%s:%d: %s\n", e.source(), e.line_number(), e.error());
    }
    if (r->bad_lines() > r->errors_size()) {
      *ctx.err << absl::StrFormat("%s: and %d more bad lines\n", path,
                                  r->bad_lines() - r->errors_size());
    }
    if (r->bad_lines() > 0) status = kExitBadInput;
  }
  return status;
}

absl::StatusOr<std::vector<v1::FleetRoof>> ParseRoofsFile(const std::string& text,
                                                          const std::string& path) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("roofs") ||
      !doc.at("roofs").is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": not a roofs file; allowed: {\"roofs\": {\"DEVICE_KIND\": {\"flops_per_sec\": N, "
        "\"bytes_per_sec\": N, \"dtype\": \"float32\"}}}"));
  }
  std::vector<v1::FleetRoof> roofs;
  for (const auto& [kind, fields] : doc.at("roofs").items()) {
    v1::FleetRoof roof;
    roof.set_device_kind(kind);
    roof.set_source(absl::StrCat("roofs file ", path));
    for (const char* field : {"flops_per_sec", "bytes_per_sec"}) {
      const bool required = field == std::string("flops_per_sec");
      if (!fields.is_object() || (!fields.contains(field) && required) ||
          (fields.contains(field) &&
           (!fields.at(field).is_number() || !(fields.at(field).get<double>() >= 0)))) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": roofs.", kind, ".", field, ": a number >= 0 (one device's)"));
      }
    }
    roof.set_flops_per_sec(fields.at("flops_per_sec").get<double>());
    if (fields.contains("bytes_per_sec")) {
      roof.set_bytes_per_sec(fields.at("bytes_per_sec").get<double>());
    }
    if (fields.contains("dtype") && fields.at("dtype").is_string()) {
      roof.set_dtype(fields.at("dtype").get<std::string>());
    }
    roofs.push_back(std::move(roof));
  }
  return roofs;
}

std::string FormatFleetReport(const v1::FleetReportResponse& report) {
  if (report.fleet().jobs() == 0) {
    return absl::StrCat("no complete jobs among ", report.events(), " stored events\n");
  }
  std::string out =
      absl::StrFormat("%d jobs, %d events\n\n", report.fleet().jobs(), report.events());
  out += absl::StrFormat("%-14s %6s %7s %7s %7s %7s | %6s %6s %6s %6s %6s %6s\n", "", "jobs",
                         "sched", "runtime", "program", "MPG", "init", "compile", "data", "ckpt",
                         "lost", "other");
  out += AggregateRow(report.fleet(), "fleet");
  out +=
      "(sched, runtime, program, MPG: device-time weighted; init .. other: badput, shares of "
      "the device time holding devices)\n";
  out += AggregateTable("device kind", report.by_device_kind());
  out += AggregateTable("job size (devices)", report.by_size());
  out += AggregateTable("framework", report.by_framework());
  out += AggregateTable("workload", report.by_workload());
  out += AggregateTable("day (UTC)", report.by_day());
  out += "\nlargest badput, fleet-wide, and the jobs behind it (device-seconds)\n";
  for (const v1::BadputSource& b : report.badput()) {
    if (!(b.device_s() > 0)) continue;
    out += absl::StrFormat("  %-15s %12.0f  %5.1f%% of holding\n", b.cause(), b.device_s(),
                           b.share_of_holding() * 100);
    for (const v1::JobGoodput& j : b.top_jobs()) {
      out += absl::StrFormat("      %-40s %12.0f  %s x %d\n", j.job().substr(0, 40),
                             j.devices() * fleet::BadputSeconds(j.parts(), b.cause()),
                             j.device_kind(), j.devices());
    }
  }
  out += "\nprogram goodput against\n";
  for (const v1::FleetRoof& r : report.roofs()) {
    out += absl::StrFormat("  %-10s %-9s %10.3g FLOP/s %10.3g B/s  %s\n", r.device_kind(),
                           r.dtype(), r.flops_per_sec(), r.bytes_per_sec(), r.source());
  }
  for (const auto& [why, jobs] : report.program_blank()) {
    out += absl::StrFormat("  blank for %d jobs: %s\n", jobs, why);
  }
  if (report.references_size() > 0) {
    out +=
        "\nprogram goodput of one-device jobs beside paradnn's fastest result of the same "
        "configuration on that device kind\n";
    for (const v1::ParadnnReference& r : report.references()) {
      out +=
          absl::StrFormat("  %-24s %6.1f%%   paradnn %6.1f%% (%.3f ms per step, job %d, %s)\n",
                          r.job().substr(0, 24), r.job_program() * 100, r.paradnn_program() * 100,
                          r.paradnn_step_s() * 1e3, r.result_job_id(), r.stack());
    }
  }
  for (const std::string& line : report.incomplete()) out += "incomplete: " + line + "\n";
  return out;
}

int RunFleetReport(const CommandContext& ctx, const FleetEventFlags& flags) {
  v1::FleetReportRequest request;
  request.set_top_jobs(flags.top);
  request.set_jobs(flags.jobs);
  if (!flags.roofs.empty()) {
    std::ifstream in(flags.roofs);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::vector<v1::FleetRoof>> roofs = ParseRoofsFile(text.str(), flags.roofs);
    if (!roofs.ok()) return ReportError(ctx, roofs.status());
    for (v1::FleetRoof& roof : *roofs) *request.add_roofs() = std::move(roof);
  }
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<v1::FleetReportResponse> report = client.FleetReport(request);
  if (!report.ok()) return ReportError(ctx, report.status());
  if (!flags.plot.empty()) {
    if (absl::Status drawn = PlotFleetReport(*report, flags.plot); !drawn.ok()) {
      return ReportError(ctx, drawn);
    }
  }
  if (flags.format == "json") {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(*report, &json, options).ok()) {
      return ReportError(ctx, absl::InternalError("could not print the report as JSON"));
    }
    *ctx.out << json << "\n" << std::flush;
    return kExitOk;
  }
  *ctx.out << FormatFleetReport(*report) << std::flush;
  return kExitOk;
}

}  // namespace paradnn::client
