#include "worker/runner/platform.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace paradnn::runner {
namespace {

// Two sockets, two cores each, two hyper-threads per core.
std::string CpuInfo() {
  std::string text;
  int cpu = 0;
  for (int socket = 0; socket < 2; ++socket) {
    for (int core = 0; core < 2; ++core) {
      for (int thread = 0; thread < 2; ++thread) {
        text += "processor\t: " + std::to_string(cpu++) + "\n";
        text += "model name\t: Example CPU @ 2.00GHz\n";
        text += "physical id\t: " + std::to_string(socket) + "\n";
        text += "core id\t\t: " + std::to_string(core) + "\n";
        text += "flags\t\t: fpu sse avx2 fma avx512f amx_tile avx512_bf16 amx_bf16\n\n";
      }
    }
  }
  return text;
}

TEST(PlatformTest, ParsesCpuTopology) {
  const CpuTopology topo = ParseCpuInfo(CpuInfo());
  EXPECT_EQ(topo.model_name, "Example CPU @ 2.00GHz");
  EXPECT_EQ(topo.sockets, 2);
  EXPECT_EQ(topo.cores, 4);
  EXPECT_EQ(topo.logical_cpus, 8);
  EXPECT_EQ(RelevantCpuFlags(topo.flags), "fma avx2 avx512f avx512_bf16 amx_tile amx_bf16");
}

TEST(PlatformTest, CpuInfoWithoutTopologyFallsBackToLogicalCpus) {
  const CpuTopology topo = ParseCpuInfo("processor : 0\nprocessor : 1\n");
  EXPECT_EQ(topo.sockets, 1);
  EXPECT_EQ(topo.cores, 2);
  EXPECT_EQ(topo.logical_cpus, 2);
  EXPECT_EQ(RelevantCpuFlags(topo.flags), "");
}

TEST(PlatformTest, ParsesMemTotal) {
  EXPECT_EQ(ParseMemTotalBytes("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            int64_t{24576000} * 1024);
  EXPECT_EQ(ParseMemTotalBytes("MemFree: 1 kB\n"), -1);
}

TEST(PlatformTest, Fnv1aKnownVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

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
}

}  // namespace
}  // namespace paradnn::runner
