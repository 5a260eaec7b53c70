// `paradnn watch` and the watch of run/submit/local: a progress line until
// the sweep ends, riding through coordinator restarts.
#include <algorithm>
#include <chrono>
#include <thread>

#include "client/commands.h"
#include "client/progress.h"
#include "common/clock.h"
#include "common/state_names.h"

namespace paradnn::client {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The longest wait between two attempts to reach a coordinator that went
// away (the workers' default --max-backoff-ms is of this order too).
constexpr int kMaxReconnectBackoffMs = 5000;

// Sleeps `duration` in short slices; false as soon as an interrupt arrived.
bool SleepUnlessInterrupted(InterruptWatcher* interrupts, std::chrono::milliseconds duration) {
  const SteadyClock::time_point until = SteadyClock::now() + duration;
  while (SteadyClock::now() < until) {
    if (interrupts != nullptr && interrupts->interrupted()) return false;
    std::this_thread::sleep_for(
        std::min<SteadyClock::duration>(std::chrono::milliseconds(50), until - SteadyClock::now()));
  }
  return interrupts == nullptr || !interrupts->interrupted();
}

}  // namespace

int WatchWithProgress(const CommandContext& ctx, CoordinatorClient& client, int64_t sweep_id,
                      const std::function<absl::Status()>& health) {
  ProgressPrinter printer(ctx.err, ctx.err_is_terminal);
  const SteadyClock::time_point start = SteadyClock::now();
  bool reconnecting = false;
  bool reached = false;  // a coordinator that never answered is not waited for
  auto on_tick = [&](const v1::SweepStatus& status, double elapsed) {
    reached = true;
    if (reconnecting) {
      reconnecting = false;
      *ctx.err << "paradnn: the coordinator at " << client.address() << " is back; watching sweep "
               << sweep_id << " again\n"
               << std::flush;
    }
    printer.Show(status, elapsed, common::SecondsBetween(start, SteadyClock::now()));
  };
  absl::StatusOr<v1::SweepStatus> final_status =
      client.Watch(sweep_id, ctx.interrupts, on_tick, health);
  // A coordinator that restarts (an upgrade, a restart in place, a host
  // reboot) comes back with the sweep: the watch waits for it as workers
  // do. Not for a private coordinator (`health`), which does not come back.
  for (int backoff_ms = 250; reached && !health && !final_status.ok() &&
                             final_status.status().code() == absl::StatusCode::kUnavailable;
       backoff_ms = std::min(backoff_ms * 2, kMaxReconnectBackoffMs)) {
    if (!reconnecting) {
      printer.Finish();
      *ctx.err << "paradnn: lost the coordinator at " << client.address() << " ("
               << final_status.status().message()
               << "); waiting for it to come back, as the workers do (Ctrl-C stops watching)\n"
               << std::flush;
      reconnecting = true;
    }
    if (!SleepUnlessInterrupted(ctx.interrupts, std::chrono::milliseconds(backoff_ms))) {
      final_status = absl::CancelledError("interrupted while waiting for the coordinator");
      break;
    }
    final_status = client.Watch(sweep_id, ctx.interrupts, on_tick, health);
  }
  printer.Finish();
  if (!final_status.ok()) return ReportError(ctx, final_status.status());
  if (final_status->reused_results() > 0) {
    *ctx.err << "paradnn: " << final_status->reused_results() << " of "
             << final_status->total_jobs()
             << " jobs took results measured by earlier sweeps on this platform (same "
                "fingerprint, harness and settings); --fresh measures them again\n"
             << std::flush;
  }
  const int code = ExitCodeForSweep(*final_status);
  if (code != kExitOk) {
    const v1::SweepStatus& s = *final_status;
    *ctx.err << "paradnn: sweep " << s.sweep_id() << " (" << s.name() << ") is "
             << common::SweepStateName(s.state()) << "; "
             << s.total_jobs() - s.done_jobs() - s.predicted_jobs() << " of " << s.total_jobs()
             << " jobs have no result (" << s.failed_jobs() << " failed, " << s.cancelled_jobs()
             << " cancelled)\n"
             << std::flush;
  }
  return code;
}

}  // namespace paradnn::client
