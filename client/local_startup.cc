#include "client/local_startup.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace paradnn::client {

using SteadyClock = std::chrono::steady_clock;

absl::Status AwaitAllLocalWorkers(const CommandContext& ctx, CoordinatorClient& client,
                                  LocalCluster& cluster, int workers) {
  *ctx.err << "paradnn: --one-at-a-time: waiting for the " << workers
           << " local workers to connect before any job runs\n"
           << std::flush;
  const SteadyClock::time_point deadline = SteadyClock::now() + std::chrono::minutes(10);
  while (SteadyClock::now() < deadline) {
    if (ctx.interrupts != nullptr && ctx.interrupts->interrupted()) return absl::OkStatus();
    if (absl::Status alive = cluster.CheckAlive(); !alive.ok()) return alive;
    absl::StatusOr<std::vector<v1::WorkerInfo>> listed = client.ListWorkers();
    const int connected =
        listed.ok()
            ? static_cast<int>(std::count_if(listed->begin(), listed->end(),
                                             [](const v1::WorkerInfo& w) { return w.connected(); }))
            : 0;
    if (connected > 0 && cluster.workers_pending()) {
      if (absl::Status started = cluster.StartPendingWorkers(); !started.ok()) return started;
    }
    if (connected >= workers) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "--one-at-a-time: the ", workers, " local workers did not all connect within 10 minutes"));
}

}  // namespace paradnn::client
