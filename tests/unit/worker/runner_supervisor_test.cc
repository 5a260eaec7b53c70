// RunnerSupervisor against real child processes: fake_runner (a LibTorch-
// free stand-in speaking the runner protocol) in each of its behaviors.
#include "worker/runner_supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <initializer_list>
#include <string>
#include <vector>

#include "paradnn/v1/metrics.pb.h"
#include "tests/unit/worker/fake_runner_path.h"

namespace paradnn::worker {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A test hangs no longer than this even if the supervisor never completes.
constexpr std::chrono::seconds kTestDeadline{20};

v1::RunnerJob MakeJob(const std::string& behavior, double timeout_seconds = 20) {
  v1::RunnerJob job;
  job.mutable_config()->set_family("fc");
  (*job.mutable_config()->mutable_params())["layer"] = 4;
  (*job.mutable_config()->mutable_options())["behavior"] = behavior;
  job.mutable_settings()->set_timeout_seconds(timeout_seconds);
  job.set_device("cpu");
  job.set_stream_steps(true);
  return job;
}

// Every test runs twice: with a fresh runner per job, and with job
// processes forked from a zygote of the same runner.
bool g_use_zygote = false;

std::shared_ptr<RunnerZygote> FakeRunnerZygote() {
  static std::shared_ptr<RunnerZygote>* const zygote = [] {
    absl::StatusOr<std::unique_ptr<RunnerZygote>> started =
        RunnerZygote::Start(PARADNN_FAKE_RUNNER, std::chrono::seconds(20));
    EXPECT_TRUE(started.ok()) << started.status();
    return new std::shared_ptr<RunnerZygote>(started.ok() ? std::move(*started) : nullptr);
  }();
  return *zygote;
}

RunnerSupervisorOptions FakeRunnerOptions() {
  RunnerSupervisorOptions options;
  options.runner_path = PARADNN_FAKE_RUNNER;
  if (g_use_zygote) options.zygote = FakeRunnerZygote();
  return options;
}

class RunnerSupervisorTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { g_use_zygote = GetParam(); }
  void TearDown() override { g_use_zygote = false; }
};

struct JobRun {
  int completions = 0;
  v1::Measurement measurement;
  std::vector<v1::StepMetric> steps;
  pid_t pid = -1;
  milliseconds elapsed{0};
  bool io_drained = false;  // the io_context ran out of work: nothing left pending
};

// Runs `job` to completion on a private io_context. `on_step` may act on
// the supervisor (e.g. cancel it) from inside the step callback.
JobRun RunJob(v1::RunnerJob job, RunnerSupervisorOptions options = FakeRunnerOptions(),
              std::function<void(RunnerSupervisor&)> on_step = nullptr) {
  boost::asio::io_context io;
  JobRun run;
  std::shared_ptr<RunnerSupervisor> supervisor;
  const steady_clock::time_point start = steady_clock::now();
  supervisor = RunnerSupervisor::Start(
      io, std::move(options), std::move(job),
      [&](const v1::StepMetric& step) {
        run.steps.push_back(step);
        if (on_step) on_step(*supervisor);
      },
      [&](v1::Measurement measurement) {
        ++run.completions;
        run.measurement = std::move(measurement);
        run.elapsed = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
      });
  run.pid = supervisor->pid();
  io.run_for(kTestDeadline);
  run.io_drained = io.stopped();
  EXPECT_TRUE(supervisor->completed());
  return run;
}

// True when no process of group `pgid` exists any more.
bool ProcessGroupGone(pid_t pgid) { return ::kill(-pgid, 0) == -1 && errno == ESRCH; }

void ExpectConfigFromJob(const v1::Measurement& m) {
  EXPECT_EQ(m.config().family(), "fc");
  EXPECT_EQ(m.config().params().at("layer"), 4);
  EXPECT_EQ(m.device(), "cpu");
}

// Expects `run` to have completed once as CRASHED, its error naming every
// one of `error_parts` (what happened and why).
void ExpectCrashedNaming(const JobRun& run, std::initializer_list<const char*> error_parts) {
  EXPECT_EQ(run.completions, 1);
  EXPECT_EQ(run.measurement.outcome(), v1::CRASHED);
  for (const char* part : error_parts) {
    EXPECT_NE(run.measurement.error().find(part), std::string::npos)
        << "no '" << part << "' in: " << run.measurement.error();
  }
}

TEST_P(RunnerSupervisorTest, OkResultWithStepsForwarded) {
  JobRun run = RunJob(MakeJob("ok"));
  EXPECT_EQ(run.completions, 1);
  EXPECT_TRUE(run.io_drained);
  EXPECT_EQ(run.measurement.outcome(), v1::OK) << run.measurement.error();
  EXPECT_DOUBLE_EQ(run.measurement.examples_per_sec(), 123);
  EXPECT_TRUE(run.measurement.error().empty());
  ExpectConfigFromJob(run.measurement);
  ASSERT_EQ(run.steps.size(), 3u);
  EXPECT_EQ(run.steps[0].step(), 1);
  EXPECT_EQ(run.steps[2].step(), 3);
  EXPECT_TRUE(ProcessGroupGone(run.pid));
}

TEST_P(RunnerSupervisorTest, LogEventsAndStderrDoNotDisturbTheResult) {
  JobRun run = RunJob(MakeJob("log_ok"));
  EXPECT_EQ(run.completions, 1);
  EXPECT_EQ(run.measurement.outcome(), v1::OK);
  EXPECT_TRUE(run.measurement.error().empty());
}

TEST_P(RunnerSupervisorTest, AbortIsCrashedWithTheSignalNamed) {
  JobRun run = RunJob(MakeJob("crash"));
  ExpectCrashedNaming(run, {"killed by signal 6", "about to abort"});
  EXPECT_TRUE(run.io_drained);
  ExpectConfigFromJob(run.measurement);
}

TEST_P(RunnerSupervisorTest, NonZeroExitIsCrashedWithStatusAndStderr) {
  JobRun run = RunJob(MakeJob("exit3"));
  ExpectCrashedNaming(run, {"exited with status 3", "out of cheese"});
  ExpectConfigFromJob(run.measurement);
}

TEST_P(RunnerSupervisorTest, SigkillFromOutsideHintsAtOutOfMemory) {
  ExpectCrashedNaming(RunJob(MakeJob("sigkill")), {"killed by signal 9", "possibly out of memory"});
}

TEST_P(RunnerSupervisorTest, CleanExitWithoutResultIsCrashed) {
  ExpectCrashedNaming(RunJob(MakeJob("silent_exit")), {"without writing a result"});
}

TEST_P(RunnerSupervisorTest, DeadlineKillsTheProcessGroup) {
  JobRun run = RunJob(MakeJob("hang", /*timeout_seconds=*/0.5));
  EXPECT_EQ(run.completions, 1);
  EXPECT_TRUE(run.io_drained);
  EXPECT_EQ(run.measurement.outcome(), v1::TIMEOUT);
  EXPECT_NE(run.measurement.error().find("deadline of 0.5 s"), std::string::npos)
      << run.measurement.error();
  EXPECT_GE(run.elapsed, milliseconds(500));
  EXPECT_LT(run.elapsed, milliseconds(5000));
  ExpectConfigFromJob(run.measurement);
  EXPECT_TRUE(ProcessGroupGone(run.pid));
}

TEST_P(RunnerSupervisorTest, CancelMidRun) {
  int cancels = 0;
  JobRun run =
      RunJob(MakeJob("steps_then_hang"), FakeRunnerOptions(), [&](RunnerSupervisor& supervisor) {
        ++cancels;
        supervisor.Cancel("cancelled by the test");
      });
  EXPECT_GE(cancels, 1);
  EXPECT_EQ(run.completions, 1);
  EXPECT_TRUE(run.io_drained);
  EXPECT_EQ(run.measurement.outcome(), v1::CANCELLED);
  EXPECT_EQ(run.measurement.error(), "cancelled by the test");
  ExpectConfigFromJob(run.measurement);
  EXPECT_LT(run.elapsed, milliseconds(5000));
  EXPECT_TRUE(ProcessGroupGone(run.pid));
}

TEST_P(RunnerSupervisorTest, GarbageOnStdoutIsCrashedAtOnce) {
  JobRun run = RunJob(MakeJob("garbage"));
  ExpectCrashedNaming(run, {"runner wrote invalid output"});
  EXPECT_TRUE(run.io_drained);
  // Well before the 20 s deadline: the runner is killed on the first bad frame.
  EXPECT_LT(run.elapsed, milliseconds(5000));
  EXPECT_TRUE(ProcessGroupGone(run.pid));
}

TEST_P(RunnerSupervisorTest, ResultStandsWhenTheRunnerLingersAfterIt) {
  RunnerSupervisorOptions options = FakeRunnerOptions();
  options.post_result_grace = milliseconds(200);
  JobRun run = RunJob(MakeJob("ok_then_hang"), options);
  EXPECT_EQ(run.completions, 1);
  EXPECT_EQ(run.measurement.outcome(), v1::OK);
  EXPECT_LT(run.elapsed, milliseconds(5000));
  EXPECT_TRUE(ProcessGroupGone(run.pid));
}

TEST_P(RunnerSupervisorTest, MissingRunnerIsCrashedAndReportedAsynchronously) {
  RunnerSupervisorOptions options;
  options.runner_path = "/nonexistent/paradnn-runner";
  JobRun run = RunJob(MakeJob("ok"), options);
  ExpectCrashedNaming(run, {"could not start the runner", "/nonexistent/paradnn-runner"});
  EXPECT_EQ(run.pid, -1);
  ExpectConfigFromJob(run.measurement);
}

TEST_P(RunnerSupervisorTest, CompletionNeverRunsInsideStartOrCancel) {
  boost::asio::io_context io;
  int completions = 0;
  std::shared_ptr<RunnerSupervisor> supervisor = RunnerSupervisor::Start(
      io, FakeRunnerOptions(), MakeJob("hang"), nullptr, [&](v1::Measurement) { ++completions; });
  supervisor->Cancel("first");
  supervisor->Cancel("second");
  EXPECT_EQ(completions, 0);
  io.run_for(kTestDeadline);
  EXPECT_EQ(completions, 1);
  EXPECT_TRUE(supervisor->completed());
  supervisor->Cancel("after completion");  // a no-op
  EXPECT_TRUE(ProcessGroupGone(supervisor->pid()));
}

TEST_P(RunnerSupervisorTest, SeveralJobsInParallelEachCompleteOnce) {
  boost::asio::io_context io;
  const std::vector<std::string> behaviors = {"ok", "crash", "exit3", "garbage", "slow_ok"};
  std::vector<int> completions(behaviors.size(), 0);
  std::vector<v1::Outcome> outcomes(behaviors.size());
  std::vector<std::shared_ptr<RunnerSupervisor>> supervisors;
  for (size_t i = 0; i < behaviors.size(); ++i) {
    supervisors.push_back(RunnerSupervisor::Start(io, FakeRunnerOptions(), MakeJob(behaviors[i]),
                                                  nullptr, [&, i](v1::Measurement m) {
                                                    ++completions[i];
                                                    outcomes[i] = m.outcome();
                                                  }));
  }
  io.run_for(kTestDeadline);
  EXPECT_TRUE(io.stopped());
  for (size_t i = 0; i < behaviors.size(); ++i) EXPECT_EQ(completions[i], 1) << behaviors[i];
  EXPECT_EQ(outcomes[0], v1::OK);
  EXPECT_EQ(outcomes[1], v1::CRASHED);
  EXPECT_EQ(outcomes[2], v1::CRASHED);
  EXPECT_EQ(outcomes[3], v1::CRASHED);
  EXPECT_EQ(outcomes[4], v1::OK);
}

INSTANTIATE_TEST_SUITE_P(FreshOrForked, RunnerSupervisorTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Zygote" : "FreshRunner";
                         });

}  // namespace
}  // namespace paradnn::worker
