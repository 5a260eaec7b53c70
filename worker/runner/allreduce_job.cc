#include "worker/runner/allreduce_job.h"

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/run_settings.h"
#include "model/families/allreduce.h"
#include "worker/runner/data_parallel.h"
#include "worker/runner/gang_training.h"
#include "worker/runner/job_devices.h"
#include "worker/runner/timing_loop.h"

namespace paradnn::runner {

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
}

}  // namespace paradnn::runner
