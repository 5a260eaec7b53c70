#include "hostfacts/host_facts.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace paradnn::hostfacts {
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

TEST(HostFactsTest, ParsesCpuTopology) {
  const CpuTopology topo = ParseCpuInfo(CpuInfo());
  EXPECT_EQ(topo.model_name, "Example CPU @ 2.00GHz");
  EXPECT_EQ(topo.sockets, 2);
  EXPECT_EQ(topo.cores, 4);
  EXPECT_EQ(topo.logical_cpus, 8);
  EXPECT_EQ(RelevantCpuFlags(topo.flags), "fma avx2 avx512f avx512_bf16 amx_tile amx_bf16");
}

// A process's CPU share: its own cores and sockets (the thread profiles
// resolve on it).
TEST(HostFactsTest, CountsOnlyTheGivenCpus) {
  CpuTopology topo = ParseCpuInfo(CpuInfo(), {0, 1, 2, 3});  // socket 0, both threads
  EXPECT_EQ(topo.sockets, 1);
  EXPECT_EQ(topo.cores, 2);
  EXPECT_EQ(topo.logical_cpus, 4);
  topo = ParseCpuInfo(CpuInfo(), {0, 2, 4, 6});  // one thread of every core
  EXPECT_EQ(topo.sockets, 2);
  EXPECT_EQ(topo.cores, 4);
  EXPECT_EQ(topo.logical_cpus, 4);
  topo = ParseCpuInfo(CpuInfo(), {7});
  EXPECT_EQ(topo.sockets, 1);
  EXPECT_EQ(topo.cores, 1);
  EXPECT_EQ(topo.logical_cpus, 1);
  EXPECT_EQ(topo.model_name, "Example CPU @ 2.00GHz");
}

TEST(HostFactsTest, CpuInfoWithoutTopologyFallsBackToLogicalCpus) {
  const CpuTopology topo = ParseCpuInfo("processor : 0\nprocessor : 1\n");
  EXPECT_EQ(topo.sockets, 1);
  EXPECT_EQ(topo.cores, 2);
  EXPECT_EQ(topo.logical_cpus, 2);
  EXPECT_EQ(RelevantCpuFlags(topo.flags), "");
}

TEST(HostFactsTest, ParsesMemTotal) {
  EXPECT_EQ(ParseMemTotalBytes("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            int64_t{24576000} * 1024);
  EXPECT_EQ(ParseMemTotalBytes("MemFree: 1 kB\n"), -1);
}

TEST(HostFactsTest, BoostState) {
  EXPECT_EQ(BoostState("1\n", ""), "on");
  EXPECT_EQ(BoostState("0\n", ""), "off");
  EXPECT_EQ(BoostState("", "1\n"), "off");
  EXPECT_EQ(BoostState("", "0"), "on");
  EXPECT_EQ(BoostState("", ""), "");
}

TEST(HostFactsTest, ParsesCpuIdentityAndClocks) {
  std::string text = CpuInfo();
  text =
      "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\ncpu MHz\t\t: 2100.000\n" + text;
  const CpuTopology topo = ParseCpuInfo(text);
  EXPECT_EQ(topo.vendor, "GenuineIntel");
  EXPECT_EQ(topo.family, 6);
  EXPECT_EQ(topo.model, 207);
  EXPECT_DOUBLE_EQ(topo.mhz, 2100);
  // cpufreq's base_frequency first, then the model name's "@ 2.00GHz", then
  // cpu MHz; the max clock only from cpufreq.
  CpuClocks clocks = ParseCpuClocks("2300000\n", "3900000\n", topo);
  EXPECT_DOUBLE_EQ(clocks.base_hz, 2.3e9);
  EXPECT_DOUBLE_EQ(clocks.max_hz, 3.9e9);
  EXPECT_EQ(clocks.base_label, "base clock");
  clocks = ParseCpuClocks("", "", topo);
  EXPECT_DOUBLE_EQ(clocks.base_hz, 2e9);
  EXPECT_EQ(clocks.max_hz, 0);
  EXPECT_EQ(clocks.base_label, "model name clock");
  CpuTopology no_at = topo;
  no_at.model_name = "AMD EPYC";
  clocks = ParseCpuClocks("", "", no_at);
  EXPECT_DOUBLE_EQ(clocks.base_hz, 2.1e9);
  EXPECT_EQ(clocks.base_label, "cpu MHz of /proc/cpuinfo");
  no_at.mhz = 0;
  EXPECT_EQ(ParseCpuClocks("", "", no_at).base_hz, 0);
}

TEST(HostFactsTest, ParsesAarch64Features) {
  const CpuTopology topo = ParseCpuInfo(
      "processor\t: 0\nFeatures\t: fp asimd evtstrm sve\nCPU implementer\t: 0x41\n"
      "processor\t: 1\nFeatures\t: fp asimd evtstrm sve\n");
  EXPECT_EQ(topo.logical_cpus, 2);
  EXPECT_EQ(topo.cores, 2);
  EXPECT_EQ(topo.flags, (std::vector<std::string>{"fp", "asimd", "evtstrm", "sve"}));
  // None of them is an x86 flag Platform.cpu_flags lists.
  EXPECT_EQ(RelevantCpuFlags(topo.flags), "");
}

TEST(HostFactsTest, ReadsThisHost) {
  const CpuTopology topo = ReadCpuTopology();
  EXPECT_GE(topo.logical_cpus, 1);
  EXPECT_GE(topo.cores, 1);
  EXPECT_LE(topo.cores, topo.logical_cpus);
  EXPECT_GE(topo.sockets, 1);
  EXPECT_GT(HostMemoryBytes(), int64_t{0});
  const int64_t usable = UsableMemoryBytes();
  EXPECT_GT(usable, int64_t{0});
  EXPECT_LE(usable, HostMemoryBytes());
  EXPECT_FALSE(KernelRelease().empty());
  EXPECT_FALSE(HostName().empty());
  EXPECT_EQ(ReadTextFile("/nonexistent/host_facts_test"), "");
  const std::string boost = ReadBoostState();
  EXPECT_TRUE(boost.empty() || boost == "on" || boost == "off") << boost;
}

}  // namespace
}  // namespace paradnn::hostfacts
