#include "client/local_startup.h"

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace paradnn::client {

using SteadyClock = std::chrono::steady_clock;

int ConnectedWorkers(const std::vector<v1::WorkerInfo>& listed) {
  return static_cast<int>(std::count_if(listed.begin(), listed.end(),
                                        [](const v1::WorkerInfo& w) { return w.connected(); }));
}

absl::Status StartHeldBackWorkers(LocalCluster& cluster,
                                  const std::vector<v1::WorkerInfo>& listed) {
  if (!cluster.workers_pending() || ConnectedWorkers(listed) == 0) return absl::OkStatus();
  return cluster.StartPendingWorkers();
}

std::string LastWarningOfLog(const std::string& log_tail) {
  const std::vector<absl::string_view> lines = absl::StrSplit(log_tail, '\n');
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    // spdlog's pattern: "[time] [logger] [level] message".
    for (absl::string_view level : {"] [warning] ", "] [error] "}) {
      const size_t at = line->find(level);
      if (at != absl::string_view::npos) return std::string(line->substr(at + level.size()));
    }
  }
  return "";
}

WorkerStartReport::WorkerStartReport(std::chrono::seconds every)
    : every_(every), start_(SteadyClock::now()), next_(start_ + every) {}

void WorkerStartReport::MaybeSay(const CommandContext& ctx, const LocalCluster& cluster,
                                 const std::vector<v1::WorkerInfo>& listed, int workers) {
  const SteadyClock::time_point now = SteadyClock::now();
  if (now < next_) return;
  next_ = now + every_;
  std::set<std::string> connected;
  for (const v1::WorkerInfo& w : listed) {
    if (w.connected()) connected.insert(w.worker_id());
  }
  if (static_cast<int>(connected.size()) >= workers) return;
  std::string text = absl::StrCat(
      "paradnn: ", connected.size(), " of ", workers, " local workers connected after ",
      std::chrono::duration_cast<std::chrono::seconds>(now - start_).count(), " s\n");
  for (const LocalCluster::WorkerLog& worker : cluster.WorkerLogs()) {
    if (connected.count(worker.id) > 0) continue;
    const std::string warning = LastWarningOfLog(FileTail(worker.log_path, 4000));
    if (warning.empty() || said_[worker.id] == warning) continue;
    said_[worker.id] = warning;
    absl::StrAppend(&text, "  ", worker.name, ": ", warning, "\n");
  }
  *ctx.err << (ctx.err_is_terminal ? "\n" : "") << text << std::flush;
}

absl::Status AwaitAllLocalWorkers(const CommandContext& ctx, CoordinatorClient& client,
                                  LocalCluster& cluster, int workers) {
  *ctx.err << "paradnn: --one-at-a-time: waiting for the " << workers
           << " local workers to connect before any job runs\n"
           << std::flush;
  const SteadyClock::time_point deadline = SteadyClock::now() + std::chrono::minutes(10);
  WorkerStartReport report(std::chrono::seconds(30));
  while (SteadyClock::now() < deadline) {
    if (ctx.interrupts != nullptr && ctx.interrupts->interrupted()) return absl::OkStatus();
    if (absl::Status alive = cluster.CheckAlive(); !alive.ok()) return alive;
    absl::StatusOr<std::vector<v1::WorkerInfo>> listed = client.ListWorkers();
    if (!listed.ok()) listed = std::vector<v1::WorkerInfo>();
    if (absl::Status started = StartHeldBackWorkers(cluster, *listed); !started.ok()) {
      return started;
    }
    if (ConnectedWorkers(*listed) >= workers) return absl::OkStatus();
    report.MaybeSay(ctx, cluster, *listed, workers);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "--one-at-a-time: the ", workers, " local workers did not all connect within 10 minutes"));
}

}  // namespace paradnn::client
