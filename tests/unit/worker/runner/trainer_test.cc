#include "worker/runner/trainer.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "hostfacts/host_facts.h"
#include "tests/unit/worker/runner/tiny_fc.h"
#include "worker/runner/platform.h"
#include "worker/runner/suspect_conditions.h"

namespace paradnn::runner {
namespace {

v1::RunnerJob TinyJob(const std::string& precision = "float32") {
  v1::RunnerJob job;
  *job.mutable_config() = TinyFcConfig(precision);
  v1::RunSettings& s = *job.mutable_settings();
  s.set_warmup_steps(2);
  s.set_min_steps(5);
  s.set_max_steps(40);
  s.set_max_seconds(2);
  s.set_intra_op_threads(1);
  job.set_device("cpu");
  job.set_stream_steps(true);
  return job;
}

class RecordingObserver : public JobObserver {
 public:
  void OnStep(const v1::StepMetric& step) override { steps.push_back(step); }
  void OnLog(const std::string& line) override { logs.push_back(line); }
  std::vector<v1::StepMetric> steps;
  std::vector<std::string> logs;
};

TEST(TrainerTest, MeasuresATinyModel) {
  RecordingObserver observer;
  const v1::Measurement m = RunJob(TinyJob(), &observer);
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.device(), "cpu");
  EXPECT_EQ(m.config().optimizer(), "rmsprop");
  EXPECT_EQ(m.counts().params(), 33 * 16 + 17 * 16 + 17 * 4);
  const v1::StepStats& s = m.stats();
  EXPECT_GE(s.steps(), 5);
  EXPECT_LE(s.steps(), 40);
  EXPECT_EQ(m.step_seconds_size(), s.steps());
  EXPECT_GE(s.warmup_steps(), 2);
  EXPECT_TRUE(s.stop_reason() == "ci" || s.stop_reason() == "max_steps" ||
              s.stop_reason() == "max_seconds")
      << s.stop_reason();
  EXPECT_GT(s.median_s(), 0);
  EXPECT_LE(s.min_s(), s.p10_s());
  EXPECT_LE(s.p10_s(), s.median_s());
  EXPECT_LE(s.median_s(), s.p90_s());
  EXPECT_LE(s.p90_s(), s.max_s());
  EXPECT_NEAR(m.examples_per_sec(), 8 / s.median_s(), 1e-6 * m.examples_per_sec());
  EXPECT_NEAR(m.model_flops_per_sec(), m.counts().model_flops() / s.median_s(),
              1e-6 * m.model_flops_per_sec());
  EXPECT_GT(m.executed_flops_per_sec(), 0);
  EXPECT_EQ(m.intra_op_threads(), 1);
  EXPECT_GE(m.inter_op_threads(), 1);
  EXPECT_GT(m.peak_rss_bytes(), 0);
  EXPECT_GT(m.build_seconds(), 0);
  EXPECT_GT(m.timed_seconds(), 0);
  EXPECT_NE(m.first_loss(), 0);
  // A step this small (tens of microseconds) is timed in blocks.
  EXPECT_GE(s.block_steps(), 2);
  EXPECT_LE(s.block_steps(), 256);
  // Streamed: every warm-up step, then one metric per timed block, numbered
  // by the steps executed so far.
  ASSERT_EQ(static_cast<int>(observer.steps.size()), s.warmup_steps() + s.steps());
  for (int i = 0; i < static_cast<int>(observer.steps.size()); ++i) {
    const int expected = i < s.warmup_steps()
                             ? i + 1
                             : s.warmup_steps() + (i - s.warmup_steps() + 1) * s.block_steps();
    EXPECT_EQ(observer.steps[i].step(), expected);
    EXPECT_EQ(observer.steps[i].warmup(), i < s.warmup_steps());
  }
  EXPECT_DOUBLE_EQ(observer.steps.back().loss(), m.last_loss());
  ASSERT_FALSE(observer.logs.empty());
  EXPECT_TRUE(absl::StrContains(observer.logs.front(), "intra-op 1")) << observer.logs.front();
}

bool HasCondition(const v1::Measurement& m, const std::string& prefix) {
  for (const std::string& s : m.suspect()) {
    if (absl::StartsWith(s, prefix)) return true;
  }
  return false;
}

TEST(TrainerTest, HostSpeedProbeIsComparedWithTheCalibratedOne) {
  // A calibrated probe far beyond any CPU: this host is "slower" -> flagged.
  v1::RunnerJob job = TinyJob();
  job.set_reference_probe_flops_per_sec(1e18);
  job.set_reference_probe_threads(1);
  RecordingObserver observer;
  const v1::Measurement slow = RunJob(job, &observer);
  ASSERT_EQ(slow.outcome(), v1::OK) << slow.error();
  EXPECT_TRUE(HasCondition(slow, "host slower than at calibration: matmul probe at 0 %"));
  bool logged = false;
  for (const std::string& line : observer.logs)
    logged |= absl::StartsWith(line, "host-speed sentinel:");
  EXPECT_TRUE(logged);
  // The sentinel around the job is stored with it: both halves, both sides.
  EXPECT_GT(slow.sentinel().compute_before(), 0);
  EXPECT_LT(slow.sentinel().compute_before(), 1e-3);
  EXPECT_GT(slow.sentinel().compute_after(), 0);
  EXPECT_GT(slow.sentinel().latency_before_s(), 0);
  EXPECT_GT(slow.sentinel().latency_after_s(), 0);
  EXPECT_GT(slow.sentinel().seconds(), 0);
  // One far below: never flagged.
  job.set_reference_probe_flops_per_sec(1);
  EXPECT_FALSE(HasCondition(RunJob(job, nullptr), "host slower"));
  // Calibrated with another thread count: not comparable, not probed.
  job.set_reference_probe_flops_per_sec(1e18);
  job.set_reference_probe_threads(64);
  const v1::Measurement unprobed = RunJob(job, nullptr);
  EXPECT_FALSE(HasCondition(unprobed, "host slower"));
  EXPECT_FALSE(unprobed.has_sentinel());
}

TEST(TrainerTest, AYoungReadingOfTheWorkersIsReusedAndNothingIsReadAfter) {
  v1::RunnerJob job = TinyJob();
  job.set_reference_probe_flops_per_sec(1e18);
  job.set_reference_probe_threads(1);
  job.mutable_recent_sentinel()->set_compute_ratio(0.5);
  job.mutable_recent_sentinel()->set_latency_s(2e-4);
  job.mutable_recent_sentinel()->set_age_s(1.5);
  job.set_sentinel_reuse_s(1000);
  RecordingObserver observer;
  const v1::Measurement reused = RunJob(job, &observer);
  ASSERT_EQ(reused.outcome(), v1::OK) << reused.error();
  EXPECT_EQ(reused.sentinel().compute_before(), 0.5);
  EXPECT_EQ(reused.sentinel().latency_before_s(), 2e-4);
  EXPECT_GE(reused.sentinel().before_age_s(), 1.5);
  EXPECT_EQ(reused.sentinel().compute_after(), 0);
  EXPECT_EQ(reused.sentinel().seconds(), 0);  // nothing read, nothing spent
  EXPECT_TRUE(HasCondition(reused, "host slower than at calibration: matmul probe at 50 %"));
  bool logged = false;
  for (const std::string& line : observer.logs) logged |= absl::StrContains(line, "s old");
  EXPECT_TRUE(logged);

  // Too old to reuse: this job reads "before" itself, and a job much
  // shorter than the reuse time leaves its reading to the next job.
  job.mutable_recent_sentinel()->set_age_s(2000);
  const v1::Measurement fresh = RunJob(job, nullptr);
  ASSERT_EQ(fresh.outcome(), v1::OK) << fresh.error();
  EXPECT_LT(fresh.sentinel().compute_before(), 1e-3);
  EXPECT_EQ(fresh.sentinel().before_age_s(), 0);
  EXPECT_EQ(fresh.sentinel().compute_after(), 0);
  EXPECT_GT(fresh.sentinel().seconds(), 0);
}

TEST(TrainerTest, ProfileOfAnFcStepNamesTheMatmulsFirst) {
  v1::RunnerJob job = TinyJob();
  (*job.mutable_config()->mutable_params())["node"] = 512;
  (*job.mutable_config()->mutable_params())["input"] = 512;
  (*job.mutable_config()->mutable_params())["batch"] = 256;
  job.mutable_settings()->set_profile(true);
  job.mutable_settings()->set_profile_steps(2);
  const v1::Measurement m = RunJob(job, nullptr);
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.profiled_steps(), 2);
  ASSERT_GT(m.op_profile_size(), 3);
  // Heaviest first; the GEMMs of forward (addmm) and backward (mm) lead.
  for (int i = 1; i < m.op_profile_size(); ++i) {
    EXPECT_GE(m.op_profile(i - 1).self_seconds(), m.op_profile(i).self_seconds());
  }
  const std::string top = m.op_profile(0).name();
  EXPECT_TRUE(top == "aten::mm" || top == "aten::addmm") << top;
  double matmul_share = 0, matmul_flops = 0;
  for (const v1::OpProfile& op : m.op_profile()) {
    EXPECT_GT(op.calls(), 0) << op.name();
    EXPECT_LE(op.self_seconds(), op.total_seconds() + 1e-12) << op.name();
    if (op.name() == "aten::mm" || op.name() == "aten::addmm") {
      matmul_share += op.self_share();
      matmul_flops += op.flops();
      EXPECT_EQ(op.input_shapes().rfind("[[", 0), 0u) << op.input_shapes();
    }
  }
  EXPECT_GT(matmul_share, 0.3);
  // The profiler's FLOP count of the GEMMs is the executed matmul work.
  EXPECT_NEAR(matmul_flops, m.counts().executed_flops(), 0.05 * m.counts().executed_flops());
  // Unprofiled runs carry no breakdown.
  EXPECT_EQ(RunJob(TinyJob(), nullptr).op_profile_size(), 0);
}

// The suspect flags follow the host's state; only what is stable during the
// test (BLAS, governor, the result's own CV) is checked exactly.
TEST(TrainerTest, FlagsSuspectConditionsConsistentWithTheHost) {
  const v1::Measurement m = RunJob(TinyJob(), nullptr);
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  auto flagged = [&m](const std::string& prefix) {
    int count = 0;
    for (const std::string& s : m.suspect()) count += absl::StartsWith(s, prefix) ? 1 : 0;
    EXPECT_LE(count, 1) << prefix;
    return count == 1;
  };
  for (const std::string& s : m.suspect()) {
    EXPECT_TRUE(absl::StartsWith(s, "reference BLAS in use: ") ||
                absl::StartsWith(s, "host busy: load average ") ||
                absl::StartsWith(s, "cpu frequency scaling: governor ") ||
                absl::StartsWith(s, "noisy steps: CV "))
        << s;
  }
  EXPECT_EQ(flagged("reference BLAS in use"), IsReferenceBlas(DescribeLoadedBlas().description));
  const std::string governor = hostfacts::ReadFrequencyGovernor();
  EXPECT_EQ(flagged("cpu frequency scaling"), !governor.empty() && governor != "performance");
  EXPECT_EQ(flagged("noisy steps"), m.stats().cv() > kNoisyStepsCv) << m.stats().cv();
  if (!HostLoadAverage1().has_value()) {
    EXPECT_FALSE(flagged("host busy"));
  }
}

TEST(TrainerTest, BFloat16Runs) {
  const v1::Measurement m = RunJob(TinyJob("bfloat16"), nullptr);
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.config().precision(), "bfloat16");
}

TEST(TrainerTest, SixteenBitOutcomesAreResultsNotCrashes) {
  for (const char* precision : {"float16", "mixed_bf16", "mixed_fp16"}) {
    const v1::Measurement m = RunJob(TinyJob(precision), nullptr);
    EXPECT_TRUE(m.outcome() == v1::OK || m.outcome() == v1::UNSUPPORTED)
        << precision << ": " << v1::Outcome_Name(m.outcome()) << " " << m.error();
    if (m.outcome() == v1::UNSUPPORTED) {
      EXPECT_TRUE(absl::StrContains(m.error(), precision)) << m.error();
    }
  }
}

TEST(TrainerTest, InvalidJobsAreErrors) {
  v1::RunnerJob job = TinyJob();
  job.mutable_config()->set_family("no_such_family");
  v1::Measurement m = RunJob(job, nullptr);
  EXPECT_EQ(m.outcome(), v1::ERROR);
  EXPECT_TRUE(absl::StrContains(m.error(), "config.family")) << m.error();

  job = TinyJob();
  job.mutable_settings()->set_ci(-1);
  m = RunJob(job, nullptr);
  EXPECT_EQ(m.outcome(), v1::ERROR);
  EXPECT_TRUE(absl::StrContains(m.error(), "run.ci")) << m.error();
}

TEST(TrainerTest, DevicesThisLibTorchCannotUseAreUnsupported) {
  v1::RunnerJob job = TinyJob();
  job.set_device("tpu");
  v1::Measurement m = RunJob(job, nullptr);
  EXPECT_EQ(m.outcome(), v1::UNSUPPORTED);
  EXPECT_TRUE(absl::StrContains(m.error(), "device 'tpu': this runner measures on cpu, cuda"))
      << m.error();
  EXPECT_EQ(m.device(), "tpu");
  if (torch::cuda::is_available()) GTEST_SKIP() << "this LibTorch has CUDA";
  // Debian's LibTorch is a CPU build: a CUDA job says so and how to fix it.
  for (const char* device : {"cuda", "cuda:1"}) {
    job.set_device(device);
    m = RunJob(job, nullptr);
    EXPECT_EQ(m.outcome(), v1::UNSUPPORTED) << device;
    EXPECT_TRUE(absl::StrContains(m.error(), "has no CUDA")) << m.error();
    EXPECT_TRUE(absl::StrContains(m.error(), "docs/backends.md")) << m.error();
    EXPECT_EQ(m.device(), device);
  }
}

// params.devices: one replica per CUDA device. A CPU job of several is
// refused, except under PARADNN_TEST_CPU_REPLICAS=1, where the replicas run
// on Gloo so that this host tests the code the GPU hosts run over NCCL.
TEST(TrainerTest, DataParallelReplicasOnTheCpuOnlyForTests) {
  v1::RunnerJob job = TinyJob();
  (*job.mutable_config()->mutable_params())["devices"] = 2;
  unsetenv("PARADNN_TEST_CPU_REPLICAS");
  v1::Measurement refused = RunJob(job, nullptr);
  EXPECT_EQ(refused.outcome(), v1::UNSUPPORTED);
  EXPECT_EQ(refused.error(),
            "devices 2: data-parallel replicas run one per CUDA device; this job is on cpu");

  setenv("PARADNN_TEST_CPU_REPLICAS", "1", 1);
  RecordingObserver observer;
  const v1::Measurement m = RunJob(job, &observer);
  unsetenv("PARADNN_TEST_CPU_REPLICAS");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.config().params().at("devices"), 2);
  // Counts and FLOP rates are one replica's; throughput is both replicas'.
  EXPECT_EQ(m.counts().params(), 33 * 16 + 17 * 16 + 17 * 4);
  EXPECT_NEAR(m.examples_per_sec(), 2 * 8 / m.stats().median_s(), 1e-6 * m.examples_per_sec());
  EXPECT_NEAR(m.model_flops_per_sec(), m.counts().model_flops() / m.stats().median_s(),
              1e-6 * m.model_flops_per_sec());
  bool logged = false;
  for (const std::string& line : observer.logs) {
    logged |= absl::StrContains(line, "data parallel: 2 replicas on cpu, cpu, joined over gloo");
  }
  EXPECT_TRUE(logged);
  bool flagged = false;
  for (const std::string& condition : m.suspect()) {
    flagged |= absl::StartsWith(condition, "CPU replicas (PARADNN_TEST_CPU_REPLICAS=1)");
  }
  EXPECT_TRUE(flagged) << "a CPU replica result is a test, flagged as such";
}

TEST(TrainerTest, ModelsBeyondHostMemoryArePredictedOom) {
  v1::RunnerJob job = TinyJob();
  // The family's largest: 4096 layers of 2^20 x 2^20 weights.
  (*job.mutable_config()->mutable_params())["layer"] = 4096;
  (*job.mutable_config()->mutable_params())["node"] = 1 << 20;
  const v1::Measurement m = RunJob(job, nullptr);
  EXPECT_EQ(m.outcome(), v1::PREDICTED_OOM) << m.error();
  EXPECT_GT(m.counts().peak_memory_estimate_bytes(), 1e15);
}

}  // namespace
}  // namespace paradnn::runner
