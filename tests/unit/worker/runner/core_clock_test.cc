#include "worker/runner/core_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/silicon_peak.h"
#include "worker/runner/platform.h"

namespace paradnn::runner {
namespace {

using ::testing::HasSubstr;

// What any x86-64 core of this century can run at; and not far below the
// clock the OS calls nominal (a loaded core runs at base or above it).
void ExpectPhysical(double hz, double nominal_hz) {
  EXPECT_GE(hz, 1.0e9);
  EXPECT_LE(hz, 6.0e9);
  if (nominal_hz > 0) {
    EXPECT_GE(hz, 0.8 * nominal_hz) << "nominal " << nominal_hz;
  }
}

#if defined(__x86_64__)

TEST(CoreClockTest, EveryCpuOfTheAffinityRunsAtAClockTheCpuAllows) {
  const std::vector<int> allowed = AffinityCpus();
  ASSERT_FALSE(allowed.empty());
  const double nominal = HostCpuPeakFacts(0).base_clock_hz;
  const CoreClock clock = MeasureCoreClock();
  ASSERT_GT(clock.hz, 0) << clock.method;
  ExpectPhysical(clock.hz, nominal);
  ASSERT_EQ(clock.cpus.size(), allowed.size());
  std::set<int> pinned;
  for (const CpuClock& cpu : clock.cpus) {
    SCOPED_TRACE(cpu.cpu);
    ExpectPhysical(cpu.hz, nominal);
    EXPECT_GT(cpu.first_chunk_hz, 0);
    pinned.insert(cpu.cpu);
  }
  EXPECT_EQ(pinned, std::set<int>(allowed.begin(), allowed.end()));
  EXPECT_LE(clock.min_hz, clock.hz);
  EXPECT_LE(clock.hz, clock.max_hz);
  EXPECT_THAT(clock.method, HasSubstr("dependent 64-bit add chain"));
  EXPECT_THAT(clock.method, HasSubstr(absl::StrCat(allowed.size(), " logical CPU")));
  EXPECT_THAT(clock.method, HasSubstr("(pinned)"));
}

TEST(CoreClockTest, OneCpuAlone) {
  const std::vector<int> allowed = AffinityCpus();
  ASSERT_FALSE(allowed.empty());
  CoreClockOptions options;
  options.cpus = {allowed.back()};
  options.repetitions = 3;
  const CoreClock clock = MeasureCoreClock(options);
  ASSERT_EQ(clock.cpus.size(), 1u) << clock.method;
  EXPECT_EQ(clock.cpus[0].cpu, allowed.back());
  ExpectPhysical(clock.hz, HostCpuPeakFacts(0).base_clock_hz);
  EXPECT_EQ(clock.hz, clock.cpus[0].hz);
  EXPECT_THAT(clock.method, HasSubstr("1 logical CPU at once (pinned), best of 3 x 0.5 ms"));
}

#else

TEST(CoreClockTest, NotMeasuredOffX86) {
  const CoreClock clock = MeasureCoreClock();
  EXPECT_EQ(clock.hz, 0);
  EXPECT_THAT(clock.method, HasSubstr("not measured: no latency chain"));
}

#endif

TEST(CoreClockTest, ACpuOutsideTheAffinityIsNotMeasured) {
  const std::vector<int> allowed = AffinityCpus();
  ASSERT_FALSE(allowed.empty());
  CoreClockOptions options;
  options.cpus = {allowed.back() + 1};
  const CoreClock clock = MeasureCoreClock(options);
  EXPECT_EQ(clock.hz, 0);
  EXPECT_TRUE(clock.cpus.empty());
  EXPECT_THAT(clock.method, HasSubstr("not measured: "));
}

TEST(CoreClockTest, NoRepetitionsIsNotMeasured) {
  CoreClockOptions options;
  options.repetitions = 0;
  const CoreClock clock = MeasureCoreClock(options);
  EXPECT_EQ(clock.hz, 0);
  EXPECT_THAT(clock.method, HasSubstr("not measured: "));
}

TEST(CoreClockTest, SummaryIsTheMedianOverCpus) {
  CoreClock clock;
  SummarizeCpuClocks(&clock);
  EXPECT_EQ(clock.hz, 0);
  clock.cpus = {{0, 3.0e9}, {1, 3.4e9}, {2, 0}, {3, 3.2e9}};  // CPU 2 gave no figure
  SummarizeCpuClocks(&clock);
  EXPECT_DOUBLE_EQ(clock.hz, 3.2e9);
  EXPECT_DOUBLE_EQ(clock.min_hz, 3.0e9);
  EXPECT_DOUBLE_EQ(clock.max_hz, 3.4e9);
  clock.cpus.push_back({4, 3.3e9});
  SummarizeCpuClocks(&clock);
  EXPECT_DOUBLE_EQ(clock.hz, 3.25e9);
}

TEST(RecordMeasuredClockTest, RaisesTheCpuPeaksAndKeepsTheFingerprint) {
  v1::Platform platform;
  FillHostPlatform(&platform);
  platform.set_fingerprint(PlatformFingerprint(platform));
  const v1::Platform before = platform;
  CoreClock clock;
  clock.method = "not measured: test";
  RecordMeasuredClock(clock, &platform);
  EXPECT_EQ(platform.measured_clock_hz(), 0);
  EXPECT_EQ(platform.measured_clock_method(), "");
  EXPECT_EQ(platform.SerializeAsString(), before.SerializeAsString());

  clock.hz = 7.5e9;  // beyond any reported clock, so the peaks must rise
  clock.method = "a test's clock";
  RecordMeasuredClock(clock, &platform);
  EXPECT_EQ(platform.measured_clock_hz(), 7.5e9);
  EXPECT_EQ(platform.measured_clock_method(), "a test's clock");
  EXPECT_EQ(platform.fingerprint(), before.fingerprint());
  EXPECT_EQ(PlatformFingerprint(platform), before.fingerprint());
  // A host that reports no clock had no peaks before; now it has.
  ASSERT_EQ(platform.silicon_peaks_size(), 3);
  for (const v1::SiliconPeak& peak : platform.silicon_peaks()) {
    SCOPED_TRACE(peak.dtype());
    EXPECT_THAT(peak.basis(), HasSubstr("7.50 GHz (measured under load"));
    for (const v1::SiliconPeak& old : before.silicon_peaks()) {
      if (old.dtype() == peak.dtype()) {
        EXPECT_GT(peak.flops_per_sec(), old.flops_per_sec());
      }
    }
  }
}

TEST(RecordMeasuredClockTest, LeavesAGpusPeaks) {
  v1::Platform platform;
  platform.set_device_kind("cuda");
  platform.add_silicon_peaks()->set_flops_per_sec(66.9e12);
  CoreClock clock;
  clock.hz = 3e9;
  clock.method = "m";
  RecordMeasuredClock(clock, &platform);
  EXPECT_EQ(platform.measured_clock_hz(), 3e9);
  ASSERT_EQ(platform.silicon_peaks_size(), 1);
  EXPECT_EQ(platform.silicon_peaks(0).flops_per_sec(), 66.9e12);
}

}  // namespace
}  // namespace paradnn::runner
