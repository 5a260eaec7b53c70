#include "worker/runner/allreduce_job.h"

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/run_settings.h"
#include "model/families/allreduce.h"
#include "worker/runner/data_parallel.h"
#include "worker/runner/gang_training.h"
#include "worker/runner/job_devices.h"
#include "worker/runner/step_stats.h"
#include "worker/runner/timing_loop.h"

namespace paradnn::runner {
namespace {

// A Gloo job says why it stalls when stalls take over this share of its
// timed time, or when the median op itself is a stall: over kStallFactor
// times the fastest tenth's (most ops waited).
constexpr double kGlooStallSuspectShare = 0.25;

bool GlooStalls(const v1::StepStats& stats) {
  return stats.stall_share() > kGlooStallSuspectShare ||
         stats.median_s() > kStallFactor * stats.p10_s();
}

// Why a CPU all-reduce stalls, diagnosed on the 2-vCPU hosts here (perf
// sched timehist; docs/measurement.md "Stalls"): Gloo's device thread
// handles a pair's socket events only when it gets the pair's lock
// (try_lock; gloo/transport/tcp/pair.cc) and otherwise returns to a
// level-triggered epoll that reports the same event at once, so while a
// worker thread that holds the lock waits for the CPU the device thread
// spins, until the scheduler's tick ends its slice.
std::string GlooStallSuspect(const v1::StepStats& stats) {
  return absl::StrFormat(
      "stalls: the fastest tenth of the ops took %.3f ms or less, the median %.3f ms, the mean "
      "%.3f ms (%d of %d ops over %.0fx the median, %.0f %% of the timed time); the likely "
      "cause, diagnosed on the 2-vCPU hosts paradnn is tested on: Gloo's device thread spins on "
      "a pair whose lock a worker thread holds while that worker waits for the CPU, until the "
      "scheduler's tick (about 4 ms) ends the spin; the stack setting "
      "env.PARADNN_GLOO_DEVICE_NICE: 19 measures Gloo without it (docs/measurement.md "
      "\"Stalls\")",
      stats.p10_s() * 1e3, stats.median_s() * 1e3, stats.mean_s() * 1e3, stats.stalled_samples(),
      stats.steps(), kStallFactor, stats.stall_share() * 100);
}

}  // namespace

void MeasureAllReduce(const v1::RunnerJob& job, const model::ModelSpec& spec,
                      const v1::RunSettings& settings, const std::vector<torch::Device>& devices,
                      JobObserver* observer, v1::Measurement* m) {
  const auto build_start = SteadyClock::now();
  const torch::Device& device = devices.front();
  ResetDevicePeak(device);
  const std::string backend = CollectiveBackendFor(device.type()).value();
  // Without a gang, a group of one: its collectives cannot wait on anyone,
  // and the job's deadline bounds them as it bounds any step.
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(common::JobDeadlineSeconds(settings) * 1000));
  DataParallelRun run(job, backend, device, model::AllReduceBytes(spec), timeout);
  m->set_build_seconds(SecondsSince(build_start));
  if (observer != nullptr) observer->OnLog(absl::StrCat("allreduce: ", run.Describe()));

  StepLoop loop;
  loop.step = [&run] { return run.Step(); };
  loop.agree = [&run](int64_t mine) { return run.FollowRankZero(mine); };
  loop.agree_is_collective = run.in_gang();
  loop.data_parallel = &run;
  // Gloo's wait() returns when the all-reduce is done, so each op is timed
  // on its own: blocks would fold the ops that stalled into every sample,
  // and whether a job took blocks would depend on its warm-up's luck. On an
  // accelerator ops queue, and a sync per op would add its latency: blocks.
  loop.time_each_step = device.is_cpu();
  TimedSteps timed;
  run.RunPublishingFailures([&] {
    timed = WarmUpAndTime(loop, settings, device, job.stream_steps(), build_start, observer, m);
  });
  m->set_peak_device_memory_bytes(DevicePeakBytes(device));
  m->set_subnormal_gradient_fraction(-1);  // no gradients
  run.Finish(&timed.seconds_per_step, m);
  RecordTimedSteps(timed, settings, m);
  if (backend == "gloo" && GlooStalls(m->stats())) {
    m->add_suspect(GlooStallSuspect(m->stats()));
  }
}

}  // namespace paradnn::runner
