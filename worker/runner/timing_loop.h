// The timing loop of every job that times steps (docs/measurement.md,
// "Warm-up" and "Timed steps and the stopping rule"): warm-up steps until
// their rule is met, then timed samples of `block` steps until the stopping
// rule says so; under data parallelism rank 0 decides both for every rank.
// Training jobs (trainer.cc) and the allreduce family (allreduce_job.cc)
// share it, so that a bare collective is timed exactly as a training step.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_TIMING_LOOP_H_
#define PARADNN_WORKER_RUNNER_TIMING_LOOP_H_

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/stop_rule.h"
#include "worker/runner/trainer.h"

namespace paradnn::runner {

class DataParallelRun;

using SteadyClock = std::chrono::steady_clock;
double SecondsSince(SteadyClock::time_point start);

// One step of the job (every replica's, under data parallelism); returns its
// loss, or any 0-dim tensor whose read waits for the step.
using StepFn = std::function<torch::Tensor()>;
// Rank 0's decision on every rank of a data-parallel gang (so that all run
// the same steps); the value itself otherwise.
using AgreeFn = std::function<int64_t(int64_t)>;

// What the loop drives.
struct StepLoop {
  StepFn step;
  AgreeFn agree = [](int64_t mine) { return mine; };
  // Whether agree() is a collective of a gang: then the timed samples vote
  // on stopping only every VoteEverySamples (stop_rule.h) samples.
  bool agree_is_collective = false;
  // Records its step parts around each timed sample; may be null.
  DataParallelRun* data_parallel = nullptr;
  // Every step its own sample, never blocks, timed to step()'s return and
  // its loss not read: for steps that end on the host when step() returns
  // and whose loss is a constant (a CPU collective's wait()), where a
  // sample costs no more than a clock read (docs/measurement.md "Stalls").
  bool time_each_step = false;
};

// What the loop timed.
struct TimedSteps {
  std::vector<double> seconds_per_step;  // one per sample: its time / block
  StopReason stopped = StopReason::kNone;
  int block = 1;
  int vote_every = 1;  // samples between the gang's votes on stopping
  int warmup_steps = 0;
};

// Warm-up, then timed samples until rank 0's stopping rule ends them; fills
// m's warmup_seconds, first_loss, last_loss and timed_seconds. Timing gives
// up at 80 % of the job's deadline counted from `build_start`. Throws what
// the step throws.
TimedSteps WarmUpAndTime(const StepLoop& loop, const v1::RunSettings& settings,
                         const torch::Device& device, bool stream,
                         SteadyClock::time_point build_start, JobObserver* observer,
                         v1::Measurement* m);

// m's stats and step_seconds from `timed` (after a gang's slowest-rank
// merge), and a suspect when fewer samples than min_steps were taken.
void RecordTimedSteps(const TimedSteps& timed, const v1::RunSettings& settings, v1::Measurement* m);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_TIMING_LOOP_H_
