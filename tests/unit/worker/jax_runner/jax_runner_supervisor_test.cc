// The JAX runner (build/bin/paradnn_jax_runner.py) under the worker's own
// RunnerSupervisor and platform probe, on a host without JAX: the C++ framing
// writes the RunnerJob the Python side reads, the Python framing writes the
// events the C++ decoder reads, and the outcome is recorded without a crash.
// Skips (GTEST_SKIP) where JAX is installed: the no-JAX answer is what it
// checks.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <string>

#include "model/model_counts.h"
#include "model/model_spec.h"
#include "paradnn/v1/metrics.pb.h"
#include "worker/platform_probe.h"
#include "worker/runner_supervisor.h"

#ifndef PARADNN_JAX_RUNNER
#error "PARADNN_JAX_RUNNER must name build/bin/paradnn_jax_runner.py"
#endif
#ifndef PARADNN_JAX_PYTHON
#error "PARADNN_JAX_PYTHON must name the runner's interpreter"
#endif

namespace paradnn::worker {
namespace {

bool JaxInstalled() {
  const std::string command = std::string(PARADNN_JAX_PYTHON) + " -c 'import jax' 2>/dev/null";
  return std::system(command.c_str()) == 0;
}

v1::Measurement RunJob(const v1::RunnerJob& job) {
  boost::asio::io_context io;
  RunnerSupervisorOptions options;
  options.runner_path = PARADNN_JAX_RUNNER;
  int completions = 0;
  v1::Measurement result;
  auto supervisor = RunnerSupervisor::Start(io, options, job, nullptr, [&](v1::Measurement m) {
    ++completions;
    result = std::move(m);
  });
  io.run_for(std::chrono::seconds(60));
  EXPECT_EQ(completions, 1);
  return result;
}

v1::RunnerJob FcJob() {
  v1::RunnerJob job;
  v1::ModelConfig* config = job.mutable_config();
  config->set_family("fc");
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"layer", 4},
                                   {"node", 1024},
                                   {"input", 2000},
                                   {"output", 200},
                                   {"batch", 256}}) {
    (*config->mutable_params())[key] = value;
  }
  config->set_precision("bfloat16");
  job.set_device("cuda");
  job.mutable_settings()->set_timeout_seconds(60);
  // Counted as the coordinator counts the jobs it assigns.
  absl::StatusOr<model::ModelSpec> spec = model::ParseModelSpec(*config, model::FieldStyle::kProto);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (spec.ok()) *job.mutable_counts() = model::CountModel(*spec);
  return job;
}

TEST(JaxRunnerSupervisorTest, JobWithoutJaxEndsInAnExplainedErrorWithItsConfig) {
  if (JaxInstalled()) GTEST_SKIP() << "JAX is installed: this checks the answer without it";
  const v1::Measurement m = RunJob(FcJob());
  EXPECT_EQ(m.outcome(), v1::ERROR) << m.error();
  EXPECT_NE(m.error().find("JAX is not installed"), std::string::npos) << m.error();
  EXPECT_EQ(m.config().family(), "fc");
  EXPECT_EQ(m.config().params().at("node"), 1024);
  EXPECT_EQ(m.config().precision(), "bfloat16");
  EXPECT_EQ(m.config().optimizer(), "rmsprop");
  // The job's counts need no JAX: they come with it.
  EXPECT_EQ(m.counts().params(), 2001 * 1024 + 3 * 1025 * 1024 + 1025 * 200);
  EXPECT_EQ(m.counts().model_flops(), 6.0 * m.counts().macs_per_example() * 256);
  EXPECT_EQ(m.counts().executed_flops(), FcJob().counts().executed_flops());
  EXPECT_GT(m.counts().executed_flops(), 0);
  EXPECT_EQ(m.device(), "cuda");
}

TEST(JaxRunnerSupervisorTest, LargeFramesCrossBothWays) {
  // An option of 200 000 bytes: the job frame (C++ -> Python) and the result
  // frame carrying the config back (Python -> C++) both need a length prefix
  // beyond 16 bits; the unknown option makes the answer an ERROR naming it.
  v1::RunnerJob job = FcJob();
  std::string big(200000, 'x');
  big[0] = 'a';
  big[199999] = 'z';
  (*job.mutable_config()->mutable_options())["note"] = big;
  const v1::Measurement m = RunJob(job);
  EXPECT_EQ(m.outcome(), v1::ERROR);
  EXPECT_NE(m.error().find("config.options.note"), std::string::npos) << m.error();
  ASSERT_EQ(m.config().options().count("note"), 1u);
  EXPECT_EQ(m.config().options().at("note"), big);
}

TEST(JaxRunnerSupervisorTest, PlatformWithoutJaxFallsBackWithTheReason) {
  if (JaxInstalled()) GTEST_SKIP() << "JAX is installed: this checks the answer without it";
  absl::StatusOr<v1::Platform> direct =
      QueryRunnerPlatform(PARADNN_JAX_RUNNER, std::chrono::seconds(60));
  ASSERT_FALSE(direct.ok());
  EXPECT_NE(std::string(direct.status().message()).find("JAX is not installed"), std::string::npos)
      << direct.status().message();
  const v1::Platform platform = ProbePlatform(PARADNN_JAX_RUNNER, "cuda", std::chrono::seconds(60));
  EXPECT_EQ(platform.device_kind(), "cuda");
  EXPECT_NE(platform.device_name().find("runner --platform failed"), std::string::npos)
      << platform.device_name();
}

}  // namespace
}  // namespace paradnn::worker
