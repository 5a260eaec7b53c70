#include "worker/platform_probe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <string>

#include "tests/unit/worker/fake_runner_path.h"

namespace paradnn::worker {
namespace {

using std::chrono::milliseconds;

TEST(PlatformProbeTest, ReadsTheRunnersFramedPlatform) {
  absl::StatusOr<v1::Platform> platform =
      QueryRunnerPlatform(PARADNN_FAKE_RUNNER, milliseconds(10'000));
  ASSERT_TRUE(platform.ok()) << platform.status();
  EXPECT_EQ(platform->fingerprint(), "fake-fingerprint");
  EXPECT_EQ(platform->blas_backend(), "FakeBLAS 1.0");

  v1::Platform probed = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  EXPECT_EQ(probed.fingerprint(), "fake-fingerprint");
}

TEST(PlatformProbeTest, MissingRunnerIsNotFound) {
  absl::StatusOr<v1::Platform> platform =
      QueryRunnerPlatform("/nonexistent/paradnn-runner", milliseconds(1000));
  EXPECT_EQ(platform.status().code(), absl::StatusCode::kNotFound) << platform.status();
}

TEST(PlatformProbeTest, FailingRunnerFallsBackToProcWithoutPretending) {
  absl::StatusOr<v1::Platform> failed = QueryRunnerPlatform("/bin/false", milliseconds(5000));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("exited with status 1"), std::string::npos)
      << failed.status();

  v1::Platform platform = ProbePlatform("/bin/false", "cpu", milliseconds(5000));
  EXPECT_EQ(platform.blas_backend().rfind("unknown (runner --platform failed: ", 0), 0u)
      << platform.blas_backend();
  EXPECT_NE(platform.blas_backend().find("exited with status 1"), std::string::npos);
  EXPECT_EQ(platform.fingerprint().rfind("fallback-", 0), 0u) << platform.fingerprint();
  EXPECT_EQ(platform.device_kind(), "cpu");
  EXPECT_FALSE(platform.device_name().empty());
  EXPECT_GT(platform.logical_cpus(), 0);
  EXPECT_GT(platform.cores(), 0);
  EXPECT_LE(platform.cores(), platform.logical_cpus());
  EXPECT_GE(platform.sockets(), 1);
  EXPECT_GT(platform.memory_bytes(), 0);
  EXPECT_FALSE(platform.hostname().empty());
  EXPECT_FALSE(platform.os().empty());
  EXPECT_EQ(platform.libtorch_version(), "unknown");
}

TEST(PlatformProbeTest, FallbackFingerprintIsStableAndIgnoresHostname) {
  v1::Platform a = FallbackPlatform("cpu", "why");
  v1::Platform b = FallbackPlatform("cpu", "why");
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_NE(FallbackPlatform("cuda", "why").fingerprint(), a.fingerprint());
  EXPECT_EQ(FallbackPlatform("cuda", "why").device_name(),
            "unknown (runner --platform failed: why)");
}

TEST(PlatformProbeTest, HangingRunnerTimesOut) {
  ASSERT_EQ(::setenv("FAKE_RUNNER_PLATFORM", "hang", 1), 0);
  absl::StatusOr<v1::Platform> platform =
      QueryRunnerPlatform(PARADNN_FAKE_RUNNER, milliseconds(300));
  ::unsetenv("FAKE_RUNNER_PLATFORM");
  EXPECT_EQ(platform.status().code(), absl::StatusCode::kDeadlineExceeded) << platform.status();
}

TEST(PlatformProbeTest, CalibratesOnceThenUsesTheCacheOfTheSameFingerprint) {
  char state_template[] = "/tmp/paradnn-calibration-XXXXXX";
  ASSERT_NE(::mkdtemp(state_template), nullptr);
  const std::string state_dir = std::string(state_template) + "/nested";

  v1::Platform platform = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  EXPECT_EQ(AddCalibration(&platform, PARADNN_FAKE_RUNNER, CalibrateMode::kAuto, state_dir,
                           milliseconds(10'000)),
            "runner");
  ASSERT_EQ(platform.matmul_roofs_size(), 1);
  EXPECT_EQ(platform.matmul_roofs(0).flops_per_sec(), 1e11);
  EXPECT_EQ(platform.bandwidth_size(), 1);
  EXPECT_EQ(platform.calibrated_unix_ms(), 1'700'000'000'000);
  // The sentinel's reference figures come along: jobs are compared with them.
  EXPECT_EQ(platform.probe_flops_per_sec(), 5e10);
  EXPECT_EQ(platform.probe_threads(), 4);
  EXPECT_EQ(platform.latency_probe_seconds(), 1e-4);

  // A runner that cannot run proves the second start reads the cache.
  v1::Platform again = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  EXPECT_EQ(
      AddCalibration(&again, "/bin/false", CalibrateMode::kAuto, state_dir, milliseconds(10'000)),
      "cache");
  EXPECT_EQ(again.SerializeAsString(), platform.SerializeAsString());

  // always: the runner again (here failing, so no roofs); never: nothing.
  v1::Platform always = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  EXPECT_EQ(AddCalibration(&always, "/bin/false", CalibrateMode::kAlways, state_dir,
                           milliseconds(10'000)),
            "none");
  EXPECT_EQ(always.matmul_roofs_size(), 0);
  v1::Platform never = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  EXPECT_EQ(AddCalibration(&never, PARADNN_FAKE_RUNNER, CalibrateMode::kNever, state_dir,
                           milliseconds(10'000)),
            "none");
  EXPECT_EQ(never.matmul_roofs_size(), 0);

  // Another fingerprint has no cache.
  EXPECT_EQ(ReadCachedCalibration(state_dir, "other-fingerprint").status().code(),
            absl::StatusCode::kNotFound);
  std::filesystem::remove_all(state_template);
}

TEST(PlatformProbeTest, ACalibrationThatRanOnABusyHostIsRedone) {
  v1::Platform cached;
  cached.set_probe_flops_per_sec(4e10);
  EXPECT_FALSE(BusyCalibration(cached, 0).has_value());       // not read at start
  EXPECT_FALSE(BusyCalibration(cached, 4.8e10).has_value());  // within the probe's noise
  EXPECT_FALSE(BusyCalibration(cached, 2e10).has_value());    // busy now: keep the cache
  const std::optional<std::string> busy = BusyCalibration(cached, 1.7e11);
  ASSERT_TRUE(busy.has_value());
  EXPECT_NE(busy->find("40.0 GFLOP/s, 170.0 GFLOP/s now (425 %)"), std::string::npos) << *busy;

  char state_template[] = "/tmp/paradnn-calibration-XXXXXX";
  ASSERT_NE(::mkdtemp(state_template), nullptr);
  const std::string state_dir = state_template;
  v1::Platform platform = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  v1::Platform slow = platform;
  slow.set_probe_flops_per_sec(1e10);  // a fifth of what the fake runner calibrates
  slow.set_probe_threads(4);
  slow.set_latency_probe_seconds(1e-4);
  slow.add_matmul_roofs()->set_flops_per_sec(2e10);
  ASSERT_TRUE(WriteCachedCalibration(state_dir, slow).ok());
  // Found 5x faster at start: calibrated again by the runner, and cached.
  platform.set_start_probe_flops_per_sec(5e10);
  EXPECT_EQ(AddCalibration(&platform, PARADNN_FAKE_RUNNER, CalibrateMode::kAuto, state_dir,
                           milliseconds(10'000)),
            "runner");
  EXPECT_EQ(platform.probe_flops_per_sec(), 5e10);
  EXPECT_EQ(ReadCachedCalibration(state_dir, platform.fingerprint())->probe_flops_per_sec(), 5e10);
  // As fast as the calibration: the cache stands.
  v1::Platform again = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  again.set_start_probe_flops_per_sec(5.2e10);
  EXPECT_EQ(
      AddCalibration(&again, "/bin/false", CalibrateMode::kAuto, state_dir, milliseconds(10'000)),
      "cache");
  std::filesystem::remove_all(state_template);
}

TEST(PlatformProbeTest, WaitsForANeighboursCalibrationAndUsesIt) {
  char state_template[] = "/tmp/paradnn-calibration-XXXXXX";
  ASSERT_NE(::mkdtemp(state_template), nullptr);
  const std::string state_dir = state_template;
  // This test plays the neighbour: it holds the host lock while "calibrating".
  const int lock_fd =
      ::open((state_dir + "/calibration.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(lock_fd, 0);
  ASSERT_EQ(::flock(lock_fd, LOCK_EX), 0);

  v1::Platform platform = ProbePlatform(PARADNN_FAKE_RUNNER, "cpu", milliseconds(10'000));
  // "/bin/false" cannot calibrate: only the neighbour's cache can fill roofs.
  std::future<std::string> source = std::async(std::launch::async, [&] {
    return AddCalibration(&platform, "/bin/false", CalibrateMode::kAuto, state_dir,
                          milliseconds(10'000));
  });
  EXPECT_EQ(source.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "calibrated while another worker held the host lock";

  absl::StatusOr<v1::Platform> neighbour =
      QueryRunnerCalibration(PARADNN_FAKE_RUNNER, milliseconds(10'000));
  ASSERT_TRUE(neighbour.ok()) << neighbour.status();
  ASSERT_TRUE(WriteCachedCalibration(state_dir, *neighbour).ok());
  ::close(lock_fd);

  EXPECT_EQ(source.get(), "cache");
  ASSERT_EQ(platform.matmul_roofs_size(), 1);
  EXPECT_EQ(platform.matmul_roofs(0).flops_per_sec(), 1e11);
  std::filesystem::remove_all(state_template);
}

TEST(PlatformProbeTest, DatasheetPeaksSitBesideTheCalibratedRoofs) {
  absl::StatusOr<std::map<std::string, double>> peaks =
      ParseDatasheetPeaks({"float32=1.5e12", "bfloat16=3e12"});
  ASSERT_TRUE(peaks.ok()) << peaks.status();
  v1::Platform platform;
  v1::MatmulRoof* fp32 = platform.add_matmul_roofs();
  fp32->set_dtype("float32");
  fp32->set_flops_per_sec(2.4e11);
  AddDatasheetPeaks(*peaks, &platform);
  ASSERT_EQ(platform.matmul_roofs_size(), 2);
  EXPECT_EQ(platform.matmul_roofs(0).flops_per_sec(), 2.4e11);  // calibration kept
  EXPECT_EQ(platform.matmul_roofs(0).datasheet_flops_per_sec(), 1.5e12);
  EXPECT_EQ(platform.matmul_roofs(1).dtype(), "bfloat16");
  EXPECT_EQ(platform.matmul_roofs(1).flops_per_sec(), 0);  // not calibrated
  EXPECT_EQ(platform.matmul_roofs(1).datasheet_flops_per_sec(), 3e12);

  for (const char* bad : {"int8=1e12", "float32", "float32=-1", "float32=fast"}) {
    absl::StatusOr<std::map<std::string, double>> parsed = ParseDatasheetPeaks({bad});
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("--datasheet-peak"), std::string::npos);
    EXPECT_NE(parsed.status().message().find("float32, bfloat16, float16, tf32"),
              std::string::npos);
  }
}

TEST(PlatformProbeTest, ParsesCalibrateModes) {
  EXPECT_EQ(*ParseCalibrateMode("auto"), CalibrateMode::kAuto);
  EXPECT_EQ(*ParseCalibrateMode("always"), CalibrateMode::kAlways);
  EXPECT_EQ(*ParseCalibrateMode("never"), CalibrateMode::kNever);
  EXPECT_EQ(ParseCalibrateMode("sometimes").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace paradnn::worker
