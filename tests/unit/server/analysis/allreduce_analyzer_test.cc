// The communication roof end to end (Analyzer over a real SQLite file):
// allreduce sweeps stored with their DataParallelStep, as the allreduce
// family's runner reports them; the allreduce kind's points and fit; the
// roof looked up by scale_out (the latest allreduce sweep of the platform,
// or a note when there is none) and by the roofline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/analysis/allreduce_fit.h"
#include "tests/unit/server/analysis/analyzer_test_support.h"

namespace paradnn::server::analysis {
namespace {

using ::testing::HasSubstr;

constexpr double kAlpha = 40e-6;
constexpr double kBeta = 2e9;

// One job to store: its hyper-parameters and what its runner measured.
struct StoredJob {
  std::map<std::string, int64_t> params;
  v1::Measurement measurement;
};

// An allreduce job's result: one all-reduce of `bytes` over `ranks` that
// took alpha + busbytes / beta (times `slower`).
StoredJob AllreduceJob(int64_t bytes, int32_t ranks, double beta = kBeta, double slower = 1) {
  StoredJob job;
  job.params = {{"bytes", bytes}, {"hosts", ranks}};
  v1::Measurement& m = job.measurement;
  m.set_outcome(v1::OK);
  const double t = slower * (kAlpha + BusBytes(static_cast<double>(bytes), ranks) / beta);
  m.mutable_stats()->set_median_s(t);
  m.mutable_stats()->set_steps(20);
  v1::DataParallelStep* step = m.mutable_data_parallel();
  step->set_ranks(ranks);
  step->set_hosts(ranks);
  step->set_devices_per_host(1);
  step->set_backend("gloo");
  step->set_allreduce_s(t);
  step->set_allreduce_bytes(bytes);
  step->set_algorithm_bytes_per_sec(static_cast<double>(bytes) / t);
  step->set_bus_bytes_per_sec(BusBytes(static_cast<double>(bytes), ranks) / t);
  return job;
}

// An FC data-parallel job over `ranks` replicas whose 4 buckets of 8 MB of
// gradients took `allreduce_s`; executed FLOPs 1e9 per step.
StoredJob FcJob(int32_t ranks, double step_s, double allreduce_s) {
  StoredJob job;
  job.params = {{"layer", 2}, {"node", 1024}, {"batch", 64}, {"hosts", ranks}};
  v1::Measurement& m = job.measurement;
  m.set_outcome(v1::OK);
  m.mutable_stats()->set_median_s(step_s);
  m.mutable_stats()->set_steps(10);
  m.set_examples_per_sec(64 / step_s);
  m.set_executed_flops_per_sec(1e9 / step_s);
  m.mutable_counts()->set_executed_flops(1e9);
  m.mutable_counts()->set_bytes_per_step(1e8);
  v1::DataParallelStep* step = m.mutable_data_parallel();
  step->set_ranks(ranks);
  step->set_hosts(ranks);
  step->set_devices_per_host(1);
  step->set_backend("gloo");
  step->set_overlap(false);
  step->set_buckets(4);
  step->set_allreduce_s(allreduce_s);
  step->set_allreduce_bytes(8'000'000);
  step->set_compute_s(step_s - allreduce_s);
  step->set_exposed_communication_s(allreduce_s);
  return job;
}

std::vector<StoredJob> AllreduceSweep(const std::vector<int32_t>& ranks, double beta = kBeta) {
  std::vector<StoredJob> jobs;
  for (int32_t n : ranks) {
    for (int64_t bytes = 1024; bytes <= 16 << 20; bytes *= 4) {
      jobs.push_back(AllreduceJob(bytes, n, beta));
    }
  }
  return jobs;
}

class AllreduceAnalyzerTest : public AnalyzerTest {
 protected:
  // Stores `jobs` as one sweep of `family` on the CPU platform.
  int64_t StoreJobs(const std::string& family, const std::vector<StoredJob>& jobs) {
    v1::SweepSpec spec;
    spec.set_name(family);
    spec.set_family(family);
    spec.set_device("cpu");
    std::vector<db::NewJob> new_jobs;
    for (const StoredJob& job : jobs) {
      db::NewJob& row = new_jobs.emplace_back();
      row.config.set_family(family);
      row.config.set_precision("float32");
      row.config.set_optimizer("sgd");
      for (const auto& [key, value] : job.params) (*row.config.mutable_params())[key] = value;
      row.device = "cpu";
      row.ordinal = static_cast<int32_t>(new_jobs.size() - 1);
    }
    absl::StatusOr<int64_t> sweep =
        db::SweepStore(database_.get()).CreateSync(spec, std::move(new_jobs), kNow);
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    db::JobStore job_store(database_.get());
    db::ResultStore result_store(database_.get());
    for (const StoredJob& job : jobs) {
      // A gang job leases its peers' attempts with it: fresh peers each time.
      db::GangCandidates peers;
      const int64_t hosts = job.params.at("hosts");
      for (int64_t rank = 1; rank < hosts; ++rank) {
        peers.idle_peers.push_back(absl::StrCat("peer-", ++peer_count_));
      }
      peers.platform_workers = hosts;
      peers.platform_id = cpu_platform_;
      absl::StatusOr<std::optional<db::Lease>> lease =
          job_store.LeaseNextSync("cpu", "w0", kNow, kNow + 60'000, peers);
      EXPECT_TRUE(lease.ok() && lease->has_value())
          << (lease.ok() ? "no job" : lease.status().ToString());
      if (!lease.ok() || !lease->has_value()) return 0;
      absl::StatusOr<db::StoreOutcome> stored = result_store.StoreSync(
          (*lease)->job_id, (*lease)->attempt_id, "w0", cpu_platform_, job.measurement, kNow);
      EXPECT_TRUE(stored.ok()) << stored.status();
    }
    return sweep.ok() ? *sweep : 0;
  }

  absl::StatusOr<v1::AnalyzeResponse> Kind(int64_t sweep, const std::string& kind) {
    v1::AnalyzeRequest request;
    request.mutable_selection()->add_sweep_ids(sweep);
    if (kind == "allreduce") request.mutable_allreduce();
    if (kind == "scale_out") request.mutable_scale_out()->set_field("hosts");
    if (kind == "roofline") request.mutable_roofline();
    return Analyze(request);
  }

  static constexpr int64_t kNow = 1'700'000'000'000;
  int64_t peer_count_ = 0;
};

TEST_F(AllreduceAnalyzerTest, FitsOneRoofPerPlatformBackendAndRanks) {
  const int64_t sweep = StoreJobs("allreduce", AllreduceSweep({2, 4}));
  absl::StatusOr<v1::AnalyzeResponse> response = Kind(sweep, "allreduce");
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::AllreduceResponse& allreduce = response->allreduce();
  ASSERT_EQ(allreduce.series_size(), 2);
  EXPECT_EQ(allreduce.left_out(), 0);
  for (const v1::AllreduceSeries& series : allreduce.series()) {
    EXPECT_EQ(series.backend(), "gloo");
    EXPECT_EQ(series.fingerprint(), "cpu-a");
    ASSERT_EQ(series.points_size(), 8);
    const v1::AllreduceRoof& roof = series.roof();
    ASSERT_TRUE(roof.fitted()) << roof.note();
    EXPECT_NEAR(roof.alpha_s() / kAlpha, 1, 1e-6);
    EXPECT_NEAR(roof.beta_bytes_per_sec() / kBeta, 1, 1e-6);
    EXPECT_EQ(roof.sizes(), 8);
    EXPECT_THAT(roof.sweep_ids(), ::testing::ElementsAre(sweep));
    const v1::AllreducePoint& largest = series.points(7);
    EXPECT_EQ(largest.bytes(), 16 << 20);
    EXPECT_EQ(largest.runs(), 1);
    EXPECT_NEAR(largest.algorithm_bytes_per_sec(), largest.bytes() / largest.time_s(), 1e-3);
    EXPECT_NEAR(largest.bus_bytes_per_sec(),
                largest.algorithm_bytes_per_sec() * 2 * (series.ranks() - 1) / series.ranks(),
                1e-3);
    EXPECT_NEAR(largest.roof_fraction(), 1, 1e-6);
  }
  EXPECT_EQ(allreduce.series(0).ranks(), 2);
  EXPECT_EQ(allreduce.series(1).ranks(), 4);
}

TEST_F(AllreduceAnalyzerTest, RefusesSweepsOfOtherFamiliesNamingTheFamily) {
  const int64_t sweep = StoreJobs("fc", {FcJob(2, 0.1, 0.02)});
  absl::StatusOr<v1::AnalyzeResponse> response = Kind(sweep, "allreduce");
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(response.status()));
  EXPECT_THAT(response.status().message(), HasSubstr("family allreduce"));
  EXPECT_THAT(response.status().message(), HasSubstr("of family fc"));
}

TEST_F(AllreduceAnalyzerTest, ScaleOutComparesEachAllreduceWithTheLatestRoof) {
  // An older calibration at half the bandwidth, then the current one.
  StoreJobs("allreduce", AllreduceSweep({2, 4}, kBeta / 2));
  const int64_t latest = StoreJobs("allreduce", AllreduceSweep({2, 4}));
  const int64_t fc =
      StoreJobs("fc", {FcJob(1, 0.1, 0), FcJob(2, 0.12, 0.02), FcJob(4, 0.15, 0.05)});
  absl::StatusOr<v1::AnalyzeResponse> response = Kind(fc, "scale_out");
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::ScaleOutSeries& series = response->scale_out().series(0);
  ASSERT_EQ(series.points_size(), 3);
  EXPECT_EQ(series.points(0).roof_allreduce_s(), 0);  // one rank: no all-reduce to compare
  for (int i : {1, 2}) {
    const v1::ScaleOutPoint& p = series.points(i);
    const double roof = 4 * kAlpha + BusBytes(8e6, p.ranks()) / kBeta;
    EXPECT_NEAR(p.roof_allreduce_s() / roof, 1, 1e-6) << "ranks " << p.ranks();
    EXPECT_NEAR(p.roof_fraction(), p.roof_allreduce_s() / p.allreduce_s(), 1e-12);
    EXPECT_EQ(p.allreduce_bytes(), 8'000'000);
    EXPECT_EQ(p.buckets(), 4);
  }
  ASSERT_EQ(series.roofs_size(), 2);
  EXPECT_THAT(series.roofs(0), HasSubstr(absl::StrCat("sweep ", latest)));
  EXPECT_THAT(series.roofs(0), HasSubstr("gloo, 2 ranks"));
  EXPECT_THAT(series.note(), ::testing::Not(HasSubstr("no all-reduce roof")));
}

TEST_F(AllreduceAnalyzerTest, ScaleOutSaysWhichPlatformHasNoRoof) {
  StoreJobs("allreduce", AllreduceSweep({2}));  // no 4-rank calibration
  const int64_t fc =
      StoreJobs("fc", {FcJob(1, 0.1, 0), FcJob(2, 0.12, 0.02), FcJob(4, 0.15, 0.05)});
  absl::StatusOr<v1::AnalyzeResponse> response = Kind(fc, "scale_out");
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::ScaleOutSeries& series = response->scale_out().series(0);
  EXPECT_THAT(series.note(),
              HasSubstr("no all-reduce roof for platform Synthetic cpu cpu-a (cpu-a), gloo, 4 "
                        "ranks: run an allreduce sweep"));
  EXPECT_GT(series.points(1).roof_allreduce_s(), 0);
  EXPECT_EQ(series.points(2).roof_allreduce_s(), 0);
  EXPECT_EQ(series.points(2).roof_fraction(), 0);
}

TEST_F(AllreduceAnalyzerTest, RooflineCapsDataParallelJobsAtTheCommunicationRoof) {
  StoreJobs("allreduce", AllreduceSweep({4}));
  const int64_t fc = StoreJobs("fc", {FcJob(4, 0.15, 0.05)});
  absl::StatusOr<v1::AnalyzeResponse> response = Kind(fc, "roofline");
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::RooflineResponse& roofline = response->roofline();
  ASSERT_EQ(roofline.points_size(), 1);
  const double roof = 4 * kAlpha + BusBytes(8e6, 4) / kBeta;
  EXPECT_NEAR(roofline.points(0).communication_roof_s() / roof, 1, 1e-6);
  EXPECT_NEAR(roofline.points(0).communication_ceiling_flops_per_sec(), 1e9 / roof, 1e3);
  ASSERT_EQ(roofline.roofs_size(), 1);
  ASSERT_EQ(roofline.roofs(0).communication_size(), 1);
  EXPECT_EQ(roofline.roofs(0).communication(0).ranks(), 4);
}

TEST_F(AllreduceAnalyzerTest, RooflineWithoutRoofsLeavesCeilingsUnset) {
  const int64_t fc = StoreJobs("fc", {FcJob(4, 0.15, 0.05)});
  absl::StatusOr<v1::AnalyzeResponse> response = Kind(fc, "roofline");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->roofline().points(0).communication_roof_s(), 0);
  EXPECT_EQ(response->roofline().roofs(0).communication_size(), 0);
}

}  // namespace
}  // namespace paradnn::server::analysis
