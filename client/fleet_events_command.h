// `paradnn fleet ingest FILE...|-` and `paradnn fleet report`: a user's own
// training jobs' events (docs/fleet-events.md) into the coordinator's
// database, and their ML Productivity Goodput decomposed, aggregated and
// explained (the coordinator's fleet_intake.h computes it).
#ifndef PARADNN_CLIENT_FLEET_EVENTS_COMMAND_H_
#define PARADNN_CLIENT_FLEET_EVENTS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::client {

struct FleetEventFlags {
  std::vector<std::string> files;  // ingest: JSON Lines files, "-" = standard input
  std::string roofs;               // report: a roofs file (JSON)
  bool jobs = false;               // report: every job's decomposition too
  int top = 5;                     // report: jobs per badput cause
  std::string format = "table";    // report: table | json
  std::string plot;                // report: a figure, *.svg or *.png
};

struct FleetEventCommands {
  CLI::App* ingest = nullptr;
  CLI::App* report = nullptr;
};

// `ingest` and `report` under `fleet`.
FleetEventCommands AddFleetEventCommands(CLI::App* fleet, FleetEventFlags* flags);

int RunFleetIngest(const CommandContext& ctx, const FleetEventFlags& flags);
int RunFleetReport(const CommandContext& ctx, const FleetEventFlags& flags);

// The roofs of a roofs file: {"roofs": {"h100": {"flops_per_sec": 6e13,
// "bytes_per_sec": 3e12, "dtype": "bfloat16"}, ...}} (dtype optional: every
// precision). InvalidArgument naming the file, the device kind and field.
absl::StatusOr<std::vector<v1::FleetRoof>> ParseRoofsFile(const std::string& text,
                                                          const std::string& path);

// The report as a human reads it.
std::string FormatFleetReport(const v1::FleetReportResponse& report);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_FLEET_EVENTS_COMMAND_H_
