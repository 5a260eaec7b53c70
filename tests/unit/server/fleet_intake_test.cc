// The fleet report over a real database: the roofs come from the platform a
// worker of the job's device kind calibrated, unless the request gives one.
#include "server/fleet_intake.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db/fleet_event_store.h"
#include "db/platform_store.h"
#include "db/worker_store.h"
#include "fleet/event_line.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::server {
namespace {

class FleetReportTest : public db::testing::DbTest {
 protected:
  void SetUp() override {
    DbTest::SetUp();
    v1::Platform platform;
    platform.set_fingerprint("fp-fleet");
    platform.set_device_kind("cpu-test");
    v1::MatmulRoof& roof = *platform.add_matmul_roofs();
    roof.set_dtype("float32");
    roof.set_kernel("matmul");
    roof.set_flops_per_sec(2e11);
    v1::BandwidthPoint& dram = *platform.add_bandwidth();
    dram.set_kernel("copy");
    dram.set_bytes(int64_t{1} << 30);
    dram.set_bytes_per_sec(2e10);
    absl::StatusOr<int64_t> id = db::PlatformStore(db_.get()).UpsertSync(platform);
    ASSERT_TRUE(id.ok()) << id.status();
    platform_id_ = *id;
    db::WorkerStore(db_.get()).Connected("w1", "cpu-test", "host", platform_id_, "harness", "",
                                         1000);
    std::vector<v1::TrainingEvent> events;
    for (const std::string job : {"fp32", "bf16"}) {
      const std::string precision = job == "bf16" ? R"(,"precision":"bfloat16")" : "";
      for (const std::string& line : std::vector<std::string>{
               R"("event":"submitted","time":0)" + precision,
               R"("event":"requested","time":0,"device_kind":"cpu-test","devices":1)",
               R"("event":"granted","time":0,"devices":1)",
               R"("event":"step","start":0,"end":1,"step":1,"examples":8,"flops":1e11,)"
               R"("bytes":1e9)",
               R"("event":"step","start":1,"end":2,"step":2,"examples":8,"flops":1e11,)"
               R"("bytes":1e9)",
               R"("event":"ended","time":2,"status":"completed")"}) {
        absl::StatusOr<v1::TrainingEvent> e =
            fleet::ParseEventLine("{\"v\":1,\"job\":\"" + job + "\"," + line + "}");
        ASSERT_TRUE(e.ok()) << e.status();
        events.push_back(*e);
      }
    }
    // Queued after the worker's connection, so both are stored once it returns.
    absl::StatusOr<int64_t> added = db::FleetEventStore(db_.get()).AddSync(events);
    ASSERT_TRUE(added.ok()) << added.status();
    ASSERT_EQ(*added, 12);
  }

  int64_t platform_id_ = 0;
};

TEST_F(FleetReportTest, ProgramGoodputIsAgainstTheRoofAWorkerOfTheKindCalibrated) {
  v1::FleetReportRequest request;
  request.set_jobs(true);
  absl::StatusOr<v1::FleetReportResponse> report = BuildFleetReport(*db_, request);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->events(), 12);
  ASSERT_EQ(report->jobs_size(), 2);
  const v1::JobGoodput& bf16 = report->jobs(0);
  const v1::JobGoodput& fp32 = report->jobs(1);
  ASSERT_EQ(fp32.job(), "fp32");
  // 1e11 FLOPs at 2e11 FLOP/s: 0.5 s ideal of each 1 s step (the bytes'
  // 1e9 at 2e10 B/s would take 0.05 s).
  EXPECT_DOUBLE_EQ(fp32.program(), 0.5);
  ASSERT_EQ(report->roofs_size(), 1);
  const v1::FleetRoof& roof = report->roofs(0);
  EXPECT_EQ(roof.device_kind(), "cpu-test");
  EXPECT_EQ(roof.flops_per_sec(), 2e11);
  EXPECT_EQ(roof.bytes_per_sec(), 2e10);
  EXPECT_EQ(roof.source(),
            "calibrated on worker w1 (platform " + std::to_string(platform_id_) + ")");
  // The worker calibrated no bfloat16 roof: blank, and said why.
  EXPECT_FALSE(bf16.has_program());
  EXPECT_EQ(report->program_blank().at("no bfloat16 roof for device kind cpu-test"), 1);
  EXPECT_DOUBLE_EQ(report->fleet().program(), 0.5);
}

TEST_F(FleetReportTest, ARoofInTheRequestComesFirst) {
  v1::FleetReportRequest request;
  request.set_jobs(true);
  v1::FleetRoof& given = *request.add_roofs();
  given.set_device_kind("cpu-test");  // no dtype: every precision
  given.set_flops_per_sec(1e11);
  absl::StatusOr<v1::FleetReportResponse> report = BuildFleetReport(*db_, request);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const v1::JobGoodput& job : report->jobs())
    EXPECT_DOUBLE_EQ(job.program(), 1.0) << job.job();
  ASSERT_EQ(report->roofs_size(), 2);  // one per precision used
  EXPECT_EQ(report->roofs(0).source(), "given with the report request");
}

}  // namespace
}  // namespace paradnn::server
