// What the scheduler sends with an assignment, or instead of one: jobs
// predicted not to fit the worker's memory, uploaded models, counts.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "db/job_store.h"
#include "db/model_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "server/scheduler.h"
#include "tests/unit/server/scheduler_test_support.h"

namespace paradnn::server {
namespace {

// Stores a sweep of `jobs`, each of `family` on the cpu, in their order.
void StoreSweep(db::Database* database, int64_t now_unix_ms, const std::string& family,
                std::vector<db::NewJob> jobs) {
  v1::SweepSpec spec;
  spec.set_name(family);
  spec.set_family(family);
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].config.set_family(family);
    jobs[i].device = "cpu";
    jobs[i].ordinal = static_cast<int>(i);
  }
  ASSERT_TRUE(db::SweepStore(database).CreateSync(spec, jobs, now_unix_ms).ok());
}

// The second assignment `stream` gets, after the result of its first.
v1::JobAssignment SecondAssignment(Scheduler& scheduler, FakeStream& stream,
                                   const std::string& worker_id, const v1::JobAssignment& first) {
  scheduler.OnWorkerMessage(stream.session(), worker_id,
                            Result(first.job_id(), first.attempt_id()));
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 2);
  EXPECT_EQ(assignments.size(), 2u);
  return assignments.size() < 2 ? v1::JobAssignment() : assignments[1].assignment();
}

int64_t CreateSweepWithEstimates(db::Database* database, int64_t now_unix_ms, int too_big,
                                 bool run_predicted_oom) {
  v1::SweepSpec spec;
  spec.set_name("estimates");
  spec.set_family("fc");
  spec.set_device("cpu");
  spec.set_run_predicted_oom(run_predicted_oom);
  std::vector<db::NewJob> jobs(too_big + 1);
  for (int i = 0; i <= too_big; ++i) {
    jobs[i].config.set_family("fc");
    (*jobs[i].config.mutable_params())["node"] = i < too_big ? 65536 : 8;
    jobs[i].device = "cpu";
    jobs[i].ordinal = i;
    jobs[i].params = i < too_big ? 4000000000 : 1000;
    jobs[i].model_flops = i < too_big ? 1e15 : 1e6;
    jobs[i].peak_memory_estimate_bytes = i < too_big ? double{int64_t{2} << 30} : double{1 << 20};
  }
  return *db::SweepStore(database).CreateSync(spec, jobs, now_unix_ms);
}

v1::WorkerHello HelloWithMemory(const std::string& id, int64_t memory_bytes) {
  v1::WorkerHello hello = Hello(id);
  hello.mutable_platform()->set_memory_bytes(memory_bytes);
  return hello;
}

TEST_F(SchedulerTest, JobsThatCannotFitArePredictedOomWithoutAnAssignment) {
  const int64_t sweep = CreateSweepWithEstimates(database_.get(), clock_.NowUnixMs(), 3, false);
  FakeStream stream(1);
  ASSERT_TRUE(
      scheduler_->OnHello(stream.session(), HelloWithMemory("small", int64_t{1} << 30)).ok());
  // The three jobs that need 2 GiB are skipped; the one that fits is sent.
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  const v1::JobAssignment& sent = assignments[0].assignment();
  EXPECT_EQ(sent.job().config().params().at("node"), 8);
  EXPECT_TRUE(stream.Sent(v1::CoordinatorMessage::kAck).empty());  // nothing came from the worker

  absl::StatusOr<std::vector<v1::ResultRow>> rows =
      db::ResultStore(database_.get()).Query(sweep, false);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  int predicted = 0;
  for (const v1::ResultRow& row : *rows) {
    if (row.job_id() == sent.job_id()) {
      EXPECT_EQ(row.state(), v1::JOB_LEASED);
      continue;
    }
    ++predicted;
    EXPECT_EQ(row.state(), v1::JOB_DONE);
    EXPECT_EQ(row.worker_id(), "small");
    EXPECT_EQ(row.platform_fingerprint(), "fp-test");
    const v1::Measurement& m = row.measurement();
    EXPECT_EQ(m.outcome(), v1::PREDICTED_OOM);
    // The process estimate: 256 MiB of runtime plus 1.1 x the job's 2 GiB.
    EXPECT_EQ(m.error(),
              "memory estimate 2.5 GiB exceeds the worker's 1.0 GiB (2630667469 > 1073741824 "
              "bytes)");
    EXPECT_EQ(m.config().params().at("node"), 65536);
    EXPECT_EQ(m.counts().params(), 4000000000);
    EXPECT_DOUBLE_EQ(m.counts().model_flops(), 1e15);
    EXPECT_DOUBLE_EQ(m.counts().peak_memory_estimate_bytes(), double{int64_t{2} << 30});
    EXPECT_EQ(m.device(), "cpu");
  }
  EXPECT_EQ(predicted, 3);

  // The job that fits runs as usual and finishes the sweep.
  scheduler_->OnWorkerMessage(stream.session(), "small", Result(sent.job_id(), sent.attempt_id()));
  ASSERT_TRUE(Eventually([&] { return Status(sweep).state() == v1::SWEEP_DONE; }));
  EXPECT_EQ(Status(sweep).done_jobs(), 4);
  EXPECT_EQ(Status(sweep).ok_results(), 1);
  EXPECT_EQ(stream.Sent(v1::CoordinatorMessage::kAssignment).size(), 1u);
}

TEST_F(SchedulerTest, RunPredictedOomSendsTheJobAnyway) {
  // The sweep asked to run them anyway.
  CreateSweepWithEstimates(database_.get(), clock_.NowUnixMs(), 1, true);
  FakeStream stream(1);
  ASSERT_TRUE(
      scheduler_->OnHello(stream.session(), HelloWithMemory("small", int64_t{1} << 30)).ok());
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  EXPECT_EQ(assignments[0].assignment().job().config().params().at("node"), 65536);
}

TEST_F(SchedulerTest, WorkerWithoutAMemorySizeGetsEveryJob) {
  CreateSweepWithEstimates(database_.get(), clock_.NowUnixMs(), 1, false);
  FakeStream stream(1);
  ASSERT_TRUE(scheduler_->OnHello(stream.session(), HelloWithMemory("unknown", 0)).ok());
  auto assignments = stream.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(assignments.size(), 1u);
  EXPECT_EQ(assignments[0].assignment().job().config().params().at("node"), 65536);
}

TEST_F(SchedulerTest, AnAssignmentCarriesItsUploadedModelAndAMissingOneIsLeftOut) {
  const std::string bytes = "PK\x03\x04 not really a zip, but bytes to ship";
  absl::StatusOr<std::string> sha256 =
      db::ModelStore(database_.get()).PutSync(bytes, "model.pt", clock_.NowUnixMs());
  ASSERT_TRUE(sha256.ok()) << sha256.status();
  std::vector<db::NewJob> jobs(2);
  // The second job names a model the store does not hold.
  jobs[0].config.mutable_torchscript()->set_sha256(*sha256);
  jobs[1].config.mutable_torchscript()->set_sha256(std::string(64, 'f'));
  StoreSweep(database_.get(), clock_.NowUnixMs(), "torchscript", std::move(jobs));

  FakeStream stream(1);
  v1::JobAssignment first;
  HelloAndFirstAssignment(stream, "w1", &first);
  EXPECT_EQ(first.job().torchscript_content(), bytes);
  const v1::JobAssignment second = SecondAssignment(*scheduler_, stream, "w1", first);
  EXPECT_EQ(second.job().config().torchscript().sha256(), std::string(64, 'f'));
  // Sent without bytes: the runner reports the job as ERROR naming the model.
  EXPECT_TRUE(second.job().torchscript_content().empty());
}

TEST_F(SchedulerTest, AnAssignmentCarriesTheCountsOfItsConfig) {
  // A runner that does not count (the JAX runner) reports the coordinator's
  // counts of its job. The second job's config does not parse: it goes
  // without, and its runner reports the config's error.
  std::vector<db::NewJob> jobs(2);
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"layer", 2},
                                   {"node", 64},
                                   {"input", 32},
                                   {"output", 10},
                                   {"batch", 16}}) {
    (*jobs[0].config.mutable_params())[key] = value;
  }
  (*jobs[1].config.mutable_params())["node"] = 8;
  StoreSweep(database_.get(), clock_.NowUnixMs(), "fc", std::move(jobs));

  FakeStream stream(1);
  v1::JobAssignment first;
  HelloAndFirstAssignment(stream, "w1", &first);
  ASSERT_TRUE(first.job().has_counts());
  const v1::ModelCounts& counts = first.job().counts();
  // docs/models.md: (I+1)N + (L-1)(N+1)N + (N+1)O parameters.
  EXPECT_EQ(counts.params(), 33 * 64 + 65 * 64 + 65 * 10);
  EXPECT_EQ(counts.model_flops(), 6.0 * counts.macs_per_example() * 16);
  EXPECT_GT(counts.executed_flops(), 0);
  EXPECT_GT(counts.peak_memory_estimate_bytes(), 0);
  EXPECT_FALSE(SecondAssignment(*scheduler_, stream, "w1", first).job().has_counts());
}

TEST(PredictedOomErrorTest, NamesBothNumbers) {
  EXPECT_EQ(PredictedOomError(31.2 * (int64_t{1} << 30), int64_t{25232932864}),
            "memory estimate 31.2 GiB exceeds the worker's 23.5 GiB (33500744909 > 25232932864 "
            "bytes)");
  EXPECT_EQ(PredictedOomError(3 << 20, 1000),
            "memory estimate 3.0 MiB exceeds the worker's 1000 "
            "bytes (3145728 > 1000 bytes)");
}

}  // namespace
}  // namespace paradnn::server
