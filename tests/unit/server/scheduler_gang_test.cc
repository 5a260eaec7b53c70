// Gang jobs through the scheduler: all or nothing, every rank told its
// role, one result stored, released whole.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "db/result_store.h"
#include "db/sweep_store.h"
#include "server/scheduler.h"
#include "tests/unit/server/scheduler_test_support.h"

namespace paradnn::server {
namespace {

v1::WorkerHello GangHello(const std::string& id, int port) {
  v1::WorkerHello hello = Hello(id);
  hello.set_rendezvous_address("10.0.0." + std::to_string(port % 100));
  hello.set_rendezvous_port(port);
  return hello;
}

v1::WorkerMessage Outcome(const v1::JobAssignment& a, v1::Outcome outcome, std::string error = "") {
  v1::WorkerMessage message = Result(a.job_id(), a.attempt_id());
  message.mutable_result()->mutable_measurement()->set_outcome(outcome);
  message.mutable_result()->mutable_measurement()->set_error(std::move(error));
  return message;
}

class SchedulerGangTest : public SchedulerTest {
 protected:
  // A sweep of a gang job of `hosts`, then `singles` single-worker jobs.
  int64_t GangSweep(int64_t hosts, int singles = 0) {
    v1::SweepSpec spec;
    spec.set_name("gang");
    spec.set_family("fc");
    spec.set_device("cpu");
    std::vector<db::NewJob> jobs(1 + singles);
    for (int i = 0; i < 1 + singles; ++i) {
      jobs[i].config.set_family("fc");
      (*jobs[i].config.mutable_params())["node"] = 8;
      (*jobs[i].config.mutable_params())["hosts"] = i == 0 ? hosts : 1;
      jobs[i].settings.set_max_seconds(5);
      jobs[i].device = "cpu";
      jobs[i].ordinal = i;
    }
    return *db::SweepStore(database_.get()).CreateSync(spec, jobs, clock_.NowUnixMs());
  }

  // Two workers of one platform say hello; returns their gang assignments
  // by rank (rank 0 first).
  std::vector<std::pair<FakeStream*, v1::JobAssignment>> GangOfTwo(int64_t sweep) {
    EXPECT_TRUE(scheduler_->OnHello(w0_.session(), GangHello("w0", 29500)).ok());
    // Alone, w0 cannot hold the gang, and the sweep says why.
    EXPECT_TRUE(Eventually([&] {
      std::vector<std::string> lines = scheduler_->WaitingLines(sweep);
      return lines.size() == 1 && lines[0].find("of hosts 2") != std::string::npos &&
             lines[0].find(" has 1") != std::string::npos;
    }));
    EXPECT_TRUE(w0_.Sent(v1::CoordinatorMessage::kAssignment).empty());
    EXPECT_TRUE(scheduler_->OnHello(w1_.session(), GangHello("w1", 29501)).ok());
    auto a0 = w0_.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
    auto a1 = w1_.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
    EXPECT_EQ(a0.size(), 1u);
    EXPECT_EQ(a1.size(), 1u);
    if (a0.empty() || a1.empty()) return {};
    std::vector<std::pair<FakeStream*, v1::JobAssignment>> ranks = {{&w0_, a0[0].assignment()},
                                                                    {&w1_, a1[0].assignment()}};
    if (ranks[0].second.job().gang().host_rank() != 0) std::swap(ranks[0], ranks[1]);
    return ranks;
  }

  void Send(FakeStream* stream, const v1::WorkerMessage& message) {
    scheduler_->OnWorkerMessage(stream->session(), stream == &w0_ ? "w0" : "w1", message);
  }

  int64_t Results() {
    absl::StatusOr<int64_t> count = db::ResultStore(database_.get()).CountForJob(1);
    return count.ok() ? *count : -1;
  }

  FakeStream w0_{1};
  FakeStream w1_{2};
};

TEST_F(SchedulerGangTest, EveryRankGetsItsRoleAndTheLeadersRendezvous) {
  const int64_t sweep = GangSweep(2);
  auto ranks = GangOfTwo(sweep);
  ASSERT_EQ(ranks.size(), 2u);
  const v1::GangRole& r0 = ranks[0].second.job().gang();
  const v1::GangRole& r1 = ranks[1].second.job().gang();
  EXPECT_EQ(ranks[0].second.job_id(), ranks[1].second.job_id());
  EXPECT_NE(ranks[0].second.attempt_id(), ranks[1].second.attempt_id());
  EXPECT_EQ(r0.host_rank(), 0);
  EXPECT_EQ(r1.host_rank(), 1);
  for (const v1::GangRole* role : {&r0, &r1}) {
    EXPECT_EQ(role->hosts(), 2);
    EXPECT_EQ(role->devices_per_host(), 1);
    EXPECT_EQ(role->secret().size(), 32u);
    EXPECT_EQ(role->secret(), r0.secret());
    EXPECT_EQ(role->gang_tag(), r0.gang_tag());
    EXPECT_EQ(role->worker_ids_size(), 2);
    EXPECT_GE(role->collective_timeout_s(), 10);  // twice the 5 s step budget, at least 30 s
  }
  // The rendezvous is rank 0's worker's advertised address and port.
  const bool w0_leads = ranks[0].first == &w0_;
  EXPECT_EQ(r1.rendezvous_port(), w0_leads ? 29500 : 29501);
  EXPECT_EQ(r0.rendezvous_host(), w0_leads ? "10.0.0.0" : "10.0.0.1");
  EXPECT_EQ(r0.worker_ids(0), w0_leads ? "w0" : "w1");
  EXPECT_EQ(r0.gang_tag(), "job " + std::to_string(ranks[0].second.job_id()) + " attempt " +
                               std::to_string(ranks[0].second.attempt_id()));
  EXPECT_TRUE(scheduler_->WaitingLines(sweep).empty());
}

TEST_F(SchedulerGangTest, RankZerosResultIsStoredOnceAndFreesTheGang) {
  const int64_t sweep = GangSweep(2);
  auto ranks = GangOfTwo(sweep);
  ASSERT_EQ(ranks.size(), 2u);
  // Rank 1's OK is acknowledged, not stored; its worker stays busy.
  Send(ranks[1].first, Outcome(ranks[1].second, v1::OK));
  EXPECT_EQ(ranks[1].first->WaitFor(v1::CoordinatorMessage::kAck, 1).size(), 1u);
  WaitQuiet();
  EXPECT_EQ(Results(), 0);
  EXPECT_EQ(ranks[1].first->Sent(v1::CoordinatorMessage::kAssignment).size(), 1u);
  // Rank 0's result is the job's; then the single-worker job goes to one of them.
  Send(ranks[0].first, Outcome(ranks[0].second, v1::OK));
  EXPECT_EQ(ranks[0].first->WaitFor(v1::CoordinatorMessage::kAck, 1).size(), 1u);
  EXPECT_TRUE(Eventually([&] { return Results() == 1; }));
  EXPECT_TRUE(Eventually([&] { return Status(sweep).state() == v1::SWEEP_DONE; }));
  EXPECT_EQ(Status(sweep).done_jobs(), 1);
}

TEST_F(SchedulerGangTest, SingleJobsBehindAWaitingGangWaitWithIt) {
  const int64_t sweep = GangSweep(2, /*singles=*/2);
  EXPECT_TRUE(scheduler_->OnHello(w0_.session(), GangHello("w0", 29500)).ok());
  // Alone, w0 cannot hold the gang: it runs a single job meanwhile.
  auto first = w0_.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(first[0].assignment().job().has_gang());
  // w1 arrives: the gang is first in order now that two can hold it, so w1
  // gets nothing single and waits for w0.
  EXPECT_TRUE(scheduler_->OnHello(w1_.session(), GangHello("w1", 29501)).ok());
  EXPECT_TRUE(Eventually([&] {
    std::vector<std::string> lines = scheduler_->WaitingLines(sweep);
    return lines.size() == 1 && lines[0].find("1 idle of 2 connected") != std::string::npos;
  }));
  WaitQuiet();
  EXPECT_TRUE(w1_.Sent(v1::CoordinatorMessage::kAssignment).empty());
  // w0's result frees it: the gang forms, before the last single job.
  Send(&w0_, Outcome(first[0].assignment(), v1::OK));
  auto w1_jobs = w1_.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
  ASSERT_EQ(w1_jobs.size(), 1u);
  EXPECT_TRUE(w1_jobs[0].assignment().job().has_gang());
  auto w0_jobs = w0_.WaitFor(v1::CoordinatorMessage::kAssignment, 2);
  ASSERT_EQ(w0_jobs.size(), 2u);
  EXPECT_TRUE(w0_jobs[1].assignment().job().has_gang());
}

TEST_F(SchedulerGangTest, AGangBrokenOnOneRankReleasesEveryRankAndRunsAgainAsAGang) {
  auto ranks = GangOfTwo(GangSweep(2));
  ASSERT_EQ(ranks.size(), 2u);
  Send(ranks[1].first, Outcome(ranks[1].second, v1::GANG_BROKEN, "rank 0 closed its connection"));
  EXPECT_EQ(ranks[1].first->WaitFor(v1::CoordinatorMessage::kAck, 1).size(), 1u);
  // Rank 0 is told to stop; nothing is stored; the job is leased again to both.
  auto cancels = ranks[0].first->WaitFor(v1::CoordinatorMessage::kCancel, 1);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].cancel().attempt_id(), ranks[0].second.attempt_id());
  // Rank 0's own GANG_BROKEN arrives after: acknowledged, nothing more.
  Send(ranks[0].first, Outcome(ranks[0].second, v1::GANG_BROKEN, "rank 1 left"));
  EXPECT_EQ(ranks[0].first->WaitFor(v1::CoordinatorMessage::kAck, 1).size(), 1u);
  EXPECT_TRUE(Eventually([&] {
    return w0_.Sent(v1::CoordinatorMessage::kAssignment).size() == 2 &&
           w1_.Sent(v1::CoordinatorMessage::kAssignment).size() == 2;
  }));
  const v1::JobAssignment again = w0_.Sent(v1::CoordinatorMessage::kAssignment)[1].assignment();
  EXPECT_EQ(again.job_id(), ranks[0].second.job_id());
  EXPECT_TRUE(again.job().has_gang());
  EXPECT_EQ(Results(), 0);
}

TEST_F(SchedulerGangTest, ASilentRankLosesTheWholeGang) {
  auto ranks = GangOfTwo(GangSweep(2));
  ASSERT_EQ(ranks.size(), 2u);
  // Past the lease timeout only rank 0 keeps talking.
  clock_.Advance(1500);
  Send(ranks[0].first, Heartbeat(ranks[0].second.attempt_id()));
  scheduler_->ExpireLeases();
  auto cancels = ranks[0].first->WaitFor(v1::CoordinatorMessage::kCancel, 1);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].cancel().attempt_id(), ranks[0].second.attempt_id());
  WaitQuiet();
  EXPECT_EQ(Results(), 0);
  // The silent worker's gang is gone: rank 0's worker waits for a new gang
  // (the silent one gets nothing until it speaks).
  EXPECT_EQ(ranks[0].first->Sent(v1::CoordinatorMessage::kAssignment).size(), 1u);
}

TEST_F(SchedulerGangTest, AOneRankFailureOtherThanABrokenGangIsTheJobsResultNamed) {
  auto ranks = GangOfTwo(GangSweep(2));
  ASSERT_EQ(ranks.size(), 2u);
  Send(ranks[1].first, Outcome(ranks[1].second, v1::OOM, "out of memory"));
  EXPECT_TRUE(Eventually([&] { return Results() == 1; }));
  absl::StatusOr<std::vector<v1::ResultRow>> rows =
      db::ResultStore(database_.get()).Query(1, false);
  ASSERT_TRUE(rows.ok());
  ASSERT_FALSE(rows->empty());
  const v1::Measurement& m = (*rows)[0].measurement();
  EXPECT_EQ(m.outcome(), v1::OOM);
  EXPECT_NE(m.error().find("rank 1 (worker "), std::string::npos) << m.error();
  // Rank 0, still in a collective with the failed rank, is stopped.
  EXPECT_EQ(ranks[0].first->WaitFor(v1::CoordinatorMessage::kCancel, 1).size(), 1u);
}

// CPU workers of one host whose CPUs overlap measure one at a time; with
// disjoint CPUs, at once.
class SchedulerCpuSharingTest : public SchedulerTest {
 protected:
  static v1::WorkerHello OnHost(const std::string& id, const std::string& cpus) {
    v1::WorkerHello hello = GangHello(id, 0);
    hello.mutable_platform()->set_hostname("one-host");
    hello.set_cpus(cpus);
    return hello;
  }
  // a (CPUs `a_cpus`) measures; b (`b_cpus`) waits, saying `waiting`;
  // a's result lets one of the two measure next, never both.
  void ExpectTheyTakeTurns(const char* a_cpus, const char* b_cpus, const std::string& waiting) {
    CreateSweep(3);
    ASSERT_TRUE(scheduler_->OnHello(a_.session(), OnHost("a", a_cpus)).ok());
    auto first = a_.WaitFor(v1::CoordinatorMessage::kAssignment, 1);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_TRUE(scheduler_->OnHello(b_.session(), OnHost("b", b_cpus)).ok());
    WaitQuiet();
    EXPECT_TRUE(b_.Sent(v1::CoordinatorMessage::kAssignment).empty()) << "a is measuring";
    EXPECT_TRUE(Eventually([&] {
      for (const auto& [id, live] : scheduler_->Snapshot()) {
        if (id == "b" && live.waiting.find(waiting) != std::string::npos) return true;
      }
      return false;
    }));
    scheduler_->OnWorkerMessage(
        a_.session(), "a",
        Result(first[0].assignment().job_id(), first[0].assignment().attempt_id()));
    auto both = [&] {
      return a_.Sent(v1::CoordinatorMessage::kAssignment).size() +
             b_.Sent(v1::CoordinatorMessage::kAssignment).size();
    };
    EXPECT_TRUE(Eventually([&] { return both() == 2; }));
    WaitQuiet();
    EXPECT_EQ(both(), 2u);
  }
  FakeStream a_{1};
  FakeStream b_{2};
};

TEST_F(SchedulerCpuSharingTest, WorkersSharingACpuTakeTurns) {
  ExpectTheyTakeTurns("0", "0", "shares CPUs with a");
}

TEST_F(SchedulerCpuSharingTest, WorkersOnDisjointCpusMeasureAtOnce) {
  CreateSweep(3);
  ASSERT_TRUE(scheduler_->OnHello(a_.session(), OnHost("a", "0")).ok());
  ASSERT_TRUE(scheduler_->OnHello(b_.session(), OnHost("b", "1")).ok());
  EXPECT_EQ(a_.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u);
  EXPECT_EQ(b_.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u);
}

TEST_F(SchedulerCpuSharingTest, OnlyWorkersThatNameTheirCpusAreCompared) {
  // A worker without --cpus is its host's only one, as deployed: not held
  // back by a neighbour, and holding none back.
  CreateSweep(3);
  ASSERT_TRUE(scheduler_->OnHello(a_.session(), OnHost("a", "")).ok());
  EXPECT_EQ(a_.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u);
  ASSERT_TRUE(scheduler_->OnHello(b_.session(), OnHost("b", "1")).ok());
  EXPECT_EQ(b_.WaitFor(v1::CoordinatorMessage::kAssignment, 1).size(), 1u);
}

// One measurement at a time per host (--one-measurement-per-host): workers
// on disjoint CPUs of one host take turns too.
class SchedulerOnePerHostTest : public SchedulerCpuSharingTest {
 protected:
  void SetUp() override {
    SchedulerCpuSharingTest::SetUp();
    SchedulerOptions options;
    options.heartbeat_interval_ms = 100;
    options.lease_timeout_ms = 1000;
    options.max_attempts = 2;
    options.one_measurement_per_host = true;
    scheduler_ = std::make_unique<Scheduler>(database_.get(), &clock_, options);
  }
};

TEST_F(SchedulerOnePerHostTest, WorkersOnDisjointCpusTakeTurns) {
  ExpectTheyTakeTurns("0", "1", "shares its host with a");
}

// A gang's ranks spread over the host's CPUs before doubling up.
TEST(SpreadOverCpusTest, RanksTakeCpusNoEarlierRankHasFirst) {
  auto on = [](std::initializer_list<int> cpus, const std::string& host = "h") {
    HostCpus set;
    for (int cpu : cpus) set.emplace(host, cpu);
    return set;
  };
  // paradnn local --workers 4 on 2 CPUs: "0", "0", "1", "1"; w0 leads.
  EXPECT_EQ(SpreadOverCpus(on({0}), {{"w1", on({0})}, {"w2", on({1})}, {"w3", on({1})}}),
            (std::vector<std::string>{"w2", "w1", "w3"}));
  // Shares of two CPUs each: a peer overlapping the leader waits its layer.
  EXPECT_EQ(SpreadOverCpus(on({0, 1}), {{"a", on({1, 2})}, {"b", on({2, 3})}, {"c", on({4})}}),
            (std::vector<std::string>{"b", "c", "a"}));
  // Another host's CPU 0 is not this host's; workers without --cpus hold none.
  EXPECT_EQ(SpreadOverCpus(on({0}), {{"x", on({0})}, {"y", on({0}, "g")}, {"z", {}}}),
            (std::vector<std::string>{"y", "z", "x"}));
}

}  // namespace
}  // namespace paradnn::server
