#include "platform/silicon_peak.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace paradnn::platform {
namespace {

std::vector<std::string> Flags(std::initializer_list<const char*> flags) {
  return {flags.begin(), flags.end()};
}

double PeakOf(const std::vector<v1::SiliconPeak>& peaks, const char* dtype) {
  const v1::SiliconPeak* peak = FindSiliconPeak(peaks, dtype);
  return peak == nullptr ? -1 : peak->flops_per_sec();
}

// Known CPUs: flags, cores and clock to FLOP/s, as their datasheets give them.
struct KnownCpu {
  const char* name;
  CpuPeakFacts facts;
  double float32, bfloat16, float16;
};

const std::vector<KnownCpu>& KnownCpus() {
  static const auto* const kCpus = new std::vector<KnownCpu>{
      // The Xeon (Emerald Rapids, 2 vCPUs at 2.1 GHz): 269 GFLOP/s
      // float32, AMX bfloat16 8.6 TFLOP/s, AVX-512 FP16 538 GFLOP/s.
      {"Xeon family 6 model 207",
       {"GenuineIntel", 6, 207,
        Flags({"fma", "avx", "avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile",
               "amx_bf16", "amx_int8"}),
        2, 2.1e9, 0, 0},
       268.8e9,
       8601.6e9,
       537.6e9},
      // The paper's Table 3: "2 FMA x 32 single-precision x 16 cores x 2 GHz
      // = 2 SP TFLOPS" (32 = 16 lanes x 2 FLOP).
      {"Skylake-SP, 16 cores at 2 GHz",
       {"GenuineIntel", 6, 85, Flags({"fma", "avx", "avx2", "avx512f"}), 16, 2e9, 0, 0},
       2048e9,
       2048e9,
       2048e9},
      // Zen 4 runs AVX-512 in two 256-bit passes: 32 float32 FLOP/cycle.
      {"EPYC Zen 4, 2 cores at 2.596 GHz",
       {"AuthenticAMD", 25, 17, Flags({"fma", "avx", "avx2", "avx512f", "avx512_bf16", "f16c"}), 2,
        2.596e9, 0, 0},
       2 * 32 * 2.596e9,
       2 * 64 * 2.596e9,
       2 * 32 * 2.596e9},
      {"EPYC Zen 5, 4 cores at 3 GHz",
       {"AuthenticAMD", 26, 2, Flags({"fma", "avx", "avx2", "avx512f", "avx512_bf16"}), 4, 3e9, 0,
        0},
       4 * 64 * 3e9,
       4 * 128 * 3e9,
       4 * 64 * 3e9},
      {"EPYC Zen 3, 8 cores, max clock 3.5 GHz over base 2.45",
       {"AuthenticAMD", 25, 1, Flags({"fma", "avx", "avx2"}), 8, 2.45e9, 3.5e9, 0},
       8 * 32 * 3.5e9,
       8 * 32 * 3.5e9,
       8 * 32 * 3.5e9},
      // Sandy Bridge: AVX without FMA, one add and one multiply per cycle.
      {"Sandy Bridge, 4 cores at 3 GHz",
       {"GenuineIntel", 6, 42, Flags({"avx"}), 4, 3e9, 0, 0},
       4 * 16 * 3e9,
       4 * 16 * 3e9,
       4 * 16 * 3e9},
      // A Xeon Silver with one AVX-512 FMA unit, configured.
      {"Xeon Silver, 1 FMA unit",
       {"GenuineIntel", 6, 85, Flags({"fma", "avx2", "avx512f"}), 8, 2.2e9, 0, 1},
       8 * 32 * 2.2e9,
       8 * 32 * 2.2e9,
       8 * 32 * 2.2e9},
  };
  return *kCpus;
}

TEST(CpuSiliconPeaksTest, KnownCpus) {
  for (const KnownCpu& cpu : KnownCpus()) {
    SCOPED_TRACE(cpu.name);
    const std::vector<v1::SiliconPeak> peaks = CpuSiliconPeaks(cpu.facts);
    ASSERT_EQ(peaks.size(), 3u);
    EXPECT_NEAR(PeakOf(peaks, "float32"), cpu.float32, cpu.float32 * 1e-9);
    EXPECT_NEAR(PeakOf(peaks, "bfloat16"), cpu.bfloat16, cpu.bfloat16 * 1e-9);
    EXPECT_NEAR(PeakOf(peaks, "float16"), cpu.float16, cpu.float16 * 1e-9);
    for (const v1::SiliconPeak& peak : peaks) {
      EXPECT_EQ(peak.source(), "computed");
      EXPECT_NE(peak.basis().find(FlopRate(peak.flops_per_sec())), std::string::npos)
          << peak.basis();
    }
  }
}

TEST(CpuSiliconPeaksTest, BasisShowsTheArithmetic) {
  const std::vector<v1::SiliconPeak> peaks = CpuSiliconPeaks(KnownCpus()[0].facts);
  EXPECT_EQ(FindSiliconPeak(peaks, "float32")->basis(),
            "2 cores x 2 FMA units (assumed) x 16 float32 lanes x 2 FLOP (AVX-512 FMA) x "
            "2.10 GHz (base clock) = 269 GFLOP/s");
  EXPECT_EQ(FindSiliconPeak(peaks, "bfloat16")->basis(),
            "2 cores x 2048 FLOP/cycle (AMX bf16 tiles: 1024 multiply-adds per cycle per core) x "
            "2.10 GHz (base clock) = 8.60 TFLOP/s");
  const std::vector<v1::SiliconPeak> zen4 = CpuSiliconPeaks(KnownCpus()[2].facts);
  EXPECT_NE(FindSiliconPeak(zen4, "float32")->basis().find("AVX-512 in two 256-bit passes"),
            std::string::npos);
  EXPECT_NE(FindSiliconPeak(zen4, "float16")->basis().find("no native float16"), std::string::npos);
}

TEST(CpuSiliconPeaksTest, NoClockOrNoCoresGivesNoPeaks) {
  CpuPeakFacts facts = KnownCpus()[0].facts;
  facts.base_clock_hz = 0;
  EXPECT_TRUE(CpuSiliconPeaks(facts).empty());
  facts = KnownCpus()[0].facts;
  facts.cores = 0;
  EXPECT_TRUE(CpuSiliconPeaks(facts).empty());
}

// The 2-vCPU EPYC guest (Zen 3, no cpufreq): /proc/cpuinfo says 2445 MHz,
// its cores run at 3.04-3.24 GHz under load, and its float32 matmul roof
// (180 GFLOP/s) lies beyond the nominal peak (157 GFLOP/s) but within the
// measured one (207 GFLOP/s at 3.24 GHz).
CpuPeakFacts Zen3Guest(double measured_clock_hz) {
  CpuPeakFacts facts{"AuthenticAMD", 25, 1, Flags({"fma", "avx", "avx2", "f16c"}), 2,
                     2.445406e9,     0,  0};
  facts.base_clock_label = "cpu MHz of /proc/cpuinfo";
  facts.measured_clock_hz = measured_clock_hz;
  return facts;
}

TEST(CpuSiliconPeaksTest, TheMeasuredClockWhereThereIsOne) {
  const std::vector<v1::SiliconPeak> nominal = CpuSiliconPeaks(Zen3Guest(0));
  EXPECT_NEAR(PeakOf(nominal, "float32"), 2 * 32 * 2.445406e9, 1e3);
  EXPECT_EQ(FindSiliconPeak(nominal, "float32")->basis(),
            "2 cores x 2 FMA units (assumed) x 8 float32 lanes x 2 FLOP (AVX2 FMA) x 2.45 GHz "
            "(cpu MHz of /proc/cpuinfo) = 157 GFLOP/s");
  const std::vector<v1::SiliconPeak> measured = CpuSiliconPeaks(Zen3Guest(3.24e9));
  EXPECT_NEAR(PeakOf(measured, "float32"), 2 * 32 * 3.24e9, 1e3);
  EXPECT_NEAR(PeakOf(measured, "bfloat16"), 2 * 32 * 3.24e9, 1e3);  // via float32
  EXPECT_EQ(FindSiliconPeak(measured, "float32")->basis(),
            "2 cores x 2 FMA units (assumed) x 8 float32 lanes x 2 FLOP (AVX2 FMA) x 3.24 GHz "
            "(measured under load; 2.45 GHz reported, cpu MHz of /proc/cpuinfo) = 207 GFLOP/s");
  // The measured clock wins over a max clock too (a one-core boost), and
  // says so; with none reported it still gives peaks.
  CpuPeakFacts bare_metal = KnownCpus()[4].facts;  // Zen 3, max 3.5 GHz
  bare_metal.measured_clock_hz = 3.3e9;
  EXPECT_DOUBLE_EQ(PeakClockHz(bare_metal), 3.3e9);
  EXPECT_NE(FindSiliconPeak(CpuSiliconPeaks(bare_metal), "float32")
                ->basis()
                .find("3.30 GHz (measured under load; 3.50 GHz reported, max clock)"),
            std::string::npos);
  CpuPeakFacts unreported = Zen3Guest(3.24e9);
  unreported.base_clock_hz = 0;
  EXPECT_NE(FindSiliconPeak(CpuSiliconPeaks(unreported), "float32")
                ->basis()
                .find("3.24 GHz (measured under load; no clock reported)"),
            std::string::npos);
}

TEST(CpuSiliconPeaksTest, PeakClockPrefersMeasuredThenMaxThenBase) {
  CpuPeakFacts facts;
  EXPECT_EQ(PeakClockHz(facts), 0);
  facts.base_clock_hz = 2e9;
  EXPECT_EQ(PeakClockHz(facts), 2e9);
  facts.max_clock_hz = 3.5e9;
  EXPECT_EQ(PeakClockHz(facts), 3.5e9);
  facts.measured_clock_hz = 3.1e9;
  EXPECT_EQ(PeakClockHz(facts), 3.1e9);
}

TEST(CpuSiliconPeaksTest, ZenOneSplitsAvxIntoTwoPasses) {
  // Zen 1 (family 0x17 model 1): 2 FMA x 4 float32 lanes x 2 = 16 FLOP/cycle;
  // Zen 2 (model 0x31) is 32.
  CpuPeakFacts zen1{"AuthenticAMD", 0x17, 1, Flags({"fma", "avx", "avx2"}), 8, 2e9, 0, 0};
  EXPECT_EQ(FmaDatapathBits(zen1), 128);
  EXPECT_NEAR(PeakOf(CpuSiliconPeaks(zen1), "float32"), 8 * 16 * 2e9, 1e3);
  CpuPeakFacts zen2 = zen1;
  zen2.model = 0x31;
  EXPECT_NEAR(PeakOf(CpuSiliconPeaks(zen2), "float32"), 8 * 32 * 2e9, 1e3);
}

// The case: a roof 1.15x the nominal peak marks that peak wrong;
// the peak at the measured clock holds it.
TEST(SiliconPeakTest, TheMeasuredClockReconcilesAGuestsRoof) {
  for (const double measured : {0.0, 3.24e9}) {
    SCOPED_TRACE(measured);
    v1::Platform platform;
    for (const v1::SiliconPeak& p : CpuSiliconPeaks(Zen3Guest(measured))) {
      *platform.add_silicon_peaks() = p;
    }
    v1::MatmulRoof* roof = platform.add_matmul_roofs();
    roof->set_dtype("float32");
    roof->set_flops_per_sec(180e9);
    ReconcilePeaksWithRoofs(&platform);
    EXPECT_EQ(platform.silicon_peaks(0).inconsistency().empty(), measured > 0)
        << platform.silicon_peaks(0).inconsistency();
    EXPECT_EQ(roof->theoretical_flops_per_sec(), platform.silicon_peaks(0).flops_per_sec());
  }
}

TEST(SiliconPeakTest, ClockTextShowsReportedBesideMeasured) {
  v1::Platform platform;
  EXPECT_EQ(PlatformClockText(platform), "");
  platform.set_base_clock_hz(2.445406e9);
  EXPECT_EQ(PlatformClockText(platform), "2.45 GHz nominal");
  platform.set_measured_clock_hz(3.24e9);
  EXPECT_EQ(PlatformClockText(platform), "2.45 GHz nominal, 3.24 GHz measured");
  platform.set_max_clock_hz(3.5e9);
  EXPECT_EQ(PlatformClockText(platform), "2.45 GHz nominal, 3.50 GHz max, 3.24 GHz measured");
  v1::Platform gpu;
  gpu.set_max_clock_hz(1.98e9);
  EXPECT_EQ(PlatformClockText(gpu), "1.98 GHz max");
}

TEST(CudaSiliconPeaksTest, KnownGpus) {
  // H100/H200 SXM: 132 SMs, 1.98 GHz max SM clock.
  const std::vector<v1::SiliconPeak> hopper = CudaSiliconPeaks({9, 0, 132, 1.98e9, "H200"});
  EXPECT_NEAR(PeakOf(hopper, "float32"), 66.9e12, 0.1e12);
  EXPECT_NEAR(PeakOf(hopper, "tf32"), 535.2e12, 0.1e12);
  EXPECT_NEAR(PeakOf(hopper, "bfloat16"), 1070.5e12, 0.1e12);
  // A100 SXM: 108 SMs at 1.41 GHz, 19.5 / 156 / 312 TFLOP/s.
  const std::vector<v1::SiliconPeak> ampere = CudaSiliconPeaks({8, 0, 108, 1.41e9, "A100"});
  EXPECT_NEAR(PeakOf(ampere, "float32"), 19.5e12, 0.1e12);
  EXPECT_NEAR(PeakOf(ampere, "tf32"), 156e12, 0.5e12);
  EXPECT_NEAR(PeakOf(ampere, "float16"), 312e12, 0.5e12);
  // V100: no bfloat16, no tf32.
  const std::vector<v1::SiliconPeak> volta = CudaSiliconPeaks({7, 0, 80, 1.53e9, "V100"});
  EXPECT_EQ(PeakOf(volta, "bfloat16"), -1);
  EXPECT_NEAR(PeakOf(volta, "float16"), 125.3e12, 0.1e12);
  EXPECT_TRUE(CudaSiliconPeaks({12, 0, 100, 2e9, "future"}).empty());
  EXPECT_TRUE(CudaSiliconPeaks({9, 0, 0, 2e9, "no SMs"}).empty());
}

TEST(SiliconPeakTest, RoofBeyondToleranceMarksTheBasisWrong) {
  v1::SiliconPeak peak = CpuSiliconPeaks(KnownCpus()[2].facts)[0];  // Zen 4 float32, 166 G
  EXPECT_TRUE(CheckPeakAgainstRoof(peak.flops_per_sec() * 1.04, "matmul float32", &peak));
  EXPECT_TRUE(peak.inconsistency().empty());
  EXPECT_FALSE(CheckPeakAgainstRoof(263e9, "matmul float32", &peak));
  EXPECT_NE(peak.inconsistency().find("158 %"), std::string::npos) << peak.inconsistency();
  EXPECT_NE(peak.inconsistency().find("--datasheet-peak float32="), std::string::npos);
  EXPECT_TRUE(CheckPeakAgainstRoof(100e9, "matmul float32", &peak));
  EXPECT_TRUE(peak.inconsistency().empty());
}

TEST(SiliconPeakTest, DatasheetFigureReplacesTheComputedPeak) {
  google::protobuf::RepeatedPtrField<v1::SiliconPeak> peaks;
  for (const v1::SiliconPeak& p : CpuSiliconPeaks(KnownCpus()[2].facts)) *peaks.Add() = p;
  SetDatasheetPeak("float32", 333e9, &peaks);
  SetDatasheetPeak("tf32", 1e12, &peaks);
  ASSERT_EQ(peaks.size(), 4);
  EXPECT_EQ(peaks[0].flops_per_sec(), 333e9);
  EXPECT_EQ(peaks[0].source(), "datasheet");
  EXPECT_NE(peaks[0].basis().find("--datasheet-peak float32="), std::string::npos);
  EXPECT_NE(peaks[0].basis().find("computed: 2 cores"), std::string::npos) << peaks[0].basis();
  EXPECT_EQ(peaks[3].dtype(), "tf32");
}

TEST(SiliconPeakTest, FlopRateKeepsThreeDigits) {
  EXPECT_EQ(FlopRate(268.8e9), "269 GFLOP/s");
  EXPECT_EQ(FlopRate(8.6016e12), "8.60 TFLOP/s");
  EXPECT_EQ(FlopRate(66.9e12), "66.9 TFLOP/s");
  EXPECT_EQ(FlopRate(1.2e15), "1.20 PFLOP/s");
}

}  // namespace
}  // namespace paradnn::platform
