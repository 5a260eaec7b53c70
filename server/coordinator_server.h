// CoordinatorServer is the paradnn-coordinator process without its flags:
// it checks the options, takes the database file's lock, opens the file,
// builds the scheduler and both services, listens (gRPC, and HTTP metrics
// when asked) and, in Run, serves until SIGTERM/SIGINT or until gRPC's
// listener fails, then drains: no new assignments, and connected workers
// may deliver the jobs they run for up to the grace period.
//
// Shutdown order matters and lives here once: gRPC calls end, the
// scheduler's model reads finish, queued writes commit (their callbacks
// still see the scheduler), then the scheduler goes and the lock is
// released.
//
// Not thread-safe: one thread creates it, calls Run and destroys it.
#ifndef PARADNN_SERVER_COORDINATOR_SERVER_H_
#define PARADNN_SERVER_COORDINATOR_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/address.h"
#include "common/auth.h"

namespace paradnn::server {

struct CoordinatorServerOptions {
  std::string listen = common::kDefaultCoordinatorAddress;
  std::string db_path = "paradnn.db";
  // Serve the file's sweeps, results and analyses without changing it: no
  // lock (its own coordinator may be running), no migrations, no worker
  // gateway; submissions and cancels fail with FailedPrecondition.
  bool read_only = false;
  // Stop (as on SIGTERM) when standard input, a pipe, reaches its end: a
  // coordinator started for one process (Python's open_db) ends with it,
  // however it ends, whichever of its threads started it.
  bool exit_with_stdin = false;
  std::string address_file;  // written with the bound address once listening
  std::string metrics_listen;
  std::string metrics_address_file;
  int64_t max_jobs = 100000;
  int64_t heartbeat_ms = 2000;
  int64_t lease_timeout_ms = 15000;
  int max_attempts = 3;
  // SchedulerOptions.one_measurement_per_host (--one-measurement-per-host).
  bool one_measurement_per_host = false;
  int64_t max_message_bytes = 64 << 20;
  int64_t max_model_bytes = int64_t{256} << 20;
  // db::DatabaseOptions.reuse_spot_check_every.
  int reuse_spot_check_every = 20;
  double shutdown_grace_seconds = 5;
  bool reflection = false;
  std::string worker_token_file;
  std::string client_token_file;
  common::ServerTlsFlags tls;
  bool insecure = false;  // beyond loopback without tokens or TLS
};

class CoordinatorServer {
 public:
  enum class Ending {
    kStopped,         // a signal: drained and stopped
    kRestartInPlace,  // gRPC's listener failed: drained; exec the process again
  };

  // InvalidArgument for options that cannot work together (naming the
  // flag), FailedPrecondition when another coordinator holds the file,
  // others when the database, a listener or an address file fails.
  static absl::StatusOr<std::unique_ptr<CoordinatorServer>> Start(
      const CoordinatorServerOptions& options);
  ~CoordinatorServer();
  CoordinatorServer(const CoordinatorServer&) = delete;
  CoordinatorServer& operator=(const CoordinatorServer&) = delete;

  // Serves until a signal or a failed listener, then drains and stops
  // serving. Call once.
  Ending Run();

  // The bound addresses (port 0 resolved); metrics_address is empty
  // without --metrics-listen.
  const std::string& address() const;
  const std::string& metrics_address() const;

 private:
  struct Parts;
  explicit CoordinatorServer(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_COORDINATOR_SERVER_H_
