// paradnn-coordinator: owns the sweep plan and every result in one SQLite
// file, leases jobs to workers over WorkerGateway and answers the CLI over
// Coordinator. The process is server/coordinator_server.h; this file is its
// flags.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/config_sources.h"
#include "common/logging.h"
#include "common/shipped_main.h"
#include "common/version.h"
#include "server/coordinator_server.h"
#include "server/listener_restart.h"

namespace {

using paradnn::server::CoordinatorServer;
using paradnn::server::CoordinatorServerOptions;

// The scheduler's flags (SchedulerOptions).
void AddSchedulingFlags(CLI::App& app, CoordinatorServerOptions* options) {
  app.add_option("--heartbeat-ms", options->heartbeat_ms, "Interval workers send heartbeats at")
      ->check(CLI::Range(int64_t{50}, int64_t{600'000}))
      ->capture_default_str();
  app.add_option("--lease-timeout-ms", options->lease_timeout_ms,
                 "A job whose worker is silent this long goes back to the queue")
      ->check(CLI::Range(int64_t{200}, int64_t{86'400'000}))
      ->capture_default_str();
  app.add_option("--max-attempts", options->max_attempts,
                 "Infrastructure failures (lost workers) before a job is FAILED")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_flag("--one-measurement-per-host", options->one_measurement_per_host,
               "Lease one job at a time per host (a gang's ranks together), whatever the "
               "workers' --cpus: for one-host emulations of several hosts, where jobs side by side "
               "share memory bandwidth and caches");
}

// A flat list of flag definitions, one per option: long, not complex.
void AddFlags(CLI::App& app, CoordinatorServerOptions* options) {
  app.add_option("--listen", options->listen,
                 "Address to serve on: HOST:PORT (port 0 picks a free port) or unix:PATH. Beyond "
                 "loopback it needs token files, TLS or --insecure (docs/security.md)")
      ->capture_default_str();
  app.add_option("--db", options->db_path, "SQLite database file (created if missing)")
      ->capture_default_str();
  app.add_flag("--read-only", options->read_only,
               "Serve the --db file's sweeps, results and analyses without changing it (no lock: "
               "its own coordinator may be running; no workers, no submissions). What "
               "`paradnn analyze --db` and `paradnn report --db` start");
  app.add_flag("--exit-with-stdin", options->exit_with_stdin,
               "Stop as on SIGTERM when standard input (a pipe) reaches its end: started by one "
               "process (Python's open_db), the coordinator ends when it does");
  app.add_option("--address-file", options->address_file,
                 "After listening, write the bound address to this file (for scripts and tests)");
  app.add_option("--max-jobs", options->max_jobs,
                 "Refuse sweeps that expand to more jobs than this")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}))
      ->capture_default_str();
  AddSchedulingFlags(app, options);
  app.add_option("--shutdown-grace-seconds", options->shutdown_grace_seconds,
                 "On SIGTERM, how long workers may take to finish the jobs they are running")
      ->capture_default_str();
  app.add_option("--max-message-bytes", options->max_message_bytes,
                 "Largest gRPC message accepted or sent, before room for a model upload "
                 "(the limit is the larger of this and --max-model-bytes + 1 MiB)")
      ->check(CLI::Range(int64_t{64} << 10, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--max-model-bytes", options->max_model_bytes,
                 "Largest TorchScript model file (family torchscript) a sweep may upload")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--reuse-spot-check-every", options->reuse_spot_check_every,
                 "Measure again one in this many results that reuse would hand a job: two "
                 "results that disagree are both disputed, and a worker two others contradict "
                 "is refused as a source (docs/security.md; 1 = every one, 0 = none)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_flag("--reflection", options->reflection, "Enable gRPC server reflection");
  app.add_option("--worker-token-file", options->worker_token_file,
                 "Require a token on every call: workers' tokens, one per line (# comments), "
                 "file not readable by every user; WorkerGateway accepts only these. Needs "
                 "--client-token-file")
      ->check(CLI::ExistingFile);
  app.add_option("--client-token-file", options->client_token_file,
                 "Clients' (CLI) tokens, one per line; the Coordinator service accepts only "
                 "these. Needs --worker-token-file")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-cert", options->tls.cert,
                 "Serve TLS with this certificate chain (PEM); needs --tls-key")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", options->tls.key,
                 "The certificate's private key (PEM, not readable by every user)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-ca", options->tls.client_ca,
                 "Require every caller to present a certificate signed by this CA (PEM); needs "
                 "--tls-cert")
      ->check(CLI::ExistingFile);
  app.add_flag("--insecure", options->insecure,
               "Allow listening beyond loopback without tokens or TLS (logs a warning); "
               "without it such a --listen is refused");
  app.add_option("--metrics-listen", options->metrics_listen,
                 "Serve /metrics (Prometheus), /healthz, /readyz and the dashboard (/, with its "
                 "JSON API under /api/v1/, docs/dashboard.md) over plain HTTP on HOST:PORT, e.g. "
                 "127.0.0.1:9464 (port 0 picks one); off when empty. The API asks for a client "
                 "token whenever the coordinator requires tokens, and beyond loopback serves "
                 "only then (or with --insecure): keep it on loopback or a private network "
                 "(docs/observability.md)");
  app.add_option("--metrics-address-file", options->metrics_address_file,
                 "After the metrics endpoint listens, write its HOST:PORT to this file");
}

// The whole process; main runs it through common::RunShippedMain.
int RunProcess(int argc, char** argv) {
  CoordinatorServerOptions options;
  std::string log_level = "info";
  std::string log_format = "text";
  CLI::App app{
      "paradnn-coordinator: keeps sweeps and results in SQLite and leases jobs to workers"};
  AddFlags(app, &options);
  app.add_option("--log-level", log_level, paradnn::common::kLogLevels)->capture_default_str();
  app.add_option("--log-format", log_format, paradnn::common::kLogFormats)->capture_default_str();
  app.set_version_flag("--version", paradnn::common::kVersion);
  paradnn::common::AddConfigSources(&app);
  CLI11_PARSE(app, argc, argv);
  const std::vector<std::string> command_line(argv, argv + argc);

  if (absl::Status s =
          paradnn::common::ConfigureLogging("paradnn-coordinator", log_level, log_format);
      !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options);
  if (!server.ok()) {
    spdlog::critical("{}", std::string(server.status().message()));
    // 2: the flags cannot work; 1: the machine or the file refused.
    return server.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  const CoordinatorServer::Ending ending = (*server)->Run();
  if (ending == CoordinatorServer::Ending::kRestartInPlace) {
    const std::vector<std::string> arguments = paradnn::server::ArgumentsForRestart(
        command_line, (*server)->address(), (*server)->metrics_address());
    server->reset();  // releases the database file's lock for the new process
    spdlog::warn("restarting in place: {}", absl::StrJoin(arguments, " "));
    const std::string error = paradnn::server::ExecuteInPlace(arguments);
    spdlog::critical(
        "could not restart in place ({}); exiting for the service manager to "
        "restart",
        error);
    return 1;
  }
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return paradnn::common::RunShippedMain("paradnn-coordinator", RunProcess, argc, argv);
}
