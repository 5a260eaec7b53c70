#include "server/coordinator_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/version.h"
#include "db/database.h"
#include "db/job_store.h"
#include "db/worker_store.h"
#include "server/budget_planner.h"
#include "server/call_authorizer.h"
#include "server/coordinator_metrics.h"
#include "server/coordinator_service.h"
#include "server/dashboard_api.h"
#include "server/fleet_goodput.h"
#include "server/listener_restart.h"
#include "server/metrics_http.h"
#include "server/scheduler.h"
#include "server/worker_gateway_service.h"

namespace paradnn::server {
namespace {

// The address clients should use: port 0 replaced by the bound port.
std::string BoundAddress(const std::string& listen, int port) {
  if (absl::StartsWith(listen, "unix:")) return listen;
  const size_t colon = listen.rfind(':');
  return listen.substr(0, colon + 1) + std::to_string(port);
}

// The token check the services apply: none without token files, else both
// roles' tokens (one file without the other would leave a service open).
absl::StatusOr<CallAuthorizer> LoadAuthorizer(const CoordinatorServerOptions& options) {
  if (options.worker_token_file.empty() && options.client_token_file.empty()) {
    return CallAuthorizer();
  }
  if (options.worker_token_file.empty() || options.client_token_file.empty()) {
    return absl::InvalidArgumentError(
        "--worker-token-file and --client-token-file go together: with only one, the other "
        "service would accept calls without a token");
  }
  absl::StatusOr<std::vector<common::WorkerToken>> worker =
      common::ReadWorkerTokenFile(options.worker_token_file, "--worker-token-file");
  if (!worker.ok()) return worker.status();
  absl::StatusOr<std::vector<std::string>> client =
      common::ReadTokenFile(options.client_token_file, "--client-token-file");
  if (!client.ok()) return client.status();
  return CallAuthorizer(*std::move(worker), *std::move(client));
}

// Refuses a listener beyond loopback that anyone could use, unless asked
// to (--insecure); warns about the half-protected ones.
absl::Status CheckExposure(const CoordinatorServerOptions& options, bool tokens) {
  const bool tls = !options.tls.cert.empty();
  if (common::IsLoopbackAddress(options.listen)) return absl::OkStatus();
  if (!tokens && !tls) {
    if (!options.insecure) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to listen on ", options.listen,
          " beyond loopback without authentication: give --worker-token-file and "
          "--client-token-file, or --tls-cert and --tls-key, or --insecure to accept calls "
          "from anyone who can reach it"));
    }
    spdlog::warn(
        "--insecure: listening on {} beyond loopback without tokens or TLS; anyone "
        "who can reach it can submit sweeps and act as a worker",
        options.listen);
  } else if (!tokens && options.tls.client_ca.empty()) {
    spdlog::warn(
        "listening on {} with TLS but no tokens or client certificates: calls are "
        "encrypted, but anyone who can reach it can make them",
        options.listen);
  } else if (!tls) {
    spdlog::warn(
        "listening on {} with tokens in plaintext: anyone on the network path can "
        "read them; add --tls-cert/--tls-key",
        options.listen);
  }
  return absl::OkStatus();
}

absl::Status CheckOptions(const CoordinatorServerOptions& options) {
  if (absl::Status s = common::ValidateAddress(options.listen, "--listen"); !s.ok()) return s;
  if (options.lease_timeout_ms <= options.heartbeat_ms) {
    return absl::InvalidArgumentError(absl::StrCat("--lease-timeout-ms (", options.lease_timeout_ms,
                                                   ") must be greater than --heartbeat-ms (",
                                                   options.heartbeat_ms, ")"));
  }
  return absl::OkStatus();
}

absl::Status WriteAtomically(const std::string& path, const std::string& text, const char* flag) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (out << text << "\n") {
      out.close();
      if (out && std::rename(tmp.c_str(), path.c_str()) == 0) return absl::OkStatus();
    }
  }
  return absl::UnavailableError(absl::StrCat("could not write ", flag, " ", path));
}

// Every worker and client holds a connection (a file descriptor): take all
// the kernel allows this process.
void RaiseOpenFileLimit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
  files.rlim_cur = files.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &files) != 0) {
    spdlog::warn("cannot raise the open-file limit: {}", std::strerror(errno));
  }
}

// The database as a restarted coordinator finds it: no worker connected,
// and the previous process's leases (stored up to two timeouts ahead)
// capped at one timeout from now for their workers to reconnect, as they
// always had.
absl::Status ResetLiveState(db::Database* database, const common::Clock& clock,
                            int64_t lease_timeout_ms) {
  db::WorkerStore(database).MarkAllDisconnectedSync(clock.NowUnixMs()).IgnoreError();
  absl::StatusOr<int64_t> capped =
      db::JobStore(database).CapLeaseDeadlinesSync(clock.NowUnixMs() + lease_timeout_ms);
  if (!capped.ok()) {
    return absl::Status(capped.status().code(),
                        absl::StrCat("capping the open leases of the previous process: ",
                                     capped.status().message()));
  }
  return absl::OkStatus();
}

void SetChannelLimits(const CoordinatorServerOptions& options, grpc::ServerBuilder* builder) {
  // A submitted sweep and a job assignment carry a whole model file, plus
  // headroom for the rest of the message (spec or job: kilobytes).
  const int64_t max_message_bytes =
      std::max(options.max_message_bytes, options.max_model_bytes + (int64_t{1} << 20));
  builder->SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  builder->SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  // A connection that never finishes its handshake (a port scan, a client
  // that stalls) gives its descriptor back after 10 s, one without calls
  // after 10 minutes (clients reconnect on their next call); each carries
  // at most 100 concurrent calls.
  builder->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 10000);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 600000);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 100);
  // Workers ping to detect dead links; allow it without data in flight.
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
}

}  // namespace

// Everything the process holds, in the order it is built.
struct CoordinatorServer::Parts {
  explicit Parts(CoordinatorServerOptions options_in)
      : options(std::move(options_in)),
        lease_timer(io),
        listener_timer(io),
        metrics_timer(io),
        drain_timer(io) {}

  absl::Status Open();
  absl::Status Listen(const std::shared_ptr<grpc::ServerCredentials>& credentials);
  absl::Status ServeMetrics();
  std::string NotReadyReason() const;

  void ScheduleLeaseCheck();
  void ScheduleMetricsTick();
  void WatchListener();
  void BeginDrain(const std::string& why);
  void CheckDrained();
  void Stop();

  const CoordinatorServerOptions options;
  common::SystemClock clock;
  std::optional<db::DatabaseFileLock> db_lock;  // held until Stop
  std::unique_ptr<db::Database> database;
  CallAuthorizer authorizer;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<ConnectionLedger> ledger;
  std::unique_ptr<CoordinatorService> coordinator;
  std::unique_ptr<WorkerGatewayService> gateway;
  std::unique_ptr<CoordinatorMetrics> metrics;
  std::unique_ptr<BudgetPlanner> planner;  // not in a read-only coordinator
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<MetricsHttpServer> metrics_http;
  std::unique_ptr<DashboardApi> dashboard;  // answers metrics_http's other paths
  std::string address;
  std::string metrics_address;

  // Asio carries signals and timers; gRPC owns its own threads.
  boost::asio::io_context io;
  // From the end of Start: until the coordinator serves, SIGTERM and SIGINT
  // keep their default action and end it at once. A CLI's private
  // coordinator stuck opening a file it was handed (PR_SET_PDEATHSIG
  // SIGTERM) then dies with the CLI instead of outliving it; there is
  // nothing to drain yet, and the file is safe (WAL, a flock).
  std::optional<boost::asio::signal_set> signals;
  std::optional<boost::asio::posix::stream_descriptor> stdin_pipe;  // exit_with_stdin
  std::array<char, 256> stdin_bytes{};
  // Reads standard input until its end, then drains as on a signal.
  void WatchStdin();
  boost::asio::steady_timer lease_timer;
  boost::asio::steady_timer listener_timer;
  boost::asio::steady_timer metrics_timer;
  boost::asio::steady_timer drain_timer;
  std::atomic<bool> draining{false};
  std::chrono::steady_clock::time_point drain_deadline;
  bool restart_in_place = false;
  bool stopped = false;
};

absl::Status CoordinatorServer::Parts::Open() {
  db::DatabaseOptions database_options;
  database_options.read_only = options.read_only;
  database_options.reuse_spot_check_every = options.reuse_spot_check_every;
  if (!options.read_only) {
    absl::StatusOr<db::DatabaseFileLock> lock = db::DatabaseFileLock::Acquire(options.db_path);
    if (!lock.ok()) return lock.status();
    db_lock.emplace(*std::move(lock));
  }
  absl::StatusOr<std::unique_ptr<db::Database>> opened =
      db::Database::Open(options.db_path, database_options);
  if (!opened.ok()) {
    return absl::Status(opened.status().code(),
                        absl::StrCat("opening ", options.db_path, ": ", opened.status().message()));
  }
  database = *std::move(opened);
  if (options.read_only) {
    // Nothing is leased here, so nothing is reset.
  } else if (absl::Status reset = ResetLiveState(database.get(), clock, options.lease_timeout_ms);
             !reset.ok()) {
    return reset;
  }
  SchedulerOptions scheduler_options;
  scheduler_options.heartbeat_interval_ms = options.heartbeat_ms;
  scheduler_options.lease_timeout_ms = options.lease_timeout_ms;
  scheduler_options.max_attempts = options.max_attempts;
  scheduler_options.one_measurement_per_host = options.one_measurement_per_host;
  scheduler = std::make_unique<Scheduler>(database.get(), &clock, scheduler_options);
  ledger = std::make_unique<ConnectionLedger>(&clock);
  CoordinatorOptions coordinator_options;
  coordinator_options.ledger = ledger.get();
  coordinator_options.authorizer = &authorizer;
  coordinator_options.max_jobs_per_sweep = options.max_jobs;
  coordinator_options.max_model_bytes = options.max_model_bytes;
  coordinator = std::make_unique<CoordinatorService>(database.get(), scheduler.get(), &clock,
                                                     coordinator_options);
  if (!options.read_only) {
    BudgetPlannerOptions planner_options;
    planner_options.workers_of = [sched = scheduler.get()](const std::string& device) {
      int connected = 0;
      for (const auto& [worker_id, worker] : sched->Snapshot()) {
        connected += worker.device_kind == device &&
                     (worker.state == v1::WORKER_IDLE || worker.state == v1::WORKER_BUSY);
      }
      return connected;
    };
    planner_options.released = [sched = scheduler.get()] { sched->OfferPendingJobs(); };
    planner_options.changed = [svc = coordinator.get()] { svc->NotifyWatchers(); };
    planner = std::make_unique<BudgetPlanner>(database.get(), &clock, std::move(planner_options));
    coordinator->SetSecondsLeftSource(
        [budget = planner.get()](int64_t sweep_id) { return budget->SecondsLeft(sweep_id); });
  }
  scheduler->SetChangeListener([svc = coordinator.get(), budget = planner.get()] {
    svc->NotifyWatchers();
    if (budget != nullptr) budget->Kick();
  });
  gateway = std::make_unique<WorkerGatewayService>(scheduler.get(), &authorizer, ledger.get());
  metrics =
      std::make_unique<CoordinatorMetrics>(database.get(), scheduler.get(), ledger.get(), &clock);
  return absl::OkStatus();
}

absl::Status CoordinatorServer::Parts::Listen(
    const std::shared_ptr<grpc::ServerCredentials>& credentials) {
  ForwardGrpcLogsToSpdlog();
  grpc::EnableDefaultHealthCheckService(true);
  if (options.reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(options.listen, credentials, &bound_port);
  builder.RegisterService(coordinator.get());
  // A read-only coordinator leases nothing: workers get UNIMPLEMENTED.
  if (!options.read_only) builder.RegisterService(gateway.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(MakeRpcTimingInterceptor(metrics->rpc()));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  SetChannelLimits(options, &builder);
  server = builder.BuildAndStart();
  if (!server || (bound_port == 0 && !absl::StartsWith(options.listen, "unix:"))) {
    return absl::UnavailableError(absl::StrCat("could not listen on ", options.listen));
  }
  address = BoundAddress(options.listen, bound_port);
  server->GetHealthCheckService()->SetServingStatus(true);
  spdlog::info("paradnn-coordinator {} listening on {} (database {}{}; {}, {})", common::kVersion,
               address, options.db_path, options.read_only ? ", read-only" : "",
               options.tls.cert.empty() ? "plaintext" : "TLS",
               authorizer.requires_tokens() ? "tokens required" : "no tokens required");
  if (!options.address_file.empty()) {
    return WriteAtomically(options.address_file, address, "--address-file");
  }
  return absl::OkStatus();
}

std::string CoordinatorServer::Parts::NotReadyReason() const {
  if (std::string failure = GrpcListenerFailure(); !failure.empty()) {
    return "gRPC listener stopped accepting connections (" + failure +
           "): draining, then restarting in place";
  }
  if (draining.load()) return "draining: SIGTERM received, assigning no more jobs";
  absl::Status s = database->ReadHealth();
  if (!s.ok()) return "database not readable: " + s.ToString();
  s = database->StorageHealth();
  if (!s.ok()) return "database writes fail: " + s.ToString();
  // Past 90 % of the descriptors new connections may fail to be accepted:
  // say so before they do.
  return FileDescriptorPressure(0.9);
}

absl::Status CoordinatorServer::Parts::ServeMetrics() {
  if (options.metrics_listen.empty()) return absl::OkStatus();
  MetricsHttpHandlers handlers;
  handlers.metrics = [this] { return metrics->Render(); };
  handlers.not_ready_reason = [this] { return NotReadyReason(); };
  // The dashboard's API is a client of the Coordinator service like any
  // other, through the in-process channel, under the same tokens.
  grpc::ChannelArguments channel_arguments;
  channel_arguments.SetMaxReceiveMessageSize(-1);
  DashboardApiOptions dashboard_options;
  dashboard_options.api_allowed = common::IsLoopbackAddress(options.metrics_listen) ||
                                  authorizer.requires_tokens() || options.insecure;
  dashboard = std::make_unique<DashboardApi>(server->InProcessChannel(channel_arguments),
                                             dashboard_options);
  handlers.other = [api = dashboard.get()](HttpRequest request, HttpResponder respond) {
    api->Handle(std::move(request), std::move(respond));
  };
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> started =
      MetricsHttpServer::Start(options.metrics_listen, std::move(handlers));
  if (!started.ok()) return started.status();
  metrics_http = *std::move(started);
  metrics_address = options.metrics_listen.substr(0, options.metrics_listen.rfind(':') + 1) +
                    std::to_string(metrics_http->port());
  spdlog::info("dashboard on http://{}/ (metrics on /metrics)", metrics_address);
  if (!dashboard_options.api_allowed) {
    spdlog::warn(
        "--metrics-listen {} is beyond loopback and no client token is required: the dashboard's "
        "API refuses every call (give --client-token-file, or --insecure)",
        options.metrics_listen);
  }
  if (!options.metrics_address_file.empty()) {
    return WriteAtomically(options.metrics_address_file, metrics_address, "--metrics-address-file");
  }
  return absl::OkStatus();
}

void CoordinatorServer::Parts::ScheduleLeaseCheck() {
  const auto interval = std::chrono::milliseconds(
      std::max<int64_t>(100, std::min<int64_t>(1000, options.heartbeat_ms / 2)));
  lease_timer.expires_after(interval);
  lease_timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    scheduler->ExpireLeases();
    ScheduleLeaseCheck();
  });
}

void CoordinatorServer::Parts::ScheduleMetricsTick() {
  metrics->Tick();
  metrics_timer.expires_after(std::chrono::seconds(1));
  metrics_timer.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) ScheduleMetricsTick();
  });
}

// A listener gRPC gave up on takes no new worker or client: the ones
// connected finish their jobs, then the process starts over in place.
void CoordinatorServer::Parts::WatchListener() {
  listener_timer.expires_after(std::chrono::milliseconds(250));
  listener_timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    const std::string failure = GrpcListenerFailure();
    if (failure.empty()) {
      WatchListener();
      return;
    }
    spdlog::error(
        "gRPC stopped accepting connections on {} ({}); it does not resume by "
        "itself, so the coordinator restarts in place once drained",
        address, failure);
    restart_in_place = true;
    if (signals) signals->cancel();
    BeginDrain("listener failed");
  });
}

void CoordinatorServer::Parts::BeginDrain(const std::string& why) {
  spdlog::info("{}: not serving, assigning no more jobs, waiting up to {} s for jobs in flight",
               why, options.shutdown_grace_seconds);
  server->GetHealthCheckService()->SetServingStatus(false);
  draining = true;
  metrics_timer.cancel();
  if (stdin_pipe) stdin_pipe->close();  // ends its read: nothing left to watch
  scheduler->StopAssigning();
  if (planner) planner->Stop();
  lease_timer.cancel();
  drain_deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(options.shutdown_grace_seconds * 1000));
  CheckDrained();
}

// Draining: connected workers still running a job may deliver its result
// until the grace period ends; the wait ends early once none is busy.
void CoordinatorServer::Parts::CheckDrained() {
  int busy = 0;
  for (const auto& [worker_id, worker] : scheduler->Snapshot())
    busy += worker.state == v1::WORKER_BUSY;
  if (busy == 0) {
    spdlog::info("drained: no job in flight");
    return;
  }
  if (std::chrono::steady_clock::now() >= drain_deadline) {
    spdlog::warn(
        "drain: {} worker(s) still running a job after {} s; their jobs go back to "
        "the queue on the next start",
        busy, options.shutdown_grace_seconds);
    return;
  }
  drain_timer.expires_after(std::chrono::milliseconds(100));
  drain_timer.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) CheckDrained();
  });
}

void CoordinatorServer::Parts::Stop() {
  if (stopped) return;
  stopped = true;
  if (server) {
    // Results that arrived are queued for commit; give calls a moment to end.
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server->Wait();
  }
  // The HTTP thread stops first; the dashboard's calls still queued then
  // answer into the stopped server, which must outlive them.
  if (metrics_http) metrics_http->Stop();
  dashboard.reset();
  metrics_http.reset();
  metrics.reset();
  planner.reset();  // it offers jobs through the scheduler
  if (scheduler) {
    scheduler->SetChangeListener(nullptr);
    scheduler->FinishModelReads();  // they may queue a release
  }
  coordinator.reset();
  gateway.reset();
  database.reset();  // commits queued writes (their callbacks still see the scheduler)
  scheduler.reset();
  db_lock.reset();
}

absl::StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(
    const CoordinatorServerOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  absl::StatusOr<CallAuthorizer> authorizer = LoadAuthorizer(options);
  if (!authorizer.ok()) return authorizer.status();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      common::LoadServerCredentials(options.tls);
  if (!credentials.ok()) return credentials.status();
  if (absl::Status s = CheckExposure(options, authorizer->requires_tokens()); !s.ok()) return s;
  RaiseOpenFileLimit();

  auto parts = std::make_unique<Parts>(options);
  parts->authorizer = *std::move(authorizer);
  // Each step needs the ones before; a failure stops what was started.
  std::unique_ptr<CoordinatorServer> server(new CoordinatorServer(std::move(parts)));
  Parts& p = *server->parts_;
  if (absl::Status s = p.Open(); !s.ok()) return s;
  if (absl::Status s = p.Listen(*credentials); !s.ok()) return s;
  if (absl::Status s = p.ServeMetrics(); !s.ok()) return s;
  p.signals.emplace(p.io, SIGTERM, SIGINT);
  if (options.exit_with_stdin) {
    // A regular file or a terminal cannot be waited on: only a pipe.
    struct stat in {};
    if (::fstat(STDIN_FILENO, &in) != 0 || !S_ISFIFO(in.st_mode)) {
      return absl::InvalidArgumentError(
          "--exit-with-stdin: standard input must be a pipe (the starting process keeps its "
          "write end)");
    }
    p.stdin_pipe.emplace(p.io, ::dup(STDIN_FILENO));
  }
  return server;
}

void CoordinatorServer::Parts::WatchStdin() {
  stdin_pipe->async_read_some(boost::asio::buffer(stdin_bytes),
                              [this](const boost::system::error_code& ec, size_t) {
                                if (ec == boost::asio::error::operation_aborted) return;
                                if (!ec) {
                                  WatchStdin();  // bytes mean nothing: read on
                                  return;
                                }
                                listener_timer.cancel();
                                if (signals) signals->cancel();
                                BeginDrain("standard input closed (--exit-with-stdin)");
                              });
}

CoordinatorServer::CoordinatorServer(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

CoordinatorServer::~CoordinatorServer() { parts_->Stop(); }

CoordinatorServer::Ending CoordinatorServer::Run() {
  Parts& p = *parts_;
  if (!p.options.read_only) p.ScheduleLeaseCheck();
  if (p.planner) p.planner->Start();
  p.ScheduleMetricsTick();
  p.signals->async_wait([&p](const boost::system::error_code& ec, int signal_number) {
    if (ec) return;
    p.listener_timer.cancel();
    p.BeginDrain("signal " + std::to_string(signal_number));
  });
  p.WatchListener();
  if (p.stdin_pipe) p.WatchStdin();
  p.io.run();
  p.Stop();
  return p.restart_in_place ? Ending::kRestartInPlace : Ending::kStopped;
}

const std::string& CoordinatorServer::address() const { return parts_->address; }
const std::string& CoordinatorServer::metrics_address() const { return parts_->metrics_address; }

}  // namespace paradnn::server
