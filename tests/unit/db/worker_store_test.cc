#include "db/worker_store.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "tests/unit/db/test_db.h"

// In the fixtures' namespace (tests/unit/db/test_db.h): its builders need no
// using-list.
namespace paradnn::db::testing {
namespace {

v1::Platform MakePlatform(const std::string& fingerprint, const std::string& hostname) {
  v1::Platform platform = CpuPlatform(fingerprint, hostname);
  platform.set_device_name("Xeon");
  platform.set_cores(2);
  platform.set_libtorch_version("2.3.0");
  platform.set_blas_backend("OpenBLAS 0.3.21");
  return platform;
}

using WorkerStoreTest = StoresTest;

TEST_F(WorkerStoreTest, PlatformUpsertIsIdempotentByFingerprint) {
  absl::StatusOr<int64_t> first = platforms_->UpsertSync(MakePlatform("fp-a", "host-1"));
  ASSERT_TRUE(first.ok()) << first.status();
  // Same stack on another host: the same platform.
  EXPECT_EQ(*platforms_->UpsertSync(MakePlatform("fp-a", "host-2")), *first);
  EXPECT_EQ(*platforms_->UpsertSync(MakePlatform("fp-a", "host-1")), *first);
  absl::StatusOr<int64_t> other = platforms_->UpsertSync(MakePlatform("fp-b", "host-1"));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *first);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM platforms"), 2);

  absl::StatusOr<v1::Platform> stored = platforms_->Get(*first);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->fingerprint(), "fp-a");
  EXPECT_EQ(stored->hostname(), "host-1");  // the first report describes it
  EXPECT_EQ(stored->cores(), 2);
  EXPECT_EQ(*ScalarInt(*db_,
                       "SELECT COUNT(*) FROM platforms WHERE blas_backend = "
                       "'OpenBLAS 0.3.21' AND libtorch_version = '2.3.0'"),
            2);

  EXPECT_EQ(platforms_->Get(9999).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(platforms_->UpsertSync(MakePlatform("", "h")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(WorkerStoreTest, PlatformKeepsTheNewestCalibration) {
  v1::Platform uncalibrated = MakePlatform("fp-a", "host-1");
  absl::StatusOr<int64_t> id = platforms_->UpsertSync(uncalibrated);
  ASSERT_TRUE(id.ok()) << id.status();

  v1::Platform calibrated = MakePlatform("fp-a", "host-2");
  calibrated.set_calibrated_unix_ms(2000);
  v1::MatmulRoof* roof = calibrated.add_matmul_roofs();
  roof->set_dtype("float32");
  roof->set_flops_per_sec(2.5e11);
  EXPECT_EQ(*platforms_->UpsertSync(calibrated), *id);
  ASSERT_EQ(platforms_->Get(*id)->matmul_roofs_size(), 1);
  EXPECT_EQ(platforms_->Get(*id)->matmul_roofs(0).flops_per_sec(), 2.5e11);

  // An older calibration, or none, leaves the newest in place.
  v1::Platform older = calibrated;
  older.set_calibrated_unix_ms(1000);
  older.mutable_matmul_roofs(0)->set_flops_per_sec(1e11);
  EXPECT_EQ(*platforms_->UpsertSync(older), *id);
  EXPECT_EQ(*platforms_->UpsertSync(uncalibrated), *id);
  EXPECT_EQ(platforms_->Get(*id)->matmul_roofs(0).flops_per_sec(), 2.5e11);
  EXPECT_EQ(platforms_->Get(*id)->calibrated_unix_ms(), 2000);
}

// A dtype's roofs are compared path by path. On LibTorch 1.13 CPUs the
// bfloat16 convolution roof sits ~4x below the bfloat16 GEMM one: a
// recalibration's GEMM roof measured against the stored convolution roof
// refused honest workers (a CI run's four local workers never connected).
TEST_F(WorkerStoreTest, RoofsOfOneDtypeAreComparedPerKernelPath) {
  auto add_roof = [](v1::Platform* platform, const std::string& kernel, double flops) {
    v1::MatmulRoof* roof = platform->add_matmul_roofs();
    roof->set_dtype("bfloat16");
    roof->set_kernel(kernel);
    roof->set_flops_per_sec(flops);
  };
  v1::Platform first = MakePlatform("fp-a", "host-1");
  first.set_calibrated_unix_ms(1000);
  add_roof(&first, "", 4.18e9);  // "" = matmul (older workers)
  add_roof(&first, "conv", 1.06e9);
  absl::StatusOr<int64_t> id = platforms_->UpsertSync(first);
  ASSERT_TRUE(id.ok()) << id.status();

  v1::Platform recalibrated = MakePlatform("fp-a", "host-1");
  recalibrated.set_calibrated_unix_ms(2000);
  add_roof(&recalibrated, "matmul", 4.36e9);
  add_roof(&recalibrated, "conv", 1.1e9);
  absl::StatusOr<int64_t> again = platforms_->UpsertSync(recalibrated);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *id);
  EXPECT_EQ(platforms_->Get(*id)->matmul_roofs(0).flops_per_sec(), 4.36e9);

  // The same path 4x off is still refused, naming dtype and path.
  v1::Platform contradicting = recalibrated;
  contradicting.set_calibrated_unix_ms(3000);
  contradicting.mutable_matmul_roofs(1)->set_flops_per_sec(5e9);
  const absl::Status refused = platforms_->UpsertSync(contradicting).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("platform.matmul_roofs[bfloat16, conv].flops_per_sec"),
            absl::string_view::npos)
      << refused;
}

// A roof far from the stored one is judged after the host's own speed at
// each calibration: the stored one ran on a busy host (its probe 60.4
// GFLOP/s), the new one on a quiet host (99.2, 1.64x), so a conv roof 4.2x
// the stored one is 2.6x after it and taken. Without probes, or with the
// host 1.64x slower instead, the same roof is refused, and the message says
// what was taken out.
TEST_F(WorkerStoreTest, TheHostsOwnSpeedIsTakenOutBeforeRoofsAreCompared) {
  auto platform = [](int64_t calibrated, double probe, double conv_roof) {
    v1::Platform p = MakePlatform("fp-a", "host-1");
    p.set_calibrated_unix_ms(calibrated);
    p.set_probe_flops_per_sec(probe);
    v1::MatmulRoof* roof = p.add_matmul_roofs();
    roof->set_dtype("bfloat16");
    roof->set_kernel("conv");
    roof->set_flops_per_sec(conv_roof);
    return p;
  };
  absl::StatusOr<int64_t> id = platforms_->UpsertSync(platform(1000, 60.4e9, 1.06e9));
  ASSERT_TRUE(id.ok()) << id.status();
  const absl::Status slower = platforms_->UpsertSync(platform(2000, 60.4e9 / 1.64, 4.5e9)).status();
  EXPECT_EQ(slower.code(), absl::StatusCode::kInvalidArgument) << slower;
  EXPECT_NE(slower.message().find("after the host's own speed (its probe 0.61x of then)"),
            absl::string_view::npos)
      << slower;
  EXPECT_EQ(platforms_->UpsertSync(platform(3000, 0, 4.5e9)).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<int64_t> quiet = platforms_->UpsertSync(platform(4000, 99.2e9, 4.5e9));
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_EQ(platforms_->Get(*id)->matmul_roofs(0).flops_per_sec(), 4.5e9);
  // A probe itself more than 4x off explains nothing: compared as read.
  EXPECT_EQ(platforms_->UpsertSync(platform(5000, 99.2e9 * 5, 4.5e9 * 5)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Rows belong to a trust domain (docs/security.md): any worker of it, and
// no other domain's, recalibrates a row, and which domain reports a
// fingerprint first changes no row's name.
TEST_F(WorkerStoreTest, APlatformRowBelongsToATrustDomain) {
  const PlatformReporter fleet_a{"worker-a", ""}, fleet_b{"worker-b", ""};
  const PlatformReporter evil{"evil-1", "evil-*"};
  v1::Platform first = MakePlatform("fp-a", "host-1");
  first.set_calibrated_unix_ms(1000);
  first.add_matmul_roofs()->set_dtype("float32");
  first.mutable_matmul_roofs(0)->set_flops_per_sec(2e11);

  // Another domain reports the fingerprint first: a row of its own.
  v1::Platform claimed = first;
  claimed.set_calibrated_unix_ms(5000);
  claimed.mutable_matmul_roofs(0)->set_flops_per_sec(3e11);
  absl::StatusOr<int64_t> evil_row = platforms_->UpsertSync(claimed, evil);
  ASSERT_TRUE(evil_row.ok()) << evil_row.status();
  EXPECT_EQ(platforms_->Get(*evil_row)->fingerprint(), "fp-a@evil-*");
  absl::StatusOr<int64_t> id = platforms_->UpsertSync(first, fleet_a);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_NE(*id, *evil_row);
  EXPECT_EQ(platforms_->Get(*id)->fingerprint(), "fp-a") << "the fleet's name, whoever came first";
  // The other domain's newer calibration stays in its own row.
  claimed.set_calibrated_unix_ms(7000);
  EXPECT_EQ(*platforms_->UpsertSync(claimed, evil), *evil_row);
  EXPECT_EQ(platforms_->Get(*id)->matmul_roofs(0).flops_per_sec(), 2e11);
  // Any worker of the fleet recalibrates the fleet's row.
  v1::Platform recalibrated = first;
  recalibrated.set_calibrated_unix_ms(6000);
  recalibrated.mutable_matmul_roofs(0)->set_flops_per_sec(2.2e11);
  EXPECT_EQ(*platforms_->UpsertSync(recalibrated, fleet_b), *id);
  EXPECT_EQ(platforms_->Get(*id)->matmul_roofs(0).flops_per_sec(), 2.2e11);
  // A claim of the fingerprint whose calibration contradicts it (9e15 FLOP/s
  // against 2.2e11): refused, naming the roof, in any domain.
  v1::Platform contradicting = first;
  contradicting.set_calibrated_unix_ms(8000);
  contradicting.mutable_matmul_roofs(0)->set_flops_per_sec(9e15);
  for (const PlatformReporter& reporter : {fleet_b, evil}) {
    const absl::Status refused = platforms_->UpsertSync(contradicting, reporter).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << reporter.worker_id;
    EXPECT_NE(refused.message().find("platform.matmul_roofs[float32, matmul].flops_per_sec"),
              absl::string_view::npos)
        << refused;
  }
  EXPECT_EQ(platforms_->Get(*id)->matmul_roofs(0).flops_per_sec(), 2.2e11);
  // Other facts under the fingerprint: a platform of their own, per worker.
  v1::Platform other = first;
  other.set_device_name("Not a Xeon");
  absl::StatusOr<int64_t> apart = platforms_->UpsertSync(other, fleet_b);
  ASSERT_TRUE(apart.ok()) << apart.status();
  EXPECT_NE(*apart, *id);
  EXPECT_EQ(platforms_->Get(*apart)->fingerprint(), "fp-a~worker-b");
  EXPECT_EQ(platforms_->Get(*id)->device_name(), "Xeon");
  // A calibration from the future is refused, naming the field.
  v1::Platform future = first;
  future.set_calibrated_unix_ms(std::numeric_limits<int64_t>::max());
  const absl::Status refused = platforms_->UpsertSync(future, fleet_a).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("platform.calibrated_unix_ms"), absl::string_view::npos);
}

TEST_F(WorkerStoreTest, ListShowsConnectionStatePlatformAndJobsDone) {
  absl::StatusOr<int64_t> platform = platforms_->UpsertSync(MakePlatform("fp-a", "host-1"));
  ASSERT_TRUE(platform.ok());
  workers_->Connected("host-1-cpu", "cpu", "host-1", *platform, "", "", kNow);
  workers_->Connected("host-2-cpu", "cpu", "host-2", 0, "", "", kNow + 1);
  workers_->Seen("host-1-cpu", kNow + 500);
  workers_->Disconnected("host-2-cpu", kNow + 600);

  // Two results by host-1-cpu.
  SweepStore sweeps(db_.get());
  JobStore jobs(db_.get());
  ResultStore results(db_.get());
  ASSERT_TRUE(sweeps.CreateSync(Spec("s"), Jobs(3), kNow).ok());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::optional<Lease>> lease =
        jobs.LeaseNextSync("cpu", "host-1-cpu", kNow, kNow + 1);
    ASSERT_TRUE(lease.ok() && lease->has_value());
    ASSERT_TRUE(results
                    .StoreSync((*lease)->job_id, (*lease)->attempt_id, "host-1-cpu", *platform,
                               OkMeasurement(1), kNow)
                    .ok());
  }
  Flush(*db_);

  absl::StatusOr<std::vector<v1::WorkerInfo>> list = workers_->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  const v1::WorkerInfo& one = (*list)[0];
  EXPECT_EQ(one.worker_id(), "host-1-cpu");
  EXPECT_EQ(one.device_kind(), "cpu");
  EXPECT_EQ(one.hostname(), "host-1");
  EXPECT_TRUE(one.connected());
  EXPECT_EQ(one.state(), "idle");
  EXPECT_EQ(one.connected_unix_ms(), kNow);
  EXPECT_EQ(one.last_seen_unix_ms(), kNow + 500);
  EXPECT_EQ(one.platform().fingerprint(), "fp-a");
  EXPECT_EQ(one.jobs_done(), 2);
  const v1::WorkerInfo& two = (*list)[1];
  EXPECT_EQ(two.worker_id(), "host-2-cpu");
  EXPECT_FALSE(two.connected());
  EXPECT_EQ(two.state(), "disconnected");
  EXPECT_EQ(two.last_seen_unix_ms(), kNow + 600);
  EXPECT_FALSE(two.has_platform());
  EXPECT_EQ(two.jobs_done(), 0);
}

TEST_F(WorkerStoreTest, ReconnectingUpdatesTheSameRow) {
  workers_->Connected("w", "cpu", "old-host", 0, "", "", kNow);
  workers_->Disconnected("w", kNow + 10);
  workers_->Connected("w", "cpu", "new-host", 0, "", "", kNow + 20);
  Flush(*db_);
  absl::StatusOr<std::vector<v1::WorkerInfo>> list = workers_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_TRUE((*list)[0].connected());
  EXPECT_EQ((*list)[0].hostname(), "new-host");
  EXPECT_EQ((*list)[0].connected_unix_ms(), kNow + 20);
}

TEST_F(WorkerStoreTest, MarkAllDisconnectedKeepsLastSeen) {
  workers_->Connected("a", "cpu", "h1", 0, "", "", kNow);
  workers_->Connected("b", "cuda", "h2", 0, "", "", kNow + 5);
  Flush(*db_);
  ASSERT_TRUE(workers_->MarkAllDisconnectedSync(kNow + 1000).ok());
  absl::StatusOr<std::vector<v1::WorkerInfo>> list = workers_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  for (const v1::WorkerInfo& info : *list) {
    EXPECT_FALSE(info.connected()) << info.worker_id();
    EXPECT_EQ(info.state(), "disconnected");
  }
  EXPECT_EQ((*list)[0].last_seen_unix_ms(), kNow);
  EXPECT_EQ((*list)[1].last_seen_unix_ms(), kNow + 5);
}

TEST_F(WorkerStoreTest, AnUnknownPlatformIdStillRecordsTheWorker) {
  workers_->Connected("w", "cpu", "h", 4242, "", "", kNow);
  Flush(*db_);
  absl::StatusOr<std::vector<v1::WorkerInfo>> list = workers_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_TRUE((*list)[0].connected());
  EXPECT_FALSE((*list)[0].has_platform());
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM workers WHERE platform_id IS NULL"), 1);
}

}  // namespace
}  // namespace paradnn::db::testing
