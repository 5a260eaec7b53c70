#include "worker/runner/timing_loop.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"
#include "common/run_settings.h"
#include "worker/runner/gang_training.h"
#include "worker/runner/job_devices.h"
#include "worker/runner/step_stats.h"

namespace paradnn::runner {
namespace {

void TimingLog(JobObserver* observer, const std::string& line) {
  if (observer != nullptr) observer->OnLog(line);
}

void StreamStep(JobObserver* observer, bool stream, int step, double seconds, bool warmup,
                double loss) {
  if (!stream || observer == nullptr) return;
  v1::StepMetric metric;
  metric.set_step(step);
  metric.set_seconds(seconds);
  metric.set_warmup(warmup);
  metric.set_loss(loss);
  observer->OnStep(metric);
}

// Warm-up steps until `warmup` is satisfied (rank 0's); `step` counts them.
void RunWarmup(const StepLoop& loop, const torch::Device& device, bool stream,
               JobObserver* observer, WarmupRule* warmup, int* step, v1::Measurement* m) {
  const auto warmup_start = SteadyClock::now();
  for (bool done = false; !done;) {
    const auto t0 = SteadyClock::now();
    torch::Tensor loss = loop.step();
    SynchronizeDevice(device);
    const double loss_value = loss.item<double>();
    const double seconds = SecondsSince(t0);
    if (*step == 0) m->set_first_loss(loss_value);
    StreamStep(observer, stream, ++*step, seconds, /*warmup=*/true, loss_value);
    done = loop.agree(warmup->Add(seconds) ? 1 : 0) != 0;
  }
  m->set_warmup_seconds(SecondsSince(warmup_start));
  TimingLog(observer,
            absl::StrFormat("warm-up: %d steps in %.3f s", warmup->steps(), m->warmup_seconds()));
}

// The timed steps, in blocks of `block` steps, until rank 0's `rule` stops
// them: each sample's seconds per step in `seconds_per_step`, the stop
// reason rank 0's. A gang votes after every `vote_every`-th sample and after
// the last sample `rule` allows (every rank counts the same samples, so all
// vote together); rank 0's reason waits for the next vote, and the samples
// taken meanwhile are kept. Throws what the step throws.
StopReason TimeSteps(const StepLoop& loop, const torch::Device& device, bool stream,
                     const TimedSteps& plan, int max_samples, JobObserver* observer,
                     TimingStopRule* rule, int* step, std::vector<double>* seconds_per_step,
                     v1::Measurement* m) {
  StopReason mine = StopReason::kNone;
  for (int samples = 1;; ++samples) {
    if (loop.data_parallel != nullptr) loop.data_parallel->BeginSample();
    const auto t0 = SteadyClock::now();
    torch::Tensor loss;
    for (int i = 0; i < plan.block; ++i) loss = loop.step();
    // Waiting for the device (and reading the loss, which waits too)
    // belongs inside the timing, unless the step ended when step() returned.
    double seconds = SecondsSince(t0) / plan.block;
    SynchronizeDevice(device);
    const double loss_value = loop.time_each_step ? 0.0 : loss.item<double>();
    if (!loop.time_each_step) seconds = SecondsSince(t0) / plan.block;
    if (loop.data_parallel != nullptr) loop.data_parallel->EndSample(plan.block);
    seconds_per_step->push_back(seconds);
    m->set_last_loss(loss_value);
    *step += plan.block;
    StreamStep(observer, stream, *step, seconds, /*warmup=*/false, loss_value);
    if (mine == StopReason::kNone && rule->Add(seconds, plan.block)) mine = rule->reason();
    if (samples % plan.vote_every != 0 && samples < max_samples) continue;
    // The vote is outside the sample: one one-element all-reduce.
    const auto agreed = static_cast<StopReason>(loop.agree(static_cast<int64_t>(mine)));
    if (agreed != StopReason::kNone) return agreed;
  }
}

}  // namespace

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

TimedSteps WarmUpAndTime(const StepLoop& loop, const v1::RunSettings& settings,
                         const torch::Device& device, bool stream,
                         SteadyClock::time_point build_start, JobObserver* observer,
                         v1::Measurement* m) {
  TimedSteps timed;
  int step = 0;
  WarmupRule warmup(settings.warmup_steps(), settings.max_seconds());
  if (observer != nullptr) observer->BeforeWarmup();
  RunWarmup(loop, device, stream, observer, &warmup, &step, m);
  timed.warmup_steps = warmup.steps();

  // Short steps are timed in blocks: one clock read and one loss read (the
  // device sync) per block, so neither dominates what is measured.
  // max_steps bounds the steps executed, min_steps the samples: blocks
  // shrink so that both hold.
  const int block_steps =
      loop.time_each_step
          ? 1
          : std::max(1, std::min(TimingBlockSteps(warmup.fastest_seconds()),
                                 settings.max_steps() / std::max(2, settings.min_steps())));
  timed.block = static_cast<int>(loop.agree(block_steps));
  if (timed.block > 1) {
    TimingLog(observer,
              absl::StrFormat("timing in blocks of %d steps (fastest warm-up step %.1f us)",
                              timed.block, warmup.fastest_seconds() * 1e6));
  }
  if (loop.agree_is_collective) {
    timed.vote_every =
        static_cast<int>(loop.agree(VoteEverySamples(warmup.median_seconds() * timed.block)));
  }
  if (timed.vote_every > 1) {
    TimingLog(observer,
              absl::StrFormat("the gang agrees on stopping every %d samples", timed.vote_every));
  }
  const int max_samples = std::max(2, settings.max_steps() / timed.block);
  TimingStopRule rule(settings.ci(), settings.max_seconds(), settings.min_steps(), max_samples);
  // min_steps are taken past max_seconds, but not past the worker's
  // deadline for the whole job: timing gives up at 80 % of it.
  const double deadline_s = common::JobDeadlineSeconds(settings);
  rule.set_hard_limit_seconds(
      std::max(settings.max_seconds(), 0.8 * deadline_s - SecondsSince(build_start)));
  const auto timed_start = SteadyClock::now();
  timed.stopped = TimeSteps(loop, device, stream, timed, max_samples, observer, &rule, &step,
                            &timed.seconds_per_step, m);
  m->set_timed_seconds(SecondsSince(timed_start));
  return timed;
}

void RecordTimedSteps(const TimedSteps& timed, const v1::RunSettings& settings,
                      v1::Measurement* m) {
  if (static_cast<int>(timed.seconds_per_step.size()) < settings.min_steps()) {
    m->add_suspect(absl::StrFormat(
        "only %d timed steps of the %d asked for (min_steps): the job's %.0f s deadline "
        "(run.timeout_seconds) left no time for more",
        static_cast<int>(timed.seconds_per_step.size()), settings.min_steps(),
        common::JobDeadlineSeconds(settings)));
  }
  v1::StepStats stats = ComputeStepStats(timed.seconds_per_step);
  stats.set_warmup_steps(timed.warmup_steps);
  stats.set_stop_reason(StopReasonName(timed.stopped));
  stats.set_block_steps(timed.block);
  *m->mutable_stats() = stats;
  for (double s : timed.seconds_per_step) m->add_step_seconds(s);
}

}  // namespace paradnn::runner
