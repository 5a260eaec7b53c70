#include "worker/runner/job_replicas.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace paradnn::runner {
namespace {

TEST(JobReplicasTest, ReplicasComeFromTheThreadsProfile) {
  v1::RunnerJob job;
  EXPECT_EQ(JobReplicas(job), 1);
  (*job.mutable_config()->mutable_stack())["threads"] = "intra=2,inter=1,replicas=3";
  EXPECT_EQ(JobReplicas(job), 3);
  (*job.mutable_config()->mutable_stack())["threads"] = "guideline";
  EXPECT_EQ(JobReplicas(job), 1);
  (*job.mutable_config()->mutable_stack())["threads"] = "replicas=two";
  EXPECT_EQ(JobReplicas(job), 1);  // the job itself reports the bad value
}

ReplicaRun ReplicaOf(const std::vector<double>& steps, int64_t from_ns, int64_t to_ns,
                     const std::string& cpus) {
  ReplicaRun run;
  run.cpus = cpus;
  run.timed_from_ns = from_ns;
  run.timed_to_ns = to_ns;
  v1::Measurement& m = run.measurement;
  m.set_outcome(v1::OK);
  for (double s : steps) m.add_step_seconds(s);
  m.mutable_stats()->set_median_s(steps[steps.size() / 2]);
  m.mutable_stats()->set_warmup_steps(3);
  m.mutable_stats()->set_stop_reason("max_seconds");
  m.set_examples_per_sec(16 / steps[steps.size() / 2]);
  m.set_model_flops_per_sec(1e9);
  m.set_executed_flops_per_sec(2e9);
  m.set_peak_rss_bytes(100);
  return run;
}

TEST(JobReplicasTest, TheSlowestReplicaGivesTheHostsStepsAndRates) {
  // Replica 1 is the slower (median 0.04 s against 0.02 s).
  std::vector<ReplicaRun> runs = {ReplicaOf({0.02, 0.02, 0.03}, 0, 1000, "0"),
                                  ReplicaOf({0.04, 0.04, 0.05}, 10, 1010, "1")};
  runs[0].measurement.add_suspect("host load 2.0");
  runs[1].measurement.add_suspect("host load 2.0");
  runs[1].measurement.add_suspect("cv 12 %");
  const v1::Measurement m = MergeReplicas(runs);
  ASSERT_EQ(m.outcome(), v1::OK);
  const v1::ConcurrentReplicas& c = m.concurrent_replicas();
  EXPECT_EQ(c.replicas(), 2);
  EXPECT_EQ(c.slowest_replica(), 1);
  EXPECT_EQ(std::vector<std::string>(c.cpus().begin(), c.cpus().end()),
            (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(std::vector<double>(c.median_step_s().begin(), c.median_step_s().end()),
            (std::vector<double>{0.02, 0.04}));
  EXPECT_EQ(std::vector<double>(m.step_seconds().begin(), m.step_seconds().end()),
            (std::vector<double>{0.02, 0.02, 0.025}));
  EXPECT_DOUBLE_EQ(m.stats().median_s(), 0.02);
  EXPECT_EQ(m.stats().warmup_steps(), 3);
  EXPECT_EQ(m.stats().stop_reason(), "max_seconds");
  EXPECT_DOUBLE_EQ(m.examples_per_sec(), 2 * 16 / 0.04);
  EXPECT_DOUBLE_EQ(m.model_flops_per_sec(), 2e9);
  EXPECT_DOUBLE_EQ(m.executed_flops_per_sec(), 4e9);
  EXPECT_EQ(m.peak_rss_bytes(), 200);
  // What both said is the host's; the rest names its replica.
  EXPECT_EQ(std::set<std::string>(m.suspect().begin(), m.suspect().end()),
            (std::set<std::string>{"host load 2.0", "replica 1: cv 12 %"}));
  EXPECT_EQ(m.suspect_size(), 2);
  // Together from 10 to 1000 of replica 1's 10..1010.
  EXPECT_DOUBLE_EQ(c.timed_overlap(), 0.99);
}

TEST(JobReplicasTest, ReplicasTimedApartAreSuspect) {
  const v1::Measurement m = MergeReplicas(
      {ReplicaOf({0.02, 0.02, 0.02}, 0, 1000, "0"), ReplicaOf({0.03, 0.03, 0.03}, 500, 1500, "1")});
  EXPECT_DOUBLE_EQ(m.concurrent_replicas().timed_overlap(), 0.5);
  ASSERT_EQ(m.suspect_size(), 1);
  EXPECT_NE(m.suspect(0).find("timed together for only 50 %"), std::string::npos) << m.suspect(0);
}

TEST(JobReplicasTest, AFailedReplicaIsTheResultAndNamed) {
  std::vector<ReplicaRun> runs = {ReplicaOf({0.02}, 0, 1, "0-1"), ReplicaOf({0.02}, 0, 1, "2-3")};
  runs[1].measurement.set_outcome(v1::OOM);
  runs[1].measurement.set_error("out of memory building the model");
  const v1::Measurement m = MergeReplicas(runs);
  EXPECT_EQ(m.outcome(), v1::OOM);
  EXPECT_EQ(m.error(), "replica 1 of 2 (CPUs 2-3): out of memory building the model");
  EXPECT_FALSE(m.has_concurrent_replicas());
}

}  // namespace
}  // namespace paradnn::runner
