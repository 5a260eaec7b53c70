// paradnn-coordinator: owns the sweep plan and every result in one SQLite
// file, leases jobs to workers over WorkerGateway and answers the CLI over
// Coordinator.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "common/address.h"
#include "common/auth.h"
#include "common/clock.h"
#include "common/config_sources.h"
#include "common/logging.h"
#include "common/version.h"
#include "db/database.h"
#include "server/call_authorizer.h"
#include "server/coordinator_metrics.h"
#include "server/coordinator_service.h"
#include "server/listener_restart.h"
#include "server/metrics_http.h"
#include "server/scheduler.h"
#include "server/worker_gateway_service.h"

namespace {

struct Flags {
  std::string listen = paradnn::common::kDefaultCoordinatorAddress;
  std::string db_path = "paradnn.db";
  std::string address_file;
  std::string log_level = "info";
  std::string log_format = "text";
  std::string metrics_listen;
  std::string metrics_address_file;
  int64_t max_jobs = 100000;
  int64_t heartbeat_ms = 2000;
  int64_t lease_timeout_ms = 15000;
  int max_attempts = 3;
  int64_t max_message_bytes = 64 << 20;
  int64_t max_model_bytes = int64_t{256} << 20;
  double shutdown_grace_seconds = 5;
  bool reflection = false;
  std::string worker_token_file;
  std::string client_token_file;
  paradnn::common::ServerTlsFlags tls;
  bool insecure = false;
};

// The address clients should use: port 0 replaced by the bound port.
std::string BoundAddress(const std::string& listen, int port) {
  if (absl::StartsWith(listen, "unix:")) return listen;
  const size_t colon = listen.rfind(':');
  return listen.substr(0, colon + 1) + std::to_string(port);
}

// The token check the services apply: none without token files, else both
// roles' tokens (one file without the other would leave a service open).
absl::StatusOr<paradnn::server::CallAuthorizer> LoadAuthorizer(const Flags& flags) {
  if (flags.worker_token_file.empty() && flags.client_token_file.empty()) {
    return paradnn::server::CallAuthorizer();
  }
  if (flags.worker_token_file.empty() || flags.client_token_file.empty()) {
    return absl::InvalidArgumentError(
        "--worker-token-file and --client-token-file go together: with only one, the other "
        "service would accept calls without a token");
  }
  absl::StatusOr<std::vector<paradnn::common::WorkerToken>> worker =
      paradnn::common::ReadWorkerTokenFile(flags.worker_token_file, "--worker-token-file");
  if (!worker.ok()) return worker.status();
  absl::StatusOr<std::vector<std::string>> client =
      paradnn::common::ReadTokenFile(flags.client_token_file, "--client-token-file");
  if (!client.ok()) return client.status();
  return paradnn::server::CallAuthorizer(*std::move(worker), *std::move(client));
}

bool WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!(out << text << "\n")) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{
      "paradnn-coordinator: keeps sweeps and results in SQLite and leases jobs to workers"};
  app.add_option("--listen", flags.listen,
                 "Address to serve on: HOST:PORT (port 0 picks a free port) or unix:PATH. Beyond "
                 "loopback it needs token files, TLS or --insecure (docs/security.md)")
      ->capture_default_str();
  app.add_option("--db", flags.db_path, "SQLite database file (created if missing)")
      ->capture_default_str();
  app.add_option("--address-file", flags.address_file,
                 "After listening, write the bound address to this file (for scripts and tests)");
  app.add_option("--max-jobs", flags.max_jobs, "Refuse sweeps that expand to more jobs than this")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--heartbeat-ms", flags.heartbeat_ms, "Interval workers send heartbeats at")
      ->check(CLI::Range(int64_t{50}, int64_t{600'000}))
      ->capture_default_str();
  app.add_option("--lease-timeout-ms", flags.lease_timeout_ms,
                 "A job whose worker is silent this long goes back to the queue")
      ->check(CLI::Range(int64_t{200}, int64_t{86'400'000}))
      ->capture_default_str();
  app.add_option("--max-attempts", flags.max_attempts,
                 "Infrastructure failures (lost workers) before a job is FAILED")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--shutdown-grace-seconds", flags.shutdown_grace_seconds,
                 "On SIGTERM, how long workers may take to finish the jobs they are running")
      ->capture_default_str();
  app.add_option("--max-message-bytes", flags.max_message_bytes,
                 "Largest gRPC message accepted or sent, before room for a model upload "
                 "(the limit is the larger of this and --max-model-bytes + 1 MiB)")
      ->check(CLI::Range(int64_t{64} << 10, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--max-model-bytes", flags.max_model_bytes,
                 "Largest TorchScript model file (family torchscript) a sweep may upload")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  app.add_flag("--reflection", flags.reflection, "Enable gRPC server reflection");
  app.add_option("--worker-token-file", flags.worker_token_file,
                 "Require a token on every call: workers' tokens, one per line (# comments), "
                 "file not readable by every user; WorkerGateway accepts only these. Needs "
                 "--client-token-file")
      ->check(CLI::ExistingFile);
  app.add_option("--client-token-file", flags.client_token_file,
                 "Clients' (CLI) tokens, one per line; the Coordinator service accepts only "
                 "these. Needs --worker-token-file")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-cert", flags.tls.cert,
                 "Serve TLS with this certificate chain (PEM); needs --tls-key")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", flags.tls.key,
                 "The certificate's private key (PEM, not readable by every user)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-ca", flags.tls.client_ca,
                 "Require every caller to present a certificate signed by this CA (PEM); needs "
                 "--tls-cert")
      ->check(CLI::ExistingFile);
  app.add_flag("--insecure", flags.insecure,
               "Allow listening beyond loopback without tokens or TLS (logs a warning); "
               "without it such a --listen is refused");
  app.add_option("--log-level", flags.log_level, paradnn::common::kLogLevels)
      ->capture_default_str();
  app.add_option("--log-format", flags.log_format, paradnn::common::kLogFormats)
      ->capture_default_str();
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "Serve /metrics (Prometheus), /healthz and /readyz over plain HTTP on HOST:PORT, "
                 "e.g. 127.0.0.1:9464 (port 0 picks one); off when empty. The pages carry no "
                 "secrets but no token either: keep it on loopback or a private network "
                 "(docs/observability.md)");
  app.add_option("--metrics-address-file", flags.metrics_address_file,
                 "After the metrics endpoint listens, write its HOST:PORT to this file");
  app.set_version_flag("--version", paradnn::common::kVersion);
  paradnn::common::AddConfigSources(&app);
  CLI11_PARSE(app, argc, argv);
  const std::vector<std::string> command_line(argv, argv + argc);

  if (absl::Status s = paradnn::common::ConfigureLogging("paradnn-coordinator", flags.log_level,
                                                         flags.log_format);
      !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (absl::Status s = paradnn::common::ValidateAddress(flags.listen, "--listen"); !s.ok()) {
    spdlog::critical("{}", std::string(s.message()));
    return 2;
  }
  if (flags.lease_timeout_ms <= flags.heartbeat_ms) {
    spdlog::critical("--lease-timeout-ms ({}) must be greater than --heartbeat-ms ({})",
                     flags.lease_timeout_ms, flags.heartbeat_ms);
    return 2;
  }

  absl::StatusOr<paradnn::server::CallAuthorizer> authorizer = LoadAuthorizer(flags);
  if (!authorizer.ok()) {
    spdlog::critical("{}", std::string(authorizer.status().message()));
    return 2;
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      paradnn::common::LoadServerCredentials(flags.tls);
  if (!credentials.ok()) {
    spdlog::critical("{}", std::string(credentials.status().message()));
    return 2;
  }
  const bool tls = !flags.tls.cert.empty();
  if (!paradnn::common::IsLoopbackAddress(flags.listen)) {
    if (!authorizer->requires_tokens() && !tls) {
      if (!flags.insecure) {
        spdlog::critical(
            "refusing to listen on {} beyond loopback without authentication: give "
            "--worker-token-file and --client-token-file, or --tls-cert and --tls-key, or "
            "--insecure to accept calls from anyone who can reach it",
            flags.listen);
        return 2;
      }
      spdlog::warn(
          "--insecure: listening on {} beyond loopback without tokens or TLS; anyone "
          "who can reach it can submit sweeps and act as a worker",
          flags.listen);
    } else if (!authorizer->requires_tokens() && flags.tls.client_ca.empty()) {
      spdlog::warn(
          "listening on {} with TLS but no tokens or client certificates: calls are "
          "encrypted, but anyone who can reach it can make them",
          flags.listen);
    } else if (!tls) {
      spdlog::warn(
          "listening on {} with tokens in plaintext: anyone on the network path can "
          "read them; add --tls-cert/--tls-key",
          flags.listen);
    }
  }

  // Every worker and client holds a connection (a file descriptor): take
  // all the kernel allows this process.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &files) != 0) {
      spdlog::warn("cannot raise the open-file limit: {}", std::strerror(errno));
    }
  }
  // Held until exit: a second coordinator on this file is refused.
  absl::StatusOr<paradnn::db::DatabaseFileLock> db_lock =
      paradnn::db::DatabaseFileLock::Acquire(flags.db_path);
  if (!db_lock.ok()) {
    spdlog::critical("{}", std::string(db_lock.status().message()));
    return 1;
  }
  absl::StatusOr<std::unique_ptr<paradnn::db::Database>> database =
      paradnn::db::Database::Open(flags.db_path);
  if (!database.ok()) {
    spdlog::critical("opening {}: {}", flags.db_path, database.status().ToString());
    return 1;
  }
  paradnn::common::SystemClock clock;
  paradnn::db::WorkerStore(database->get())
      .MarkAllDisconnectedSync(clock.NowUnixMs())
      .IgnoreError();
  // The previous process stored leases up to two timeouts ahead: each gets
  // one timeout from now for its worker to reconnect, as it always had.
  if (absl::StatusOr<int64_t> capped =
          paradnn::db::JobStore(database->get())
              .CapLeaseDeadlinesSync(clock.NowUnixMs() + flags.lease_timeout_ms);
      !capped.ok()) {
    spdlog::critical("capping the open leases of the previous process: {}",
                     capped.status().ToString());
    return 1;
  }

  paradnn::server::SchedulerOptions scheduler_options;
  scheduler_options.heartbeat_interval_ms = flags.heartbeat_ms;
  scheduler_options.lease_timeout_ms = flags.lease_timeout_ms;
  scheduler_options.max_attempts = flags.max_attempts;
  auto scheduler =
      std::make_unique<paradnn::server::Scheduler>(database->get(), &clock, scheduler_options);
  paradnn::server::ConnectionLedger ledger(&clock);
  paradnn::server::CoordinatorOptions coordinator_options;
  coordinator_options.ledger = &ledger;
  coordinator_options.authorizer = &*authorizer;
  coordinator_options.max_jobs_per_sweep = flags.max_jobs;
  coordinator_options.max_model_bytes = flags.max_model_bytes;
  auto coordinator = std::make_unique<paradnn::server::CoordinatorService>(
      database->get(), scheduler.get(), &clock, coordinator_options);
  scheduler->SetChangeListener([svc = coordinator.get()] { svc->NotifyWatchers(); });
  auto gateway = std::make_unique<paradnn::server::WorkerGatewayService>(scheduler.get(),
                                                                         &*authorizer, &ledger);
  paradnn::server::CoordinatorMetrics metrics(database->get(), scheduler.get(), &ledger, &clock);

  paradnn::server::ForwardGrpcLogsToSpdlog();
  grpc::EnableDefaultHealthCheckService(true);
  if (flags.reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(flags.listen, *credentials, &bound_port);
  builder.RegisterService(coordinator.get());
  builder.RegisterService(gateway.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(paradnn::server::MakeRpcTimingInterceptor(metrics.rpc()));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  // A submitted sweep and a job assignment carry a whole model file, plus
  // headroom for the rest of the message (spec or job: kilobytes).
  const int64_t max_message_bytes =
      std::max(flags.max_message_bytes, flags.max_model_bytes + (int64_t{1} << 20));
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  // A connection that never finishes its handshake (a port scan, a client
  // that stalls) gives its descriptor back after 10 s, one without calls
  // after 10 minutes (clients reconnect on their next call); each carries
  // at most 100 concurrent calls.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 600000);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 100);
  // Workers ping to detect dead links; allow it without data in flight.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || (bound_port == 0 && !absl::StartsWith(flags.listen, "unix:"))) {
    spdlog::critical("could not listen on {}", flags.listen);
    return 1;
  }
  const std::string address = BoundAddress(flags.listen, bound_port);
  server->GetHealthCheckService()->SetServingStatus(true);
  spdlog::info("paradnn-coordinator {} listening on {} (database {}; {}, {})",
               paradnn::common::kVersion, address, flags.db_path, tls ? "TLS" : "plaintext",
               authorizer->requires_tokens() ? "tokens required" : "no tokens required");
  if (!flags.address_file.empty() && !WriteAtomically(flags.address_file, address)) {
    spdlog::critical("could not write --address-file {}", flags.address_file);
    return 1;
  }

  std::atomic<bool> draining{false};
  std::string metrics_address;
  std::unique_ptr<paradnn::server::MetricsHttpServer> metrics_http;
  if (!flags.metrics_listen.empty()) {
    paradnn::server::MetricsHttpHandlers handlers;
    handlers.metrics = [&metrics] { return metrics.Render(); };
    handlers.not_ready_reason = [&draining, db = database->get()]() -> std::string {
      if (std::string failure = paradnn::server::GrpcListenerFailure(); !failure.empty()) {
        return "gRPC listener stopped accepting connections (" + failure +
               "): draining, then restarting in place";
      }
      if (draining.load()) return "draining: SIGTERM received, assigning no more jobs";
      absl::Status s = db->ReadHealth();
      if (!s.ok()) return "database not readable: " + s.ToString();
      s = db->StorageHealth();
      if (!s.ok()) return "database writes fail: " + s.ToString();
      // Past 90 % of the descriptors new connections may fail to be
      // accepted: say so before they do.
      return paradnn::server::FileDescriptorPressure(0.9);
    };
    absl::StatusOr<std::unique_ptr<paradnn::server::MetricsHttpServer>> started =
        paradnn::server::MetricsHttpServer::Start(flags.metrics_listen, std::move(handlers));
    if (!started.ok()) {
      spdlog::critical("{}", std::string(started.status().message()));
      return started.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
    }
    metrics_http = *std::move(started);
    metrics_address = flags.metrics_listen.substr(0, flags.metrics_listen.rfind(':') + 1) +
                      std::to_string(metrics_http->port());
    spdlog::info("metrics on http://{}/metrics", metrics_address);
    if (!flags.metrics_address_file.empty() &&
        !WriteAtomically(flags.metrics_address_file, metrics_address)) {
      spdlog::critical("could not write --metrics-address-file {}", flags.metrics_address_file);
      return 1;
    }
  }

  // Asio carries signals and the lease timer; gRPC owns its own threads.
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  boost::asio::steady_timer lease_timer(io);
  boost::asio::steady_timer listener_timer(io);
  const auto lease_check_interval = std::chrono::milliseconds(
      std::max<int64_t>(100, std::min<int64_t>(1000, flags.heartbeat_ms / 2)));
  std::function<void()> schedule_lease_check = [&] {
    lease_timer.expires_after(lease_check_interval);
    lease_timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      scheduler->ExpireLeases();
      schedule_lease_check();
    });
  };
  schedule_lease_check();
  boost::asio::steady_timer metrics_timer(io);
  std::function<void()> schedule_metrics_tick = [&] {
    metrics.Tick();
    metrics_timer.expires_after(std::chrono::seconds(1));
    metrics_timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) schedule_metrics_tick();
    });
  };
  schedule_metrics_tick();
  // Draining: connected workers still running a job may deliver its result
  // until the grace period ends; the wait ends early once none is busy.
  const auto grace =
      std::chrono::milliseconds(static_cast<int64_t>(flags.shutdown_grace_seconds * 1000));
  std::chrono::steady_clock::time_point drain_deadline;
  boost::asio::steady_timer drain_timer(io);
  std::function<void()> check_drained = [&] {
    int busy = 0;
    for (const auto& [worker_id, worker] : scheduler->Snapshot()) busy += worker.state == "busy";
    if (busy == 0) {
      spdlog::info("drained: no job in flight");
      return;
    }
    if (std::chrono::steady_clock::now() >= drain_deadline) {
      spdlog::warn(
          "drain: {} worker(s) still running a job after {} s; their jobs go back to "
          "the queue on the next start",
          busy, flags.shutdown_grace_seconds);
      return;
    }
    drain_timer.expires_after(std::chrono::milliseconds(100));
    drain_timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) check_drained();
    });
  };
  auto begin_drain = [&](const std::string& why) {
    spdlog::info("{}: not serving, assigning no more jobs, waiting up to {} s for jobs in flight",
                 why, flags.shutdown_grace_seconds);
    server->GetHealthCheckService()->SetServingStatus(false);
    draining = true;
    metrics_timer.cancel();
    scheduler->StopAssigning();
    lease_timer.cancel();
    drain_deadline = std::chrono::steady_clock::now() + grace;
    check_drained();
  };
  signals.async_wait([&](const boost::system::error_code& ec, int signal_number) {
    if (ec) return;
    listener_timer.cancel();
    begin_drain("signal " + std::to_string(signal_number));
  });
  // A listener gRPC gave up on takes no new worker or client: the ones
  // connected finish their jobs, then the process starts over in place.
  bool restart_in_place = false;
  std::function<void()> watch_listener = [&] {
    listener_timer.expires_after(std::chrono::milliseconds(250));
    listener_timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      const std::string failure = paradnn::server::GrpcListenerFailure();
      if (failure.empty()) {
        watch_listener();
        return;
      }
      spdlog::error(
          "gRPC stopped accepting connections on {} ({}); it does not resume by "
          "itself, so the coordinator restarts in place once drained",
          address, failure);
      restart_in_place = true;
      signals.cancel();
      begin_drain("listener failed");
    });
  };
  watch_listener();
  io.run();

  // Results that arrived are queued for commit; give calls a moment to end.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server->Wait();
  metrics_http.reset();
  scheduler->SetChangeListener(nullptr);
  coordinator.reset();
  gateway.reset();
  database->reset();  // commits queued writes (their callbacks still see the scheduler)
  scheduler.reset();
  if (restart_in_place) {
    db_lock = absl::UnavailableError("released for the restart");
    const std::vector<std::string> arguments =
        paradnn::server::ArgumentsForRestart(command_line, address, metrics_address);
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
