// paradnn: the command-line client. Submits sweep files, follows them,
// lists results and workers, and runs everything locally with `paradnn
// local`.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/analyze_command.h"
#include "client/analyze_flags.h"
#include "client/bisect_command.h"
#include "client/commands.h"
#include "client/compare_command.h"
#include "client/did_you_mean.h"
#include "client/fleet_events_command.h"
#include "client/history_command.h"
#include "client/interrupt.h"
#include "client/local_runner.h"
#include "client/output_format.h"
#include "client/predict_command.h"
#include "client/presets.h"
#include "client/tune_command.h"
#include "common/address.h"
#include "common/auth.h"
#include "common/config_sources.h"
#include "common/human_units.h"
#include "common/logging.h"
#include "common/shipped_main.h"
#include "common/version.h"
#include "model/family_tables.h"
#include "model/sweep.h"

namespace {

using namespace paradnn;  // NOLINT(build/namespaces): main only
using client::OutputFormat;

constexpr const char* kDescription =
    "paradnn runs the ParaDnn benchmark methodology: sweeps of parameterized models,\n"
    "each trained for a few timed steps on CPU/GPU workers, every measurement stored.\n\n"
    "Exit status: 0 success (for watch/local: every job has a result); 1 a sweep finished\n"
    "with jobs that failed or were cancelled; 2 bad input (sweep file, flags, unknown sweep,\n"
    "request refused by the coordinator); 3 the coordinator could not be reached; 130\n"
    "interrupted.";

struct Flags {
  std::string coordinator;
  common::ClientSecurityFlags security;
  std::string log_level = "warn";
  std::string log_format = "text";
  double timeout_seconds = 30;
  std::string file;
  std::string preset;
  bool run_predicted_oom = false;
  int64_t sweep_id = 0;
  bool quiet = false;
  int64_t max_jobs = model::kDefaultMaxJobs;
  std::string format = "table";
  bool samples = false;
  bool jobs_view = false;
  bool ops_view = false;
  size_t top_ops = 10;
  std::string db_path = "paradnn.db";
  int workers = 1;
  bool one_at_a_time = false;
  bool resume = false;                 // local --resume
  std::string budget;                  // submit, local: --budget DURATION
  double budget_seconds = 0;           // parsed from `budget`
  std::string target_interval;         // submit, local: --target-interval FRACTION
  double target_fraction = 0;          // parsed from `target_interval`
  bool fresh = false;                  // submit, local: --fresh
  std::vector<int64_t> result_sweeps;  // results SWEEP...
  bool wide = false;                   // results, local: --wide
  std::string results_db;              // results --db FILE
  std::string dashboard_listen;        // local: --dashboard[=HOST:PORT]
  client::AnalyzeFlags analyze;        // analyze KIND and report
  client::CompareFlags compare;
  client::HistoryFlags history;
  client::BisectFlags bisect;
  client::TuneFlags tune;
  std::string out_dir = "paradnn-report";
  // predict
  std::string predict_config;
  int neighbours = 3;
  // fleet
  int64_t fleet_sweep = 0;
  double fleet_window = 0;
  std::string fleet_format = "table";
  client::FleetEventFlags fleet_events;
};

void AddWide(CLI::App* command, Flags* flags) {
  command->add_flag("--wide", flags->wide,
                    "Table: every column (step-time spread, stop reason, executed GF/s, HFU, "
                    "threads, worker, error); by default about 120 columns, with the columns "
                    "equal in every row on one line and each ! explained under the table");
}

CLI::Option* AddSweepId(CLI::App* command, Flags* flags, bool required) {
  CLI::Option* option =
      command->add_option("SWEEP", flags->sweep_id, "Sweep id (as printed by submit or status)")
          ->check(client::PositiveInteger("a sweep id"));
  if (required) option->required();
  return option;
}

// FILE or --preset NAME (exactly one; checked after parsing so that the
// message can list the presets), and --run-predicted-oom.
void AddSweepSource(CLI::App* command, Flags* flags) {
  CLI::Option* file =
      command->add_option("FILE", flags->file, "Sweep file (- reads standard input)");
  command
      ->add_option("--preset", flags->preset,
                   absl::StrCat("A built-in sweep instead of FILE: ", client::AllowedPresets(),
                                " (paradnn presets lists them)"))
      ->excludes(file);
  command->add_option("--budget", flags->budget,
                      "Measure within this much time (90s, 30m, 1h, 1h30m) and predict the rest: "
                      "a space-filling design, then the configurations the model is least sure "
                      "of; unmeasured ones get a predicted result with an interval "
                      "(docs/prediction.md)");
  command->add_option("--target-interval", flags->target_interval,
                      "Repeat each configuration, in shuffled rounds, until the 95 % interval of "
                      "its mean step time is within +- this (3% or 0.03), at most `repeats` times "
                      "(default 10); results say which configurations reached it "
                      "(docs/sweep-files.md)");
  command->add_flag("--fresh", flags->fresh,
                    "Measure every configuration, even one an earlier sweep measured on a "
                    "platform of the same fingerprint with the same harness and settings "
                    "(default: take that result; docs/prediction.md, \"Reusing results\")");
  command->add_flag("--run-predicted-oom", flags->run_predicted_oom,
                    "Run configurations whose memory estimate exceeds a worker's memory anyway "
                    "(default: record them as PREDICTED_OOM without running them)");
}

CLI::Option* AddFormat(CLI::App* command, Flags* flags) {
  return command
      ->add_option("--format", flags->format,
                   "table (aligned, human units), csv (RFC 4180, raw numbers) or json (an "
                   "array of objects)")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
}

// The subcommands, as parsed.
struct Commands {
  CLI::App* submit;
  CLI::App* watch;
  CLI::App* status;
  CLI::Option* status_id;
  CLI::App* results;
  CLI::App* workers;
  CLI::App* fleet;
  client::FleetEventCommands fleet_events;
  CLI::App* cancel;
  CLI::App* local;
  CLI::App* presets;
  CLI::App* families;
  CLI::App* analyze;
  CLI::App* report;
  CLI::App* compare;
  CLI::App* history;
  CLI::App* bisect;
  CLI::App* tune;
  CLI::App* predict;

  // Commands that need no coordinator address or client credentials
  // (`local` runs its own coordinator).
  bool Offline() const { return local->parsed() || presets->parsed() || families->parsed(); }
};

void AddGlobalOptions(CLI::App& app, Flags* flags) {
  app.fallthrough();
  app.require_subcommand(1);
  app.set_version_flag("--version", common::kVersion);
  app.add_option(
      "--coordinator", flags->coordinator,
      absl::StrCat("Coordinator address: HOST:PORT, [V6]:PORT or unix:PATH (default: $",
                   common::kCoordinatorEnv, ", else ", common::kDefaultCoordinatorAddress, ")"));
  common::AddClientSecurityOptions(&app, &flags->security, "client");
  app.add_option("--log-level", flags->log_level, common::kLogLevels)->capture_default_str();
  app.add_option("--log-format", flags->log_format, common::kLogFormats)->capture_default_str();
  app.add_option("--timeout", flags->timeout_seconds, "Deadline of each request, seconds")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
}

CLI::Option* AddMaxJobs(CLI::App* command, Flags* flags) {
  return command
      ->add_option("--max-jobs", flags->max_jobs,
                   "Refuse a sweep that expands to more configurations than this")
      ->check(client::PositiveInteger("a job count"))
      ->capture_default_str();
}

// submit, watch, status, cancel and local: a sweep's life.
void AddSweepCommands(CLI::App& app, Flags* flags, Commands* commands) {
  commands->submit = app.add_subcommand(
      "submit",
      "Check a sweep file (YAML, see docs/sweep-files.md) or a preset and submit it to the\n"
      "coordinator. Prints the new sweep's id, job count and the coordinator's estimates\n"
      "(model FLOPs, parameters, memory); nothing is sent if the sweep is invalid.");
  AddSweepSource(commands->submit, flags);
  commands->submit->add_flag("-q,--quiet", flags->quiet, "Print only the new sweep's id");
  AddMaxJobs(commands->submit, flags);

  commands->watch = app.add_subcommand(
      "watch",
      "Follow a sweep until it finishes, with a progress bar and ETA on stderr.\n"
      "Exits 0 when every job has a result, 1 when some failed or were cancelled.");
  AddSweepId(commands->watch, flags, true);

  commands->status = app.add_subcommand(
      "status",
      "List every sweep (id, name, state, done/total, ok, elapsed), or one sweep in "
      "detail");
  commands->status_id = AddSweepId(commands->status, flags, false);
  AddFormat(commands->status, flags);

  commands->cancel = app.add_subcommand(
      "cancel", "Cancel a sweep: pending jobs are cancelled, running ones stopped");
  AddSweepId(commands->cancel, flags, true);

  CLI::App* local = commands->local = app.add_subcommand(
      "local",
      "Run a sweep file on this machine with no set-up: starts a private paradnn-coordinator\n"
      "(Unix socket, SQLite file --db) and --workers paradnn-worker processes, submits the\n"
      "sweep, shows progress, prints the results and stops them again. The database stays:\n"
      "`paradnn-coordinator --db FILE` serves the same results later. Ctrl-C stops the run\n"
      "and leaves the sweep interrupted; the same command again (or --resume) continues it.");
  AddSweepSource(local, flags);
  local->add_option("--db", flags->db_path, "SQLite database file (kept)")->capture_default_str();
  local->add_flag("--resume", flags->resume,
                  "Continue the newest interrupted sweep of --db (Ctrl-C leaves a sweep "
                  "interrupted; running the same sweep file again continues it too)");
  local
      ->add_option("--workers", flags->workers,
                   "Local workers to start; with several, each gets its own --cpus (this "
                   "process's CPUs split among them) and can join data-parallel gangs "
                   "(params.hosts <= --workers)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  local->add_flag("--one-at-a-time", flags->one_at_a_time,
                  "With several --workers, time one job at a time (a gang's ranks together): "
                  "no job measured beside another on this host, as a scaling sweep's 1-rank "
                  "baselines need (they share memory bandwidth and caches otherwise)");
  local->add_flag("--dashboard{127.0.0.1:0}", flags->dashboard_listen,
                  "Serve the web dashboard while the sweep runs (docs/dashboard.md), on "
                  "127.0.0.1 and a free port, or --dashboard=HOST:PORT; the address is printed");
  AddFormat(local, flags);
  AddWide(local, flags);
  AddMaxJobs(local, flags);
}

// results, workers, fleet, presets, families: what is stored and known.
void AddListingCommands(CLI::App& app, Flags* flags, Commands* commands) {
  CLI::App* results = commands->results = app.add_subcommand(
      "results",
      "Print one row per job of the sweeps given: job id, its hyper-parameters (layer, node, "
      "...),\n"
      "precision, optimizer, examples/s, step-time statistics, GFLOP/s, outcome, worker.");
  results->add_option("SWEEP", flags->result_sweeps, "Sweep ids (one or more), in one table")
      ->required()
      ->check(client::PositiveInteger("a sweep id"));
  AddFormat(results, flags);
  results->add_flag("--samples", flags->samples,
                    "Include every timed step's seconds (json: step_seconds arrays; csv: a "
                    "step_seconds column, space-separated)");
  CLI::Option* jobs_opt = results->add_flag(
      "--jobs", flags->jobs_view,
      "One row per job even when the sweep has repeats (by default such a sweep prints one row "
      "per configuration with the spread of examples/s across its repeats)");
  results
      ->add_flag("--ops", flags->ops_view,
                 "The operator breakdown of profiled results (sweeps with profile: true): "
                 "per job, the operators with the most self time")
      ->excludes(jobs_opt);
  results->add_option("--top", flags->top_ops, "With --ops: operators per job (0 = all)")
      ->capture_default_str();
  AddWide(results, flags);
  client::AddDbFile(results, &flags->results_db);

  commands->workers = app.add_subcommand(
      "workers",
      "List the workers the coordinator knows: id, device, state, host, jobs done, "
      "BLAS, LibTorch, last seen");
  AddFormat(commands->workers, flags);

  CLI::App* fleet = commands->fleet = app.add_subcommand(
      "fleet",
      "Fleet goodput per device kind: scheduling (busy / connected worker time), runtime (timed "
      "steps / job wall time), program (HFU) and their product (docs/observability.md)");
  fleet
      ->add_option("--sweep", flags->fleet_sweep,
                   "One sweep over its lifetime (0 = the whole fleet)")
      ->check(CLI::NonNegativeNumber);
  fleet
      ->add_option("--window", flags->fleet_window,
                   "Whole fleet: the last N seconds (0 = all history)")
      ->check(CLI::NonNegativeNumber);
  fleet
      ->add_option("--format", flags->fleet_format,
                   "table, csv (a row per device kind and the total, raw numbers) or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  commands->fleet_events = client::AddFleetEventCommands(fleet, &flags->fleet_events);

  commands->presets = app.add_subcommand(
      "presets",
      "List the built-in sweeps (the paper's Table 2 grids and quick) with their family and\n"
      "job count; submit one with --preset NAME");

  commands->families = app.add_subcommand(
      "families",
      "Print every model family's sweep keys (integer parameters and options) with their\n"
      "defaults and allowed values, as in docs/sweep-files.md");
}

// analyze KIND (one per client::AnalysisKinds() entry) and report.
void AddAnalysisCommands(CLI::App& app, Flags* flags, Commands* commands) {
  commands->analyze = app.add_subcommand(
      "analyze",
      "Compute one of the ParaDnn analyses from stored results on the coordinator and print it\n"
      "(table, csv or json); --plot FILE.png|svg draws the figure with gnuplot.");
  commands->analyze->require_subcommand(1);
  client::AddAnalyzeKinds(commands->analyze, &flags->analyze, &flags->format);

  commands->report = app.add_subcommand(
      "report",
      "Write one self-contained HTML page (DIR/index.html) with every analysis that applies to\n"
      "the sweeps: heat maps, sensitivities, roofline, box plots, speedups, scaling");
  client::AddSweepIds(commands->report, &flags->analyze.sweep_ids);
  commands->report->add_option("--out", flags->out_dir, "Output folder")->capture_default_str();
  commands->report->add_flag("--include-predicted", flags->analyze.include_predicted,
                             "Also the predicted results of budgeted sweeps: hatched heat-map "
                             "cells with their interval on hover, counted in every figure");
  client::AddDbFile(commands->report, &flags->analyze.db);
  commands->compare = client::AddCompareCommand(app, &flags->compare, &flags->format);
  commands->history = client::AddHistoryCommand(app, &flags->history, &flags->format);
  commands->bisect = client::AddBisectCommand(app, &flags->bisect, &flags->format);
  commands->tune = client::AddTuneCommand(app, &flags->tune);

  CLI::App* predict = commands->predict = app.add_subcommand(
      "predict",
      "One configuration's step time as a sweep's model predicts it (fitted on the sweep's\n"
      "measured results against the platform's calibrated roofs), with its 90 % interval and\n"
      "the nearest measured configurations (docs/prediction.md)");
  AddSweepId(predict, flags, true);
  predict
      ->add_option("--config", flags->predict_config,
                   "KEY=VALUE,... e.g. layer=16,node=4096 (hyper-parameters the sweep holds at "
                   "one value may be left out; precision=, optimizer= too)")
      ->required();
  predict->add_option("--neighbours", flags->neighbours, "Nearest measured configurations to show")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  AddFormat(predict, flags);
}

// After parsing: logging, the coordinator's address and credentials, the
// output format and the sweep source. kExitOk when the command may run,
// else the exit status (the message printed).
int PrepareContext(const Flags& flags, const Commands& commands, client::CommandContext* ctx,
                   OutputFormat* format) {
  if (absl::Status s = common::ConfigureLogging("paradnn", flags.log_level, flags.log_format);
      !s.ok()) {
    std::cerr << "paradnn: " << s.message() << "\n";
    return client::kExitUsage;
  }
  absl::StatusOr<std::string> address = common::ResolveCoordinatorAddress(flags.coordinator);
  if (!commands.Offline()) {
    if (!address.ok()) {
      std::cerr << "paradnn: " << address.status().message() << "\n";
      return client::kExitUsage;
    }
    absl::StatusOr<common::ClientSecurity> security = common::LoadClientSecurity(flags.security);
    if (!security.ok()) {
      std::cerr << "paradnn: " << security.status().message() << "\n";
      return client::kExitUsage;
    }
    client::SetDefaultClientSecurity(*std::move(security));
  }
  ctx->address = address.ok() ? *address : "";
  ctx->timeout_seconds = flags.timeout_seconds;
  ctx->out = &std::cout;
  ctx->err = &std::cerr;
  ctx->err_is_terminal = isatty(STDERR_FILENO) == 1;

  absl::StatusOr<OutputFormat> parsed = client::ParseOutputFormat(flags.format);
  if (!parsed.ok()) {
    std::cerr << "paradnn: " << parsed.status().message() << "\n";
    return client::kExitUsage;
  }
  *format = *parsed;
  if (flags.samples && *format == OutputFormat::kTable) {
    std::cerr << "paradnn: --samples needs --format csv or json\n";
    return client::kExitUsage;
  }
  const bool resume_alone =
      commands.local->parsed() && flags.resume && flags.file.empty() && flags.preset.empty();
  if ((commands.submit->parsed() || commands.local->parsed()) && !resume_alone &&
      flags.file.empty() == flags.preset.empty()) {
    std::cerr << "paradnn: give a sweep FILE or --preset NAME (presets: "
              << client::AllowedPresets() << ")\n";
    return client::kExitUsage;
  }
  return client::kExitOk;
}

// --budget DURATION into seconds; kExitOk, or kExitUsage (the message printed).
int ParseBudget(Flags* flags) {
  if (flags->budget.empty()) return client::kExitOk;
  absl::StatusOr<double> budget = common::ParseDurationSeconds(flags->budget);
  if (!budget.ok()) {
    std::cerr << "paradnn: --budget: " << budget.status().message() << "\n";
    return client::kExitUsage;
  }
  flags->budget_seconds = *budget;
  return client::kExitOk;
}

// --target-interval FRACTION into a fraction; kExitOk, or kExitUsage (the
// message printed). Its range is checked with the sweep.
int ParseTargetInterval(Flags* flags) {
  if (flags->target_interval.empty()) return client::kExitOk;
  absl::StatusOr<double> fraction = common::ParseFraction(flags->target_interval);
  if (!fraction.ok() || !(*fraction > 0)) {
    std::cerr << "paradnn: --target-interval: "
              << (fraction.ok() ? "must be above 0" : fraction.status().message()) << "\n";
    return client::kExitUsage;
  }
  flags->target_fraction = *fraction;
  return client::kExitOk;
}

client::LocalOptions LocalOptionsOf(const Flags& flags, const client::SweepSource& source,
                                    OutputFormat format) {
  client::LocalOptions options;
  options.sweep = source;
  options.db_path = flags.db_path;
  options.workers = flags.workers;
  options.one_at_a_time = flags.one_at_a_time;
  options.dashboard_listen = flags.dashboard_listen;
  options.resume = flags.resume;
  options.wide = flags.wide;
  options.format = format;
  options.max_jobs = flags.max_jobs;
  options.log_level = flags.log_level;
  return options;
}

// Runs the parsed command.
int Dispatch(const Flags& flags, const Commands& commands, const client::CommandContext& ctx,
             OutputFormat format) {
  const client::SweepSource source{flags.file,           flags.preset, flags.run_predicted_oom,
                                   flags.budget_seconds, flags.fresh,  flags.target_fraction};
  if (commands.presets->parsed()) return client::RunPresets(ctx);
  if (commands.families->parsed()) {
    std::cout << model::FamilyReferenceMarkdown() << std::flush;
    return client::kExitOk;
  }
  if (commands.submit->parsed()) {
    return client::RunSubmit(ctx, source, flags.quiet, flags.max_jobs);
  }
  if (commands.watch->parsed()) return client::RunWatch(ctx, flags.sweep_id);
  if (commands.status->parsed()) {
    return client::RunStatus(
        ctx,
        commands.status_id->count() > 0 ? std::optional<int64_t>(flags.sweep_id) : std::nullopt,
        format);
  }
  if (commands.results->parsed()) {
    client::ResultsView view;
    view.kind = flags.ops_view    ? client::ResultsView::kOps
                : flags.jobs_view ? client::ResultsView::kJobs
                                  : client::ResultsView::kAuto;
    view.samples = flags.samples;
    view.top_ops = flags.top_ops;
    view.wide = flags.wide;
    return client::RunResults(ctx, flags.result_sweeps, format, view, flags.results_db);
  }
  if (commands.workers->parsed()) return client::RunWorkers(ctx, format);
  if (commands.fleet_events.ingest->parsed()) {
    return client::RunFleetIngest(ctx, flags.fleet_events);
  }
  if (commands.fleet_events.report->parsed()) {
    return client::RunFleetReport(ctx, flags.fleet_events);
  }
  if (commands.fleet->parsed()) {
    return client::RunFleet(ctx, flags.fleet_sweep, flags.fleet_window, flags.fleet_format);
  }
  if (commands.history->parsed()) return client::RunHistory(ctx, flags.history, format);
  if (commands.bisect->parsed()) {
    // A coordinator named measures; without one, a private one and a local worker.
    const bool named =
        !flags.coordinator.empty() || std::getenv(common::kCoordinatorEnv) != nullptr;
    return client::RunBisect(ctx, flags.bisect, named, format);
  }
  if (commands.compare->parsed()) {
    absl::StatusOr<v1::AnalyzeRequest> request = client::BuildCompareRequest(flags.compare);
    if (!request.ok()) {
      std::cerr << "paradnn: " << request.status().message() << "\n";
      return client::kExitUsage;
    }
    return client::RunAnalyze(ctx, *request, format, /*plot_path=*/"", flags.compare.db);
  }
  for (CLI::App* kind : commands.analyze->get_subcommands()) {
    absl::StatusOr<v1::AnalyzeRequest> request =
        client::BuildAnalyzeRequest(kind->get_name(), flags.analyze);
    if (!request.ok()) {
      std::cerr << "paradnn: " << request.status().message() << "\n";
      return client::kExitUsage;
    }
    return client::RunAnalyze(ctx, *request, format, flags.analyze.plot, flags.analyze.db);
  }
  if (commands.report->parsed())
    return client::RunReport(ctx, flags.analyze.sweep_ids, flags.out_dir, flags.analyze.db,
                             flags.analyze.include_predicted);
  if (commands.cancel->parsed()) return client::RunCancel(ctx, flags.sweep_id);
  if (commands.predict->parsed()) {
    return client::RunPredict(ctx, flags.sweep_id, flags.predict_config, flags.neighbours, format);
  }
  if (commands.local->parsed()) return client::RunLocal(ctx, LocalOptionsOf(flags, source, format));
  if (commands.tune->parsed()) return client::RunTune(ctx, flags.tune, flags.log_level);
  return client::kExitUsage;
}

int Run(int argc, char** argv) {
  // Before any thread starts: signals are then received by the watcher only.
  client::InterruptWatcher interrupts;

  Flags flags;
  Commands commands{};
  CLI::App app(kDescription, "paradnn");
  AddGlobalOptions(app, &flags);
  AddSweepCommands(app, &flags, &commands);
  AddListingCommands(app, &flags, &commands);
  AddAnalysisCommands(app, &flags, &commands);
  common::AddConfigSources(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code == 0) return 0;
    const std::string hint =
        client::DidYouMean(app, std::vector<std::string>(argv + 1, argv + argc));
    if (!hint.empty()) std::cerr << "paradnn: " << hint << "\n";
    return client::kExitUsage;
  }
  client::CommandContext ctx;
  ctx.interrupts = &interrupts;
  OutputFormat format = OutputFormat::kTable;
  if (int refused = PrepareContext(flags, commands, &ctx, &format); refused != client::kExitOk) {
    return refused;
  }
  if (int refused = ParseBudget(&flags); refused != client::kExitOk) return refused;
  if (int refused = ParseTargetInterval(&flags); refused != client::kExitOk) return refused;
  return Dispatch(flags, commands, ctx, format);
}

}  // namespace

int main(int argc, char** argv) {
  // RunShippedMain's exit code for a throw, 1, is kExitFailed.
  static_assert(paradnn::client::kExitFailed == 1);
  return paradnn::common::RunShippedMain("paradnn", Run, argc, argv);
}
