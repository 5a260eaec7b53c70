#include "worker/runner/platform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace paradnn::runner {
namespace {

TEST(PlatformTest, FingerprintIgnoresHostnameAndSeesEverythingElse) {
  v1::Platform p;
  p.set_device_kind("cpu");
  p.set_device_name("Example CPU");
  p.set_hostname("a");
  p.set_cores(4);
  p.set_blas_backend("OpenBLAS 0.3.21");
  const std::string fp = PlatformFingerprint(p);
  EXPECT_EQ(fp.size(), 16u);
  EXPECT_EQ(PlatformFingerprint(p), fp);
  p.set_hostname("b");
  p.set_fingerprint("stale");
  EXPECT_EQ(PlatformFingerprint(p), fp);
  p.set_blas_backend("reference BLAS");
  EXPECT_NE(PlatformFingerprint(p), fp);
  p.set_blas_backend("OpenBLAS 0.3.21");
  p.set_default_intra_op_threads(2);
  EXPECT_NE(PlatformFingerprint(p), fp);
}

TEST(PlatformTest, FingerprintSeesTheNewStackFields) {
  v1::Platform p;
  p.set_device_name("Example CPU");
  const std::string fp = PlatformFingerprint(p);
  for (auto set : std::vector<void (*)(v1::Platform*)>{
           [](v1::Platform* q) { q->set_cache_sizes("L1d 48 KiB"); },
           [](v1::Platform* q) { q->set_frequency_governor("powersave"); },
           [](v1::Platform* q) { q->set_boost("on"); },
           [](v1::Platform* q) { q->set_onednn_version("2.6.3"); },
           [](v1::Platform* q) { q->set_isa_paths("ATen AVX2; AVX-512 BF16: no; AMX: no"); },
           [](v1::Platform* q) { q->set_blas_core("SkylakeX"); },
           [](v1::Platform* q) { q->set_blas_core_choice("auto"); },
           [](v1::Platform* q) { q->set_allocator("glibc malloc (as installed)"); },
           [](v1::Platform* q) { q->set_flush_denormal("on"); }}) {
    v1::Platform changed = p;
    set(&changed);
    EXPECT_NE(PlatformFingerprint(changed), fp) << changed.ShortDebugString();
  }
  // Clocks (cpu MHz moves from one read to the next) and the peaks derived
  // from them are no part of the stack.
  v1::Platform clocked = p;
  clocked.set_base_clock_hz(2.6e9);
  clocked.set_max_clock_hz(3.7e9);
  clocked.add_silicon_peaks()->set_flops_per_sec(1e11);
  clocked.set_start_probe_flops_per_sec(1.7e11);
  EXPECT_EQ(PlatformFingerprint(clocked), fp);
}

// Every Platform field is hashed, even at 0: a field added to the proto
// without a thought changes every host's fingerprint and splits its
// history. This fixed platform's fingerprint must never move; a field that
// is a fact of the moment goes on PlatformFingerprint's list instead.
TEST(PlatformTest, FingerprintOfAFixedPlatformNeverMoves) {
  v1::Platform p;
  p.set_device_kind("cpu");
  p.set_device_name("Example CPU");
  p.set_cores(4);
  p.set_blas_backend("OpenBLAS 0.3.21");
  EXPECT_EQ(PlatformFingerprint(p), "a41c60c4f0575fba");
}

TEST(PlatformTest, FormatsCacheSizes) {
  EXPECT_EQ(FormatCacheSizes({{3, "Unified", "32768K"},
                              {1, "Instruction", "32K"},
                              {2, "Unified", "1024K"},
                              {1, "Data", "48K"}}),
            "L1d 48 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB");
  EXPECT_EQ(FormatCacheSizes({{2, "Unified", "1280K"}, {3, "Unified", "2G"}}),
            "L2 1280 KiB, L3 2 GiB");
  EXPECT_EQ(FormatCacheSizes({{0, "Data", "48K"}, {1, "Data", ""}, {2, "Unified", "x"}}), "");
  EXPECT_TRUE(ReadCpuCaches("/nonexistent").empty());
}

TEST(PlatformTest, OneDnnAndAtenIsa) {
  EXPECT_EQ(OneDnnIsaName(0x7), "AVX2");
  EXPECT_EQ(OneDnnIsaName(0xe7), "AVX512_CORE_BF16");
  EXPECT_EQ(OneDnnIsaName(0x3e7), "AVX512_CORE_AMX");
  EXPECT_EQ(OneDnnIsaName(0x12345), "0x12345");
  EXPECT_EQ(ParseOneDnnVersion("Intel(R) MKL-DNN v2.6.3 (Git Hash N/A)"), "2.6.3");
  EXPECT_EQ(ParseOneDnnVersion("MKLDNN not found"), "");
  EXPECT_EQ(ParseAtenCpuCapability("PyTorch built with:\n  - CPU capability usage: AVX512\n"),
            "AVX512");
  EXPECT_EQ(ParseAtenCpuCapability("PyTorch built with:\n"), "");
  EXPECT_EQ(DescribeIsaPaths("AVX512", "AVX512_CORE_AMX",
                             {"avx512f", "avx512_bf16", "amx_tile", "amx_bf16"}),
            "ATen AVX512; oneDNN AVX512_CORE_AMX; AVX-512 BF16: yes; AMX: yes");
  EXPECT_EQ(DescribeIsaPaths("AVX2", "", {"avx2", "fma"}), "ATen AVX2; AVX-512 BF16: no; AMX: no");
  EXPECT_EQ(DescribeIsaPaths("", "", {"amx_tile"}), "AVX-512 BF16: no; AMX: no");
}

TEST(PlatformTest, SummarizesParallelBackend) {
  const char* info =
      "ATen/Parallel:\n\tat::get_num_threads() : 2\n\tat::get_num_interop_threads() : 1\n"
      "OpenMP 201511 (a.k.a. OpenMP 4.5)\n\tomp_get_max_threads() : 2\nMKL not found\n"
      "Intel(R) MKL-DNN v2.6.3 (Git Hash N/A)\nstd::thread::hardware_concurrency() : 2\n"
      "Environment variables:\n\tOMP_NUM_THREADS : [not set]\n\tMKL_NUM_THREADS : [not set]\n"
      "ATen parallel backend: OpenMP\n";
  const char* config = "PyTorch built with:\n  - GCC 12.2\n  - CPU capability usage: AVX2\n";
  EXPECT_EQ(SummarizeParallelBackend(info, config, {{"GOMP_SPINCOUNT", "3000"}}),
            "OpenMP [OpenMP 201511 (a.k.a. OpenMP 4.5)]; Intel(R) MKL-DNN v2.6.3; "
            "CPU capability AVX2; GOMP_SPINCOUNT=3000");
}

TEST(PlatformTest, BandwidthWorkingSetsReachPastTheLastLevelCache) {
  // The Xeon VM: L1d 48 KiB, L2 2 MiB, a 300 MiB L3 (2 cores).
  const std::vector<CpuCache> caches = {{1, "Data", "48K"},
                                        {1, "Instruction", "32K"},
                                        {2, "Unified", "2048K"},
                                        {3, "Unified", "307200K"}};
  const int64_t llc = int64_t{300} << 20;
  std::vector<int64_t> sizes = BandwidthWorkingSets(caches, 2, int64_t{24} << 30);
  ASSERT_FALSE(sizes.empty());
  EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
  EXPECT_GE(sizes.back(), 4 * llc);
  // A point inside every cache level's plateau.
  for (int64_t level : {int64_t{48} << 10, int64_t{2} << 20, llc}) {
    EXPECT_TRUE(std::find(sizes.begin(), sizes.end(), level / 2) != sizes.end()) << level;
  }
  EXPECT_TRUE(std::find(sizes.begin(), sizes.end(), 4 * llc) != sizes.end());
  // Bounded by memory: never more than a quarter of it.
  sizes = BandwidthWorkingSets(caches, 2, int64_t{2} << 30);
  EXPECT_LE(sizes.back(), int64_t{512} << 20);
  // The shared last level is not multiplied by the cores (2 x 300 MiB / 2
  // would be a working set of that cache, not of DRAM); private L2 is.
  sizes = BandwidthWorkingSets(caches, 2, int64_t{24} << 30);
  EXPECT_TRUE(std::find(sizes.begin(), sizes.end(), int64_t{2} << 20) != sizes.end());
  EXPECT_TRUE(std::find(sizes.begin(), sizes.end(), int64_t{300} << 20) == sizes.end());
  // Without cache facts: the default sweep up to 256 MiB.
  sizes = BandwidthWorkingSets({}, 2, 0);
  EXPECT_EQ(sizes.front(), 32 << 10);
  EXPECT_EQ(sizes.back(), 256 << 20);
}

TEST(PlatformTest, HostFacts) {
  v1::Platform p;
  FillHostPlatform(&p);
  EXPECT_EQ(p.device_kind(), "cpu");
  EXPECT_GT(p.logical_cpus(), 0);
  EXPECT_GT(p.cores(), 0);
  EXPECT_GT(p.memory_bytes(), 0);
  EXPECT_FALSE(p.os().empty());
  EXPECT_FALSE(p.blas_backend().empty());
  EXPECT_TRUE(absl::StartsWith(p.compiler(), "GCC") || absl::StrContains(p.compiler(), "lang"));
  // x86 hosts report a clock and so get a peak per dtype, float32 first.
  if (p.base_clock_hz() > 0 || p.max_clock_hz() > 0) {
    ASSERT_EQ(p.silicon_peaks_size(), 3);
    EXPECT_EQ(p.silicon_peaks(0).dtype(), "float32");
    EXPECT_GT(p.silicon_peaks(0).flops_per_sec(), 0);
    EXPECT_FALSE(p.silicon_peaks(0).basis().empty());
  }
#ifdef __linux__
  // sysfs describes cpu0's caches on every Linux host we run on; the governor
  // and boost state are left empty where cpufreq is not exposed (VMs).
  EXPECT_TRUE(absl::StrContains(p.cache_sizes(), "L1")) << p.cache_sizes();
  EXPECT_TRUE(p.boost().empty() || p.boost() == "on" || p.boost() == "off") << p.boost();
#endif
}

}  // namespace
}  // namespace paradnn::runner
