// `paradnn local SWEEP.yaml`: the embedded default. Starts a private
// paradnn-coordinator (Unix socket in a fresh temporary directory, the
// SQLite file the user names) and N paradnn-worker processes, submits the
// sweep, follows it with the progress line, prints the results and stops
// everything again. The database file stays; a coordinator started on it
// later serves the same results (and continues a sweep that was stopped
// before it finished).
#ifndef PARADNN_CLIENT_LOCAL_RUNNER_H_
#define PARADNN_CLIENT_LOCAL_RUNNER_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/commands.h"
#include "client/interrupt.h"
#include "client/output_format.h"

namespace paradnn::client {

// The folder of the running executable (dirname of /proc/self/exe), where
// the build puts paradnn-coordinator and paradnn-worker beside paradnn.
absl::StatusOr<std::string> ExecutableDir();

// The last `max_bytes` of the file at `path` (whole lines), or "" when it
// cannot be read.
std::string FileTail(const std::string& path, size_t max_bytes = 2000);

// The --cpus of each of `workers` local workers that share `cpus` (this
// process's affinity, ascending), in Linux's CPU list syntax: consecutive
// blocks as even as possible ("0-1", "2-3" for 2 workers on 4 CPUs); with
// more workers than CPUs, workers share CPUs round-robin by block (4
// workers on CPUs 0-1: "0", "0", "1", "1", a core or half a core each).
// Empty for fewer than 2 workers or no CPUs: one worker takes them all.
std::vector<std::string> SplitCpusAmongWorkers(const std::vector<int>& cpus, int workers);

// FailedPrecondition when a sweep whose gang jobs have `most_hosts`
// processes (model::MostDataParallelHosts) cannot run on `workers` local
// workers: "params.hosts: 4 needs 4 workers of one platform; paradnn local
// was given --workers 2; allowed here: 1..2".
absl::Status CheckHostsFitLocalWorkers(int64_t most_hosts, int workers);

// One child process: its own process group (a terminal's Ctrl-C reaches
// only the CLI, which then stops children in order), SIGTERM when the CLI
// dies (PR_SET_PDEATHSIG), stdin from /dev/null, stdout and stderr to
// `log_path`. The destructor kills and reaps a child still running.
class ChildProcess {
 public:
  // Starts argv[0] (a path) with `argv`. `name` is used in messages.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(std::string name,
                                                             const std::vector<std::string>& argv,
                                                             const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& name() const { return name_; }
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const { return pid_; }

  // True while the child runs; reaps it once it has exited.
  bool Running();
  // "exited with status 1", "killed by signal 9"; "" while running.
  std::string ExitDescription() const;
  // True when it exited with status 0 (or has not exited), or ended by the
  // SIGTERM of Terminate().
  bool ExitedCleanly() const;

  // Sends SIGTERM (once). Does not wait.
  void Terminate();
  // Waits until `deadline`; then SIGKILL and waits. Returns true if the
  // child ended before the deadline.
  bool WaitUntil(std::chrono::steady_clock::time_point deadline);

 private:
  ChildProcess(std::string name, pid_t pid, std::string log_path)
      : name_(std::move(name)), pid_(pid), log_path_(std::move(log_path)) {}

  std::string name_;
  pid_t pid_;
  std::string log_path_;
  bool reaped_ = false;
  bool terminated_ = false;
  int wait_status_ = 0;
};

struct LocalOptions {
  // The sweep file or preset and the flags that override it (--budget,
  // --fresh, --target-interval, --run-predicted-oom); empty with --resume
  // alone.
  SweepSource sweep;
  std::string db_path = "paradnn.db";
  // --dashboard: the private coordinator also serves the dashboard (and
  // /metrics) on this HOST:PORT; "" = not.
  std::string dashboard_listen;
  bool resume = false;  // --resume: continue the newest interrupted sweep
  bool wide = false;    // --wide: every column of the results table
  int workers = 1;
  // --one-at-a-time: the private coordinator leases one job at a time
  // (--one-measurement-per-host), a gang's ranks together: each job timed
  // alone on the host, as a scaling sweep's baselines need.
  bool one_at_a_time = false;
  // Start worker 1 alone and the others once it has connected
  // (LocalCluster::StartPendingWorkers): the first run on a host calibrates
  // its roofs once, on an idle host, and the other workers reuse the cache
  // instead of calibrating all at once, each on a share of the CPUs.
  bool first_worker_alone = false;
  OutputFormat format = OutputFormat::kTable;
  int64_t max_jobs = 0;            // 0: model::kDefaultMaxJobs
  std::string log_level = "warn";  // passed to the children
  std::string bin_dir;             // empty: ExecutableDir()
  std::chrono::seconds startup_timeout{30};
  std::chrono::seconds stop_grace{10};
};

struct PrivateCoordinatorOptions {
  std::string db_path;
  std::vector<std::string> extra_args;  // more paradnn-coordinator flags
  std::string metrics_listen;           // --metrics-listen (the dashboard); "" = off
  std::string log_level = "warn";
  std::string bin_dir;    // empty: ExecutableDir()
  std::string needed_by;  // the command, for the missing-binary message
  std::chrono::seconds startup_timeout{30};
  std::chrono::seconds stop_grace{10};
};

// A paradnn-coordinator for this CLI alone, on a Unix socket in a fresh
// temporary directory (which also holds its log). Stop() (or the
// destructor) sends SIGTERM, waits up to `stop_grace` before SIGKILL and
// removes the directory.
class PrivateCoordinator {
 public:
  // Starts it and waits for its address file, failing early with its log
  // tail if it exits first, or on interrupt.
  static absl::StatusOr<std::unique_ptr<PrivateCoordinator>> Start(
      const PrivateCoordinatorOptions& options, InterruptWatcher* interrupts);
  ~PrivateCoordinator();
  PrivateCoordinator(const PrivateCoordinator&) = delete;
  PrivateCoordinator& operator=(const PrivateCoordinator&) = delete;

  // "unix:/tmp/paradnn-local-XXXXXX/coordinator.sock".
  const std::string& address() const { return address_; }
  // Its HTTP address (HOST:PORT, the port resolved); "" without
  // metrics_listen.
  const std::string& metrics_address() const { return metrics_address_; }
  const std::string& temp_dir() const { return temp_dir_; }

  // OK while it runs; else Unavailable with the tail of its log.
  absl::Status CheckAlive();
  // Idempotent. An error when it had to be killed or failed unreported.
  absl::Status Stop();

 private:
  PrivateCoordinator(std::string temp_dir, std::chrono::seconds stop_grace)
      : temp_dir_(std::move(temp_dir)), stop_grace_(stop_grace) {}

  std::string temp_dir_;
  std::chrono::seconds stop_grace_;
  std::string address_;
  std::string metrics_address_;
  std::unique_ptr<ChildProcess> process_;
  bool failure_reported_ = false;
  bool stopped_ = false;
};

// A private coordinator and its workers. Stop() (or the destructor) sends
// SIGTERM to the workers, then the coordinator, waits for each up to
// `stop_grace` before SIGKILL, and removes the temporary directory.
class LocalCluster {
 public:
  // Starts the coordinator (PrivateCoordinator), then the workers for
  // `device` (only the first with options.first_worker_alone). With several
  // workers each gets its own --cpus (SplitCpusAmongWorkers), and every
  // worker takes a free rendezvous port and advertises 127.0.0.1, so that
  // they can form data-parallel gangs (params.hosts).
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Start(const LocalOptions& options,
                                                             const std::string& device,
                                                             InterruptWatcher* interrupts);
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // The coordinator's address ("unix:/tmp/paradnn-local-XXXXXX/coordinator.sock").
  const std::string& address() const { return coordinator_->address(); }
  // The dashboard's HOST:PORT; "" without LocalOptions.dashboard_listen.
  const std::string& dashboard_address() const { return coordinator_->metrics_address(); }

  // OK while every child runs; else Unavailable naming the first child that
  // exited, with the tail of its log.
  absl::Status CheckAlive();

  // Whether workers wait to be started (LocalOptions.first_worker_alone),
  // and starting them (call once the first has connected).
  bool workers_pending() const { return !pending_.empty(); }
  // Each started worker: its --worker-id, its name in messages
  // ("paradnn-worker <id>") and its log file.
  struct WorkerLog {
    std::string id;
    std::string name;
    std::string log_path;
  };
  const std::vector<WorkerLog>& WorkerLogs() const { return started_; }
  absl::Status StartPendingWorkers();

  // Stops the children and removes the temporary directory. Returns an
  // error naming children that had to be killed or exited with a failure
  // not already reported by CheckAlive. Idempotent.
  absl::Status Stop();

 private:
  explicit LocalCluster(std::chrono::seconds stop_grace) : stop_grace_(stop_grace) {}

  std::chrono::seconds stop_grace_;
  std::unique_ptr<PrivateCoordinator> coordinator_;
  std::vector<std::unique_ptr<ChildProcess>> workers_;
  struct PendingWorker {
    WorkerLog log;
    std::vector<std::string> argv;
  };
  std::vector<PendingWorker> pending_;
  std::vector<WorkerLog> started_;
  absl::Status StartWorker(const PendingWorker& worker);
  std::set<const ChildProcess*> reported_;  // worker failures CheckAlive returned
  bool stopped_ = false;
};

// The whole `paradnn local` command; returns its exit status (as `watch`).
// An interrupted or killed run's sweep of the same spec is continued, not
// submitted again (local_resume.h); Ctrl-C marks the sweep interrupted.
int RunLocal(const CommandContext& ctx, const LocalOptions& options);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_LOCAL_RUNNER_H_
