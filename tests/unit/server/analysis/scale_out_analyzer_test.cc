// The scale-out analysis end to end (Analyzer over a real SQLite file): FC
// jobs over hosts stored through the stores with their DataParallelStep, a
// weak and a strong series, a failed baseline, and the errors for a field
// that is not a data-parallel count or that the sweeps do not sweep.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/unit/server/analysis/analyzer_test_support.h"

namespace paradnn::server::analysis {
namespace {

using ::testing::HasSubstr;

// One data-parallel job of an FC sweep over hosts.
struct GangJob {
  int64_t hosts = 1;
  int64_t batch = 64;
  double step_s = 0.1;
  double exposed_s = 0;  // with a DataParallelStep unless `plain`
  bool plain = false;
  v1::Outcome outcome = v1::OK;
  bool on_gpu_platform = false;  // stored on the fixture's other platform
};

class ScaleOutAnalyzerTest : public AnalyzerTest {
 protected:
  // Stores `jobs` as one sweep (one lease and result each, as
  // StoreSyntheticSweep does), each OK result with its DataParallelStep.
  int64_t StoreGangs(const std::vector<GangJob>& jobs) {
    v1::SweepSpec spec;
    spec.set_name("gangs");
    spec.set_family("fc");
    spec.set_device("cpu");
    std::vector<db::NewJob> new_jobs;
    for (const GangJob& job : jobs) {
      db::NewJob& row = new_jobs.emplace_back();
      row.config.set_family("fc");
      row.config.set_precision("float32");
      row.config.set_optimizer("sgd");
      auto& params = *row.config.mutable_params();
      params["layer"] = 2;
      params["node"] = 256;
      params["batch"] = job.batch;
      params["hosts"] = job.hosts;
      row.device = "cpu";
      row.ordinal = static_cast<int32_t>(new_jobs.size() - 1);
    }
    absl::StatusOr<int64_t> sweep =
        db::SweepStore(database_.get()).CreateSync(spec, std::move(new_jobs), kNow);
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    db::JobStore job_store(database_.get());
    db::ResultStore result_store(database_.get());
    for (size_t i = 0; i < jobs.size(); ++i) {
      const GangJob& job = jobs[i];
      // A gang job leases its peers' attempts with it; fresh peers each
      // time, so that no earlier gang still holds them.
      db::GangCandidates peers;
      for (int64_t rank = 1; rank < job.hosts; ++rank) {
        peers.idle_peers.push_back(absl::StrCat("peer-", i, "-", rank));
      }
      const int64_t platform = job.on_gpu_platform ? gpu_platform_ : cpu_platform_;
      peers.platform_workers = job.hosts;
      peers.platform_id = platform;
      absl::StatusOr<std::optional<db::Lease>> lease =
          job_store.LeaseNextSync("cpu", "w0", kNow, kNow + 60'000, peers);
      EXPECT_TRUE(lease.ok() && lease->has_value());
      if (!lease.ok() || !lease->has_value()) return 0;
      absl::StatusOr<db::StoreOutcome> stored = result_store.StoreSync(
          (*lease)->job_id, (*lease)->attempt_id, "w0", platform, MeasurementOf(job), kNow);
      EXPECT_TRUE(stored.ok()) << stored.status();
    }
    return sweep.ok() ? *sweep : 0;
  }

  static v1::Measurement MeasurementOf(const GangJob& job) {
    v1::Measurement m;
    m.set_outcome(job.outcome);
    if (job.outcome != v1::OK) return m;
    m.mutable_stats()->set_median_s(job.step_s);
    m.mutable_stats()->set_steps(10);
    m.set_examples_per_sec(static_cast<double>(job.batch) / job.step_s);  // one process's
    if (job.plain) return m;
    v1::DataParallelStep* step = m.mutable_data_parallel();
    step->set_ranks(static_cast<int32_t>(job.hosts));
    step->set_hosts(static_cast<int32_t>(job.hosts));
    step->set_devices_per_host(1);
    step->set_backend("gloo");
    step->set_overlap(true);
    step->set_optimizer_s(0.01);
    step->set_exposed_communication_s(job.exposed_s);
    step->set_compute_s(job.step_s - job.exposed_s - 0.01);
    return m;
  }

  absl::StatusOr<v1::AnalyzeResponse> ScaleOutOf(int64_t sweep, const std::string& field) {
    v1::AnalyzeRequest request;
    request.mutable_selection()->add_sweep_ids(sweep);
    request.mutable_scale_out()->set_field(field);
    return Analyze(request);
  }

  static constexpr int64_t kNow = 1'700'000'000'000;
};

TEST_F(ScaleOutAnalyzerTest, WeakAndStrongSeriesFromStoredGangs) {
  // Weak at batch 64 (hosts 1, 2, 4) and strong at global batch 128
  // (hosts 1 batch 128, hosts 2 batch 64); hosts=1 batch 128 ran plain.
  const int64_t sweep =
      StoreGangs({{1, 64, 0.1}, {2, 64, 0.125, 0.025}, {4, 64, 0.2, 0.12}, {1, 128, 0.2, 0, true}});
  absl::StatusOr<v1::AnalyzeResponse> response = ScaleOutOf(sweep, "");  // hosts by default
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->results(), 4);
  EXPECT_EQ(response->scope().aggregation(), "median of each configuration's repeats per N");
  const v1::ScaleOutResponse& scale_out = response->scale_out();
  EXPECT_EQ(scale_out.field(), "hosts");
  ASSERT_EQ(scale_out.series_size(), 2);
  const v1::ScaleOutSeries& weak = scale_out.series(0);
  EXPECT_EQ(weak.mode(), "weak");
  EXPECT_THAT(weak.config(), ::testing::StartsWith("fc layer=2 node=256"));
  EXPECT_EQ(weak.baseline_kind(), "data-parallel 1 rank");
  ASSERT_EQ(weak.points_size(), 3);
  // The whole job's throughput: batch x ranks over the step, whatever one
  // process reported.
  EXPECT_NEAR(weak.points(2).examples_per_sec(), 4 * 64 / 0.2, 1e-9);
  EXPECT_NEAR(weak.points(2).efficiency(), 0.5, 1e-12);
  EXPECT_NEAR(weak.points(2).communication_share(), 0.6, 1e-12);
  EXPECT_EQ(weak.points(2).backend(), "gloo");
  // Shares 0, 0.2, 0.6: half is crossed between hosts 2 and 4.
  ASSERT_TRUE(weak.has_crossover_n());
  EXPECT_GT(weak.crossover_n(), 2);
  EXPECT_LT(weak.crossover_n(), 4);
  const v1::ScaleOutSeries& strong = scale_out.series(1);
  EXPECT_EQ(strong.mode(), "strong");
  EXPECT_EQ(strong.global_batch(), 128);
  EXPECT_EQ(strong.baseline_kind(), "plain");
  EXPECT_NEAR(strong.points(1).speedup(), 0.2 / 0.125, 1e-12);
}

TEST_F(ScaleOutAnalyzerTest, ASeriesOverSeveralPlatformsSaysSo) {
  GangJob baseline{1, 64, 0.10};
  baseline.on_gpu_platform = true;  // the baseline ran on another worker's platform
  const int64_t sweep = StoreGangs({baseline, {2, 64, 0.12, 0.01}, {1, 128, 0.2}, {2, 128, 0.22}});
  absl::StatusOr<v1::AnalyzeResponse> r = ScaleOutOf(sweep, "hosts");
  ASSERT_TRUE(r.ok()) << r.status();
  int mixed = 0;
  for (const v1::ScaleOutSeries& series : r->scale_out().series()) {
    if (series.note().find("platforms (ids") == std::string::npos) continue;
    ++mixed;
    EXPECT_NE(series.note().find("ran on 2 platforms"), std::string::npos) << series.note();
    EXPECT_NE(series.note().find("--where fingerprint="), std::string::npos) << series.note();
  }
  // Only weak batch 64 holds the baseline of the other platform; weak batch
  // 128 and strong global 128 (hosts 1 batch 128, hosts 2 batch 64) do not.
  EXPECT_EQ(mixed, 1) << r->DebugString();
  EXPECT_GE(r->scale_out().series_size(), 3);
}

TEST_F(ScaleOutAnalyzerTest, AFailedBaselineIsNamed) {
  GangJob oom{1, 64, 0.1};
  oom.outcome = v1::OOM;
  const int64_t sweep = StoreGangs({oom, {2, 64, 0.125, 0.025}, {4, 64, 0.2, 0.05}});
  absl::StatusOr<v1::AnalyzeResponse> response = ScaleOutOf(sweep, "hosts");
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->scale_out().series_size(), 1);
  const v1::ScaleOutSeries& weak = response->scale_out().series(0);
  EXPECT_EQ(weak.baseline_n(), 2);
  EXPECT_EQ(weak.note(), "no OK result at hosts=1 (OOM): the baseline is hosts=2");
}

TEST_F(ScaleOutAnalyzerTest, OtherFieldsAndUnsweptCountsAreRefusedByName) {
  const int64_t sweep = StoreGangs({{1, 64, 0.1}, {2, 64, 0.125, 0.025}});
  absl::StatusOr<v1::AnalyzeResponse> threads = ScaleOutOf(sweep, "intra_op_threads");
  EXPECT_EQ(threads.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(threads.status().message(), HasSubstr("scale_out.field: 'intra_op_threads'"));
  EXPECT_THAT(threads.status().message(), HasSubstr("allowed: hosts"));
  absl::StatusOr<v1::AnalyzeResponse> devices = ScaleOutOf(sweep, "devices");
  EXPECT_EQ(devices.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(devices.status().message(), HasSubstr("do not sweep devices"));
}

}  // namespace
}  // namespace paradnn::server::analysis
