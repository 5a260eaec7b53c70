#include "server/fleet_goodput.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace paradnn::server {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

GoodputAttempt Attempt(const std::string& worker, int64_t start_s, int64_t end_s, double timed,
                       std::optional<double> hfu, bool ok = true) {
  GoodputAttempt a;
  a.worker_id = worker;
  a.device_kind = "cpu";
  a.started_unix_ms = kT0 + start_s * 1000;
  a.finished_unix_ms = end_s < 0 ? 0 : kT0 + end_s * 1000;
  a.has_result = end_s >= 0;
  a.ok = ok;
  a.timed_seconds = timed;
  a.hfu = hfu;
  return a;
}

// A controlled timeline driven by a fake clock: worker w1 (cpu) connects at
// 0 s, runs a job 10..20 s (8 s timed, HFU 0.5) and 30..40 s (6 s timed,
// HFU 0.25), disconnects at 50 s, reconnects at 60 s and idles to 100 s.
TEST(FleetGoodputTest, ControlledTimeline) {
  common::FakeClock clock(kT0);
  ConnectionLedger ledger(&clock);
  ledger.Connected("w1", "cpu");
  clock.Advance(50'000);
  ledger.Disconnected("w1");
  clock.Advance(10'000);
  ledger.Connected("w1", "cpu");
  clock.Advance(40'000);

  GoodputTimeline t;
  t.window = {kT0, clock.NowUnixMs()};
  t.workers = ledger.Workers(clock.NowUnixMs());
  ASSERT_EQ(t.workers.size(), 1u);
  ASSERT_EQ(t.workers[0].connected.size(), 2u);
  t.attempts = {Attempt("w1", 10, 20, 8, 0.5), Attempt("w1", 30, 40, 6, 0.25)};

  const v1::FleetGoodputResponse r = ComputeFleetGoodput(t);
  ASSERT_EQ(r.device_kinds_size(), 1);
  const v1::Goodput& g = r.device_kinds(0);
  EXPECT_EQ(g.device_kind(), "cpu");
  EXPECT_EQ(g.workers(), 1);
  EXPECT_DOUBLE_EQ(g.connected_seconds(), 90);  // 0..50 and 60..100
  EXPECT_DOUBLE_EQ(g.busy_seconds(), 20);
  EXPECT_DOUBLE_EQ(g.scheduling(), 20.0 / 90);
  EXPECT_EQ(g.jobs(), 2);
  EXPECT_DOUBLE_EQ(g.job_wall_seconds(), 20);
  EXPECT_DOUBLE_EQ(g.timed_seconds(), 14);
  EXPECT_DOUBLE_EQ(g.runtime(), 14.0 / 20);
  EXPECT_DOUBLE_EQ(g.program(), (0.5 * 8 + 0.25 * 6) / 14);
  EXPECT_DOUBLE_EQ(g.goodput(), g.scheduling() * g.runtime() * g.program());
  EXPECT_DOUBLE_EQ(r.total().goodput(), g.goodput());
}

// A window that cuts the timeline: spans are clipped, attempts that
// finished outside it do not count for runtime, an open attempt is busy
// to the window's end, and a lost attempt (no result) is all badput.
TEST(FleetGoodputTest, WindowClipsAndCountsOpenAndLostAttempts) {
  GoodputTimeline t;
  t.window = {kT0 + 20'000, kT0 + 60'000};
  GoodputWorker w;
  w.worker_id = "w1";
  w.device_kind = "cpu";
  w.connected = {{kT0, kT0 + 100'000}};
  t.workers = {w};
  GoodputAttempt lost = Attempt("w1", 25, 35, 0, std::nullopt);
  lost.has_result = false;
  t.attempts = {Attempt("w1", 5, 15, 9, 0.5),                   // before the window
                lost, Attempt("w1", 50, -1, 0, std::nullopt)};  // open
  const v1::Goodput g = ComputeFleetGoodput(t).device_kinds(0);
  EXPECT_DOUBLE_EQ(g.connected_seconds(), 40);
  EXPECT_DOUBLE_EQ(g.busy_seconds(), 10 + 10);  // 25..35 and 50..60
  EXPECT_EQ(g.jobs(), 1);
  EXPECT_DOUBLE_EQ(g.job_wall_seconds(), 10);
  EXPECT_DOUBLE_EQ(g.runtime(), 0);
  EXPECT_EQ(g.utilization_results(), 0);
  EXPECT_DOUBLE_EQ(g.program(), 0);
}

// Busy time the ledger missed (a job of a connection before the coordinator
// started) still counts as connected, so scheduling never exceeds 1; two
// device kinds get one row each and the total sums them.
TEST(FleetGoodputTest, BusyImpliesConnectedAndKindsSum) {
  GoodputTimeline t;
  t.window = {kT0, kT0 + 100'000};
  GoodputWorker gpu;
  gpu.worker_id = "g1";
  gpu.device_kind = "cuda";
  gpu.connected = {{kT0, kT0 + 100'000}};
  t.workers = {gpu};
  GoodputAttempt on_gpu = Attempt("g1", 0, 50, 40, 0.5);
  on_gpu.device_kind = "cuda";
  t.attempts = {Attempt("c1", 0, 10, 5, 0.1), on_gpu};
  const v1::FleetGoodputResponse r = ComputeFleetGoodput(t);
  ASSERT_EQ(r.device_kinds_size(), 2);
  EXPECT_EQ(r.device_kinds(0).device_kind(), "cpu");
  EXPECT_DOUBLE_EQ(r.device_kinds(0).scheduling(), 1.0);
  EXPECT_DOUBLE_EQ(r.device_kinds(1).scheduling(), 0.5);
  EXPECT_EQ(r.total().workers(), 2);
  EXPECT_DOUBLE_EQ(r.total().connected_seconds(), 110);
  EXPECT_DOUBLE_EQ(r.total().busy_seconds(), 60);
  EXPECT_DOUBLE_EQ(r.total().runtime(), 45.0 / 60);
}

// Two streams of one worker overlap (a reconnect before the old stream
// closed): connected until the last closes, counted once.
TEST(FleetGoodputTest, LedgerOverlappingStreams) {
  common::FakeClock clock(kT0);
  ConnectionLedger ledger(&clock);
  ledger.Connected("w1", "cpu");
  clock.Advance(10'000);
  ledger.Connected("w1", "cpu");
  clock.Advance(5'000);
  ledger.Disconnected("w1");
  clock.Advance(5'000);
  ledger.Disconnected("w1");
  ledger.Disconnected("w1");  // unmatched: ignored
  const std::vector<GoodputWorker> workers = ledger.Workers(clock.NowUnixMs() + 1000);
  ASSERT_EQ(workers.size(), 1u);
  ASSERT_EQ(workers[0].connected.size(), 1u);
  EXPECT_EQ(workers[0].connected[0].from_unix_ms, kT0);
  EXPECT_EQ(workers[0].connected[0].to_unix_ms, kT0 + 20'000);
}

TEST(FleetGoodputTest, EmptyTimelineIsZeroNotNan) {
  GoodputTimeline t;
  t.window = {kT0, kT0 + 1000};
  const v1::FleetGoodputResponse r = ComputeFleetGoodput(t);
  EXPECT_EQ(r.device_kinds_size(), 0);
  EXPECT_EQ(r.total().scheduling(), 0);
  EXPECT_EQ(r.total().goodput(), 0);
}

}  // namespace
}  // namespace paradnn::server
