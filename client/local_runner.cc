#include "client/local_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/local_resume.h"
#include "client/local_startup.h"
#include "client/sweep_file.h"
#include "common/cpu_list.h"
#include "common/subprocess.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How often start-up and shutdown look at the address file and children.
constexpr std::chrono::milliseconds kPollInterval{20};

// How long `paradnn local` waits for a worker before saying why it waits.
constexpr std::chrono::seconds kWorkerStartNotice{3};

// Unix socket paths must fit in sockaddr_un::sun_path (108 bytes with the
// terminator); a long $TMPDIR falls back to /tmp.
constexpr size_t kMaxTempBaseLength = 60;

std::string ErrnoText(int error) { return std::strerror(error); }

absl::StatusOr<std::string> MakeTempDir() {
  std::string base = "/tmp";
  if (const char* tmp = std::getenv("TMPDIR");
      tmp != nullptr && *tmp != '\0' && std::strlen(tmp) <= kMaxTempBaseLength) {
    base = tmp;
  }
  std::string pattern = base + "/paradnn-local-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    const int error = errno;
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create a temporary directory in ", base, ": ", ErrnoText(error)));
  }
  return pattern;
}

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(buffer.str()));
}

absl::Status ChildFailure(ChildProcess& child, const std::string& what) {
  std::string message = absl::StrCat(child.name(), " ", what, " (", child.ExitDescription(), ")");
  const std::string tail = FileTail(child.log_path());
  if (!tail.empty()) absl::StrAppend(&message, "; its log ends:\n", tail);
  return absl::UnavailableError(message);
}

}  // namespace

std::vector<std::string> SplitCpusAmongWorkers(const std::vector<int>& cpus, int workers) {
  std::vector<std::string> lists;
  if (workers < 2 || cpus.empty()) return lists;
  const size_t n = cpus.size(), w = static_cast<size_t>(workers);
  for (size_t i = 0; i < w; ++i) {
    // n / w or n / w + 1 CPUs each; with n < w, one CPU shared by about w / n.
    const size_t begin = i * n / w;
    const size_t end = n >= w ? (i + 1) * n / w : begin + 1;
    lists.push_back(
        common::FormatCpuList(std::vector<int>(cpus.begin() + static_cast<std::ptrdiff_t>(begin),
                                               cpus.begin() + static_cast<std::ptrdiff_t>(end))));
  }
  return lists;
}

absl::Status CheckHostsFitLocalWorkers(int64_t most_hosts, int workers) {
  if (most_hosts <= workers) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("params.hosts: ", most_hosts, " needs ", most_hosts,
                   " workers of one platform; paradnn local was given --workers ", workers,
                   "; allowed here: 1..", workers, " (or run with --workers ", most_hosts, ")"));
}

absl::StatusOr<std::string> ExecutableDir() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read /proc/self/exe: ", error.message()));
  }
  return exe.parent_path().string();
}

std::string FileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(max_bytes)
                                   ? size - static_cast<std::streamoff>(max_bytes)
                                   : 0;
  // One byte before `start` tells whether `start` begins a line.
  in.seekg(start > 0 ? start - 1 : 0);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (start > 0) {
    const size_t newline = text.find('\n');
    text.erase(0, newline == std::string::npos ? 1 : newline + 1);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// ---- ChildProcess ------------------------------------------------------------

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    std::string name, const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("ChildProcess::Start: empty argv");
  absl::StatusOr<common::ScopedFd> log =
      common::OpenForChild(log_path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!log.ok()) return log.status();
  absl::StatusOr<common::ScopedFd> null = common::OpenForChild("/dev/null", O_RDONLY);
  if (!null.ok()) return null.status();
  common::SpawnOptions options;
  options.stdin_fd = null->get();
  options.stdout_fd = log->get();
  options.stderr_fd = log->get();
  // SIGTERM, not SIGKILL: a coordinator or worker left by a dying CLI
  // drains and exits on its own.
  options.parent_death_signal = SIGTERM;
  absl::StatusOr<common::SpawnedChild> child = common::SpawnChild(argv, options);
  if (!child.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start ", name, ": ", child.status().message()));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(name), child->pid, log_path));
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, &wait_status_, 0);
  }
}

bool ChildProcess::Running() {
  if (reaped_) return false;
  const pid_t r = waitpid(pid_, &wait_status_, WNOHANG);
  if (r == 0) return true;
  if (r < 0 && errno == EINTR) return true;
  reaped_ = true;
  return false;
}

std::string ChildProcess::ExitDescription() const {
  if (!reaped_) return "";
  return common::DescribeWaitStatus(wait_status_);
}

bool ChildProcess::ExitedCleanly() const {
  // Our SIGTERM before its handler was set (a worker still probing) stopped it.
  const bool our_sigterm =
      terminated_ && WIFSIGNALED(wait_status_) && WTERMSIG(wait_status_) == SIGTERM;
  return !reaped_ || our_sigterm || (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0);
}

void ChildProcess::Terminate() {
  if (reaped_ || terminated_) return;
  terminated_ = true;
  kill(pid_, SIGTERM);
}

bool ChildProcess::WaitUntil(SteadyClock::time_point deadline) {
  while (Running()) {
    if (SteadyClock::now() >= deadline) {
      // The whole group: a worker's runner goes with it.
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      while (waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
      return false;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

// ---- PrivateCoordinator ------------------------------------------------------

absl::StatusOr<std::string> SiblingBinary(const std::string& bin_dir, const std::string& name,
                                          const std::string& needed_by) {
  std::string dir = bin_dir;
  if (dir.empty()) {
    absl::StatusOr<std::string> exe_dir = ExecutableDir();
    if (!exe_dir.ok()) return exe_dir.status();
    dir = *exe_dir;
  }
  std::string bin = dir + "/" + name;
  if (access(bin.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot run ", bin, ": ", ErrnoText(errno),
                                                      "; ", needed_by, " needs ", name,
                                                      " beside paradnn (build every module)"));
  }
  return bin;
}

absl::StatusOr<std::unique_ptr<PrivateCoordinator>> PrivateCoordinator::Start(
    const PrivateCoordinatorOptions& options, InterruptWatcher* interrupts) {
  absl::StatusOr<std::string> coordinator_bin =
      SiblingBinary(options.bin_dir, "paradnn-coordinator", options.needed_by);
  if (!coordinator_bin.ok()) return coordinator_bin.status();
  absl::StatusOr<std::string> temp_dir = MakeTempDir();
  if (!temp_dir.ok()) return temp_dir.status();
  std::unique_ptr<PrivateCoordinator> coordinator(
      new PrivateCoordinator(*temp_dir, options.stop_grace));

  const std::string socket = *temp_dir + "/coordinator.sock";
  const std::string address_file = *temp_dir + "/address";
  std::vector<std::string> argv = {*coordinator_bin, "--listen",      "unix:" + socket,
                                   "--db",           options.db_path, "--address-file",
                                   address_file,     "--log-level",   options.log_level};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  const std::string metrics_file = *temp_dir + "/metrics-address";
  if (!options.metrics_listen.empty()) {
    argv.insert(argv.end(), {"--metrics-listen", options.metrics_listen, "--metrics-address-file",
                             metrics_file});
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start("paradnn-coordinator", argv, *temp_dir + "/coordinator.log");
  if (!child.ok()) return child.status();
  coordinator->process_ = *std::move(child);

  const SteadyClock::time_point deadline = SteadyClock::now() + options.startup_timeout;
  while (true) {
    if (interrupts != nullptr && interrupts->interrupted()) {
      return absl::CancelledError("interrupted");
    }
    coordinator->address_ = ReadTrimmed(address_file);
    // The HTTP listener starts after gRPC's: wait for both.
    if (!options.metrics_listen.empty()) coordinator->metrics_address_ = ReadTrimmed(metrics_file);
    if (!coordinator->address_.empty() &&
        (options.metrics_listen.empty() || !coordinator->metrics_address_.empty())) {
      break;
    }
    if (!coordinator->process_->Running()) {
      return ChildFailure(*coordinator->process_, "stopped before it listened");
    }
    if (SteadyClock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "paradnn-coordinator did not write its address within ", options.startup_timeout.count(),
          " s; its log ends:\n", FileTail(coordinator->process_->log_path())));
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return coordinator;
}

PrivateCoordinator::~PrivateCoordinator() { Stop().IgnoreError(); }

absl::Status PrivateCoordinator::CheckAlive() {
  if (process_ != nullptr && !process_->Running()) {
    failure_reported_ = true;
    return ChildFailure(*process_, "stopped");
  }
  return absl::OkStatus();
}

absl::Status PrivateCoordinator::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  absl::Status status;
  if (process_ != nullptr) {
    process_->Terminate();
    if (!process_->WaitUntil(SteadyClock::now() + stop_grace_)) {
      status = absl::InternalError(absl::StrCat(process_->name(), " did not stop within ",
                                                stop_grace_.count(), " s and was killed"));
    } else if (!process_->ExitedCleanly() && !failure_reported_) {
      status =
          absl::InternalError(absl::StrCat(process_->name(), " ", process_->ExitDescription(),
                                           "; its log ends:\n", FileTail(process_->log_path())));
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(temp_dir_, ignored);
  return status;
}

// ---- LocalCluster ------------------------------------------------------------

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(const LocalOptions& options,
                                                                  const std::string& device,
                                                                  InterruptWatcher* interrupts) {
  // Both binaries are checked before anything starts.
  for (const char* name : {"paradnn-coordinator", "paradnn-worker"}) {
    if (absl::StatusOr<std::string> bin = SiblingBinary(options.bin_dir, name, "paradnn local");
        !bin.ok()) {
      return bin.status();
    }
  }
  absl::StatusOr<std::string> worker_bin =
      SiblingBinary(options.bin_dir, "paradnn-worker", "paradnn local");
  if (!worker_bin.ok()) return worker_bin.status();
  PrivateCoordinatorOptions coordinator_options;
  coordinator_options.bin_dir = options.bin_dir;
  coordinator_options.db_path = options.db_path;
  coordinator_options.log_level = options.log_level;
  coordinator_options.startup_timeout = options.startup_timeout;
  coordinator_options.stop_grace = options.stop_grace;
  coordinator_options.needed_by = "paradnn local";
  coordinator_options.metrics_listen = options.dashboard_listen;
  if (options.max_jobs > 0) {
    coordinator_options.extra_args = {"--max-jobs", absl::StrCat(options.max_jobs)};
  }
  if (options.one_at_a_time) {
    coordinator_options.extra_args.push_back("--one-measurement-per-host");
  }
  absl::StatusOr<std::unique_ptr<PrivateCoordinator>> coordinator =
      PrivateCoordinator::Start(coordinator_options, interrupts);
  if (!coordinator.ok()) return coordinator.status();
  std::unique_ptr<LocalCluster> cluster(new LocalCluster(options.stop_grace));
  cluster->coordinator_ = *std::move(coordinator);

  const std::vector<std::string> cpu_lists =
      SplitCpusAmongWorkers(common::AllowedCpus(), options.workers);
  for (int i = 1; i <= options.workers; ++i) {
    const std::string id = absl::StrCat("local-", i, "-", device);
    // Every worker can lead a gang: a port of its own, on loopback, where
    // the other local workers reach it.
    PendingWorker worker{{id, absl::StrCat("paradnn-worker ", id),
                          absl::StrCat(cluster->coordinator_->temp_dir(), "/worker-", i, ".log")},
                         {*worker_bin, "--coordinator", cluster->address(), "--worker-id", id,
                          "--device", device, "--log-level", options.log_level, "--rendezvous-port",
                          "0", "--advertise-address", "127.0.0.1"}};
    if (!cpu_lists.empty()) worker.argv.insert(worker.argv.end(), {"--cpus", cpu_lists[i - 1]});
    if (i > 1 && options.first_worker_alone) {
      cluster->pending_.push_back(std::move(worker));
    } else if (absl::Status started = cluster->StartWorker(worker); !started.ok()) {
      return started;
    }
  }
  return cluster;
}

absl::Status LocalCluster::StartWorker(const PendingWorker& worker) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(worker.log.name, worker.argv, worker.log.log_path);
  if (!child.ok()) return child.status();
  workers_.push_back(*std::move(child));
  started_.push_back(worker.log);
  return absl::OkStatus();
}

absl::Status LocalCluster::StartPendingWorkers() {
  std::vector<PendingWorker> pending = std::move(pending_);
  pending_.clear();
  for (const PendingWorker& worker : pending) {
    if (absl::Status started = StartWorker(worker); !started.ok()) return started;
  }
  return absl::OkStatus();
}

LocalCluster::~LocalCluster() { Stop().IgnoreError(); }

absl::Status LocalCluster::CheckAlive() {
  if (absl::Status s = coordinator_->CheckAlive(); !s.ok()) return s;
  for (auto& worker : workers_) {
    if (!worker->Running()) {
      reported_.insert(worker.get());
      return ChildFailure(*worker, "stopped");
    }
  }
  return absl::OkStatus();
}

absl::Status LocalCluster::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  std::vector<std::string> problems;
  // Workers first, so that none is left talking to a coordinator going away.
  for (auto& worker : workers_) worker->Terminate();
  const SteadyClock::time_point deadline = SteadyClock::now() + stop_grace_;
  for (auto& worker : workers_) {
    if (!worker->WaitUntil(deadline)) {
      problems.push_back(absl::StrCat(worker->name(), " did not stop within ", stop_grace_.count(),
                                      " s and was killed"));
    } else if (!worker->ExitedCleanly() && reported_.count(worker.get()) == 0) {
      problems.push_back(absl::StrCat(worker->name(), " ", worker->ExitDescription()));
    }
  }
  if (absl::Status s = coordinator_->Stop(); !s.ok()) problems.emplace_back(s.message());
  if (problems.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(problems, "; "));
}

// ---- the command -------------------------------------------------------------

namespace {

// Tends the local workers while the sweep runs, from `listed`
// (ListWorkers). Starts the held-back workers (StartHeldBackWorkers). Once
// every worker is connected:
// FailedPrecondition when the sweep's jobs could never be leased to them,
// since the coordinator would hold them for workers that never come: jobs
// of `most_replicas` devices need as many GPUs on one worker
// (Platform.cuda_device_count); gangs of `most_hosts` need as many workers
// of one platform fingerprint. Sets *settled once it could tell.
absl::Status TendLocalWorkers(const std::vector<v1::WorkerInfo>& listed, LocalCluster& cluster,
                              int workers, int64_t most_replicas, int64_t most_hosts,
                              bool* settled) {
  if (absl::Status started = StartHeldBackWorkers(cluster, listed); !started.ok()) return started;
  if (*settled || ConnectedWorkers(listed) < workers) return absl::OkStatus();
  int64_t lent = 0;
  std::map<std::string, int64_t> by_platform;
  for (const v1::WorkerInfo& w : listed) {
    if (!w.connected()) continue;
    lent = std::max<int64_t>(lent, std::max(1, w.platform().cuda_device_count()));
    ++by_platform[w.platform().fingerprint()];
  }
  *settled = true;
  if (most_replicas > lent) {
    return absl::FailedPreconditionError(absl::StrCat(
        "params.devices: jobs of ", most_replicas, " data-parallel replicas need ", most_replicas,
        " GPUs on one worker; the local worker", workers == 1 ? " lends " : "s lend at most ", lent,
        " (a worker of --device cuda lends every visible GPU); they would wait for a larger host. "
        "Submit this sweep to a coordinator with such a host, or drop those values"));
  }
  int64_t alike = 0;
  for (const auto& [fingerprint, count] : by_platform) alike = std::max(alike, count);
  if (most_hosts <= alike) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "params.hosts: ", most_hosts, " needs ", most_hosts, " workers of one platform; the ",
      workers, " local workers are of ", by_platform.size(),
      " platform fingerprints (paradnn workers shows them); those jobs would wait for ever"));
}

// Watches the sweep to its end and prints its results. A worker starts by
// probing the host and, the first time for its platform, calibrating it: say
// so rather than sit at 0 running.
int WatchLocalSweep(const CommandContext& ctx, const LocalOptions& options,
                    CoordinatorClient& client, LocalCluster& cluster, int64_t sweep_id,
                    int64_t most_replicas, int64_t most_hosts) {
  const SteadyClock::time_point watch_start = SteadyClock::now();
  bool asked = false;
  bool fit_settled = most_replicas <= 1 && most_hosts <= 1;
  WorkerStartReport start_report(std::chrono::seconds(60));
  auto health = [&]() -> absl::Status {
    if (absl::Status alive = cluster.CheckAlive(); !alive.ok()) return alive;
    // One listing of the workers for whatever is due at this poll.
    const bool tending = !fit_settled || cluster.workers_pending();
    const bool notice_due = !asked && SteadyClock::now() - watch_start >= kWorkerStartNotice;
    if (!tending && !notice_due && !start_report.due()) return absl::OkStatus();
    absl::StatusOr<std::vector<v1::WorkerInfo>> listed = client.ListWorkers();
    if (!listed.ok()) return absl::OkStatus();  // the watch reports a lost coordinator
    if (tending) {
      if (absl::Status tended = TendLocalWorkers(*listed, cluster, options.workers, most_replicas,
                                                 most_hosts, &fit_settled);
          !tended.ok()) {
        return tended;
      }
    }
    start_report.MaybeSay(ctx, cluster, *listed, options.workers);
    if (!notice_due) return absl::OkStatus();
    asked = true;
    if (ConnectedWorkers(*listed) == 0) {
      *ctx.err << (ctx.err_is_terminal ? "\n" : "")
               << "paradnn: the local worker is probing this host and calibrating its roofs "
                  "(about 20 s to 2 min, once per platform fingerprint; later runs reuse "
                  "it)\n"
               << std::flush;
    }
    return absl::OkStatus();
  };
  int code = WatchWithProgress(ctx, client, sweep_id, health);
  const bool interrupted = ctx.interrupts != nullptr && ctx.interrupts->interrupted();
  if ((code == kExitOk || code == kExitFailed) && !interrupted) {
    absl::StatusOr<std::vector<v1::ResultRow>> rows =
        client.QueryResults(sweep_id, false, ctx.interrupts);
    if (rows.ok()) {
      ResultsView view;
      view.wide = options.wide;
      PrintResults(ctx, *rows, options.format, view);
    } else {
      code = ReportError(ctx, rows.status());
    }
  }
  return code;
}

}  // namespace

int RunLocal(const CommandContext& ctx, const LocalOptions& options) {
  const bool resume_alone =
      options.resume && options.sweep.file.empty() && options.sweep.preset.empty();
  std::optional<v1::SweepSpec> spec;
  if (!resume_alone) {
    absl::StatusOr<v1::SweepSpec> loaded = LoadSweep(options.sweep, options.max_jobs);
    if (!loaded.ok()) return ReportError(ctx, loaded.status());
    spec = *std::move(loaded);
  }
  // Before the coordinator starts: the file is ours alone (its lock).
  absl::StatusOr<std::optional<v1::SweepStatus>> resumed =
      ClaimSweepToResume(options.db_path, spec.has_value() ? &*spec : nullptr);
  if (!resumed.ok()) return ReportError(ctx, resumed.status());
  if (options.resume && !resumed->has_value()) {
    return ReportError(ctx, absl::NotFoundError(absl::StrCat(
                                "--resume: no interrupted sweep of this sweep file in ",
                                options.db_path, "; without --resume it starts a new one")));
  }
  const v1::SweepSpec& run_spec = resumed->has_value() ? (*resumed)->spec() : *spec;
  // Before anything starts: a gang larger than the local workers would wait
  // for ever. A sweep claimed to continue waits again, as it was.
  const int64_t most_hosts = model::MostDataParallelHosts(run_spec).value_or(1);
  if (absl::Status fits = CheckHostsFitLocalWorkers(most_hosts, options.workers); !fits.ok()) {
    if (resumed->has_value())
      MarkInterrupted(options.db_path, (*resumed)->sweep_id()).IgnoreError();
    return ReportError(ctx, fits);
  }

  // From here a signal only sets the flag (and cancels the call in flight),
  // so that the children are always stopped before the CLI exits.
  ScopedInterruptHandler note_only(ctx.interrupts, [] {});
  auto interrupted = [&] { return ctx.interrupts != nullptr && ctx.interrupts->interrupted(); };

  LocalOptions cluster_options = options;
  cluster_options.first_worker_alone = options.workers > 1;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(
      cluster_options, run_spec.device().empty() ? "cpu" : run_spec.device(), ctx.interrupts);
  if (!cluster.ok()) return ReportError(ctx, cluster.status());
  if (!(*cluster)->dashboard_address().empty()) {
    *ctx.err << "paradnn: dashboard on http://" << (*cluster)->dashboard_address()
             << "/ while this runs (docs/dashboard.md)\n"
             << std::flush;
  }

  int code = kExitInterrupted;
  int64_t sweep_id = resumed->has_value() ? (*resumed)->sweep_id() : 0;
  if (!interrupted()) {
    // The private coordinator needs no token or TLS, whatever the CLI was given.
    CoordinatorClient client((*cluster)->address(), ctx.timeout_seconds, common::ClientSecurity());
    absl::Status ready = absl::OkStatus();
    if (options.one_at_a_time && options.workers > 1) {
      ready = AwaitAllLocalWorkers(ctx, client, **cluster, options.workers);
    }
    absl::StatusOr<v1::SweepStatus> sweep =
        !ready.ok() ? absl::StatusOr<v1::SweepStatus>(ready)
                    : ContinueOrSubmit(ctx, client, *resumed, spec,
                                       absl::StrCat(options.workers, " local worker",
                                                    options.workers == 1 ? "" : "s"),
                                       options.db_path, options.max_jobs);
    if (!sweep.ok()) {
      code = ReportError(ctx, sweep.status());
    } else {
      sweep_id = sweep->sweep_id();
      code = WatchLocalSweep(ctx, options, client, **cluster, sweep_id,
                             model::MostDataParallelDevices(run_spec).value_or(1), most_hosts);
    }
  }
  if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) {
    *ctx.err << "paradnn: warning: " << stopped.message() << "\n" << std::flush;
  }
  if (!interrupted()) return code;
  if (sweep_id > 0) MarkAndSayInterrupted(ctx, options.db_path, sweep_id);
  return kExitInterrupted;
}

}  // namespace paradnn::client
