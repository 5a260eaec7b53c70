#include "client/local_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/sweep_file.h"
#include "common/subprocess.h"

namespace paradnn::client {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How often start-up and shutdown look at the address file and children.
constexpr std::chrono::milliseconds kPollInterval{20};

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
  return !reaped_ || (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0);
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

// ---- LocalCluster ------------------------------------------------------------

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(const LocalOptions& options,
                                                                  const std::string& device,
                                                                  InterruptWatcher* interrupts) {
  std::string bin_dir = options.bin_dir;
  if (bin_dir.empty()) {
    absl::StatusOr<std::string> dir = ExecutableDir();
    if (!dir.ok()) return dir.status();
    bin_dir = *dir;
  }
  const std::string coordinator_bin = bin_dir + "/paradnn-coordinator";
  const std::string worker_bin = bin_dir + "/paradnn-worker";
  for (const std::string& bin : {coordinator_bin, worker_bin}) {
    if (access(bin.c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot run ", bin, ": ", ErrnoText(errno),
          "; paradnn local needs paradnn-coordinator and paradnn-worker beside paradnn (build "
          "every module)"));
    }
  }
  absl::StatusOr<std::string> temp_dir = MakeTempDir();
  if (!temp_dir.ok()) return temp_dir.status();
  std::unique_ptr<LocalCluster> cluster(new LocalCluster(*temp_dir, options.stop_grace));

  const std::string socket = *temp_dir + "/coordinator.sock";
  const std::string address_file = *temp_dir + "/address";
  std::vector<std::string> argv = {coordinator_bin, "--listen",      "unix:" + socket,
                                   "--db",          options.db_path, "--address-file",
                                   address_file,    "--log-level",   options.log_level};
  if (options.max_jobs > 0) {
    argv.push_back("--max-jobs");
    argv.push_back(absl::StrCat(options.max_jobs));
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> coordinator =
      ChildProcess::Start("paradnn-coordinator", argv, *temp_dir + "/coordinator.log");
  if (!coordinator.ok()) return coordinator.status();
  cluster->coordinator_ = *std::move(coordinator);

  const SteadyClock::time_point deadline = SteadyClock::now() + options.startup_timeout;
  while (true) {
    if (interrupts != nullptr && interrupts->interrupted()) {
      return absl::CancelledError("interrupted");
    }
    cluster->address_ = ReadTrimmed(address_file);
    if (!cluster->address_.empty()) break;
    if (!cluster->coordinator_->Running()) {
      return ChildFailure(*cluster->coordinator_, "stopped before it listened");
    }
    if (SteadyClock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "paradnn-coordinator did not write its address within ", options.startup_timeout.count(),
          " s; its log ends:\n", FileTail(cluster->coordinator_->log_path())));
    }
    std::this_thread::sleep_for(kPollInterval);
  }

  for (int i = 1; i <= options.workers; ++i) {
    const std::string id = absl::StrCat("local-", i, "-", device);
    absl::StatusOr<std::unique_ptr<ChildProcess>> worker =
        ChildProcess::Start(absl::StrCat("paradnn-worker ", id),
                            {worker_bin, "--coordinator", cluster->address_, "--worker-id", id,
                             "--device", device, "--log-level", options.log_level},
                            absl::StrCat(*temp_dir, "/worker-", i, ".log"));
    if (!worker.ok()) return worker.status();
    cluster->workers_.push_back(*std::move(worker));
  }
  return cluster;
}

LocalCluster::~LocalCluster() { Stop().IgnoreError(); }

absl::Status LocalCluster::CheckAlive() {
  if (coordinator_ != nullptr && !coordinator_->Running()) {
    reported_.insert(coordinator_.get());
    return ChildFailure(*coordinator_, "stopped");
  }
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
  auto stop = [&](const std::vector<ChildProcess*>& children) {
    for (ChildProcess* c : children) c->Terminate();
    const SteadyClock::time_point deadline = SteadyClock::now() + stop_grace_;
    for (ChildProcess* c : children) {
      if (!c->WaitUntil(deadline)) {
        problems.push_back(absl::StrCat(c->name(), " did not stop within ", stop_grace_.count(),
                                        " s and was killed"));
      } else if (!c->ExitedCleanly() && reported_.count(c) == 0) {
        problems.push_back(absl::StrCat(c->name(), " ", c->ExitDescription()));
      }
    }
  };
  // Workers first, so that none is left talking to a coordinator going away.
  std::vector<ChildProcess*> workers;
  for (auto& w : workers_) workers.push_back(w.get());
  stop(workers);
  if (coordinator_ != nullptr) stop({coordinator_.get()});

  std::error_code ignored;
  std::filesystem::remove_all(temp_dir_, ignored);
  if (problems.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(problems, "; "));
}

// ---- the command -------------------------------------------------------------

int RunLocal(const CommandContext& ctx, const LocalOptions& options) {
  absl::StatusOr<v1::SweepSpec> spec =
      LoadSweep({options.sweep_file, options.preset, options.run_predicted_oom}, options.max_jobs);
  if (!spec.ok()) return ReportError(ctx, spec.status());

  // From here a signal only sets the flag (and cancels the call in flight),
  // so that the children are always stopped before the CLI exits.
  ScopedInterruptHandler note_only(ctx.interrupts, [] {});
  auto interrupted = [&] { return ctx.interrupts != nullptr && ctx.interrupts->interrupted(); };

  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(options, spec->device().empty() ? "cpu" : spec->device(), ctx.interrupts);
  if (!cluster.ok()) return ReportError(ctx, cluster.status());

  int code = kExitInterrupted;
  if (!interrupted()) {
    // The private coordinator needs no token or TLS, whatever the CLI was given.
    CoordinatorClient client((*cluster)->address(), ctx.timeout_seconds, common::ClientSecurity());
    absl::StatusOr<v1::SubmitSweepResponse> submitted = client.SubmitSweep(*spec, options.max_jobs);
    if (!submitted.ok()) {
      code = ReportError(ctx, submitted.status());
    } else {
      *ctx.err << "sweep " << submitted->sweep_id() << " (" << spec->name()
               << "): " << submitted->jobs() << " jobs on " << options.workers << " local worker"
               << (options.workers == 1 ? "" : "s") << ", database " << options.db_path << "\n"
               << std::flush;
      code = WatchWithProgress(ctx, client, submitted->sweep_id(),
                               [&cluster] { return (*cluster)->CheckAlive(); });
      if ((code == kExitOk || code == kExitFailed) && !interrupted()) {
        absl::StatusOr<std::vector<v1::ResultRow>> rows =
            client.QueryResults(submitted->sweep_id(), false, ctx.interrupts);
        if (rows.ok()) {
          PrintResults(ctx, *rows, options.format, ResultsView{});
        } else {
          code = ReportError(ctx, rows.status());
        }
      }
    }
  }
  if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) {
    *ctx.err << "paradnn: warning: " << stopped.message() << "\n" << std::flush;
  }
  if (interrupted()) return kExitInterrupted;
  return code;
}

}  // namespace paradnn::client
