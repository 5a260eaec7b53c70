#include "common/cpu_places.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace paradnn::common {
namespace {

namespace fs = std::filesystem;

// A sysfs layout (cpu/cpuN/topology, node/nodeK/cpulist) of a made-up host,
// so that hyper-threads and several sockets are tested on hosts that have
// neither.
class FakeSysfs {
 public:
  FakeSysfs() {
    std::string pattern = (fs::temp_directory_path() / "paradnn-sysfs-XXXXXX").string();
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  ~FakeSysfs() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  void Cpu(int cpu, int package, int core) {
    const fs::path dir = fs::path(root_) / "cpu" / absl::StrCat("cpu", cpu) / "topology";
    fs::create_directories(dir);
    std::ofstream(dir / "physical_package_id") << package << "\n";
    std::ofstream(dir / "core_id") << core << "\n";
  }
  void Node(int node, const std::string& cpulist) {
    const fs::path dir = fs::path(root_) / "node" / absl::StrCat("node", node);
    fs::create_directories(dir);
    std::ofstream(dir / "cpulist") << cpulist << "\n";
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// Two sockets of 4 cores with 2 hyper-threads each, numbered as Linux does
// on Intel servers: CPUs 0-7 the first thread of every core, 8-15 the
// siblings; socket 0 = cores of CPUs 0-3 and 8-11 = node 0.
void TwoSocketsWithSmt(FakeSysfs& sysfs) {
  for (int cpu = 0; cpu < 16; ++cpu) {
    const int first = cpu % 8;
    sysfs.Cpu(cpu, first / 4, first % 4);
  }
  sysfs.Node(0, "0-3,8-11");
  sysfs.Node(1, "4-7,12-15");
}

std::vector<int> Range(int from, int to) {
  std::vector<int> cpus;
  for (int cpu = from; cpu <= to; ++cpu) cpus.push_back(cpu);
  return cpus;
}

TEST(CpuPlacesTest, ReadsPackagesCoresAndNodes) {
  FakeSysfs sysfs;
  TwoSocketsWithSmt(sysfs);
  const std::vector<CpuPlace> places = ReadCpuPlaces({0, 5, 9, 13}, sysfs.root());
  ASSERT_EQ(places.size(), 4u);
  EXPECT_EQ(places[1].cpu, 5);
  EXPECT_EQ(places[1].package, 1);
  EXPECT_EQ(places[1].core, 1);
  EXPECT_EQ(places[1].node, 1);
  EXPECT_EQ(places[2].package, 0);  // CPU 9: core 1 of socket 0
  EXPECT_EQ(places[2].core, 1);
  EXPECT_EQ(places[2].node, 0);
  EXPECT_EQ(DescribeNodes(places), "node 0: CPUs 0,9, node 1: CPUs 5,13");
}

TEST(CpuPlacesTest, PhysicalCoresKeepTheFirstSiblingOfEachCore) {
  FakeSysfs sysfs;
  TwoSocketsWithSmt(sysfs);
  EXPECT_EQ(PhysicalCoreCpus(ReadCpuPlaces(Range(0, 15), sysfs.root())), Range(0, 7));
  // A worker's share that holds only siblings keeps one of each pair.
  EXPECT_EQ(PhysicalCoreCpus(ReadCpuPlaces({2, 3, 10, 11, 12}, sysfs.root())),
            (std::vector<int>{2, 3, 12}));
}

TEST(CpuPlacesTest, WithoutTopologyFilesEveryCpuIsACoreOfNodeZero) {
  FakeSysfs sysfs;  // empty: no cpu/ and no node/ folders
  const std::vector<CpuPlace> places = ReadCpuPlaces({0, 1, 2}, sysfs.root());
  EXPECT_EQ(PhysicalCoreCpus(places), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(NodesOf(places), (std::vector<int>{0}));
}

TEST(CpuPlacesTest, SplitsCpusIntoContiguousSharesLargerFirst) {
  using Shares = std::vector<std::vector<int>>;
  EXPECT_EQ(SplitCpus({0, 1}, 2), (Shares{{0}, {1}}));
  EXPECT_EQ(SplitCpus({0, 1, 2, 3, 4}, 2), (Shares{{0, 1, 2}, {3, 4}}));
  EXPECT_EQ(SplitCpus({2, 3, 8, 9}, 4), (Shares{{2}, {3}, {8}, {9}}));
  EXPECT_EQ(SplitCpus({0, 1}, 1), (Shares{{0, 1}}));
  EXPECT_TRUE(SplitCpus({0, 1}, 3).empty());
  EXPECT_TRUE(SplitCpus({0, 1}, 0).empty());
}

TEST(CpuPlacesTest, NumaSharesStayInsideOneNodeEach) {
  FakeSysfs sysfs;
  TwoSocketsWithSmt(sysfs);
  const std::vector<CpuPlace> places = ReadCpuPlaces(Range(0, 15), sysfs.root());
  auto two = SplitCpusByNode(places, 2, "stack.threads");
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].cpus, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ((*two)[0].node, 0);
  EXPECT_EQ((*two)[1].cpus, (std::vector<int>{4, 5, 6, 7, 12, 13, 14, 15}));
  EXPECT_EQ((*two)[1].node, 1);
  // Physical cores first, then 2 replicas per node.
  auto four = SplitCpusByNode(ReadCpuPlaces(Range(0, 7), sysfs.root()), 4, "stack.threads");
  ASSERT_TRUE(four.ok()) << four.status();
  ASSERT_EQ(four->size(), 4u);
  EXPECT_EQ((*four)[1].cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ((*four)[1].node, 0);
  EXPECT_EQ((*four)[2].cpus, (std::vector<int>{4, 5}));
  EXPECT_EQ((*four)[2].node, 1);
}

TEST(CpuPlacesTest, NumaSharesRefuseWhatTheNodesCannotHoldEvenly) {
  FakeSysfs sysfs;
  TwoSocketsWithSmt(sysfs);
  auto odd = SplitCpusByNode(ReadCpuPlaces(Range(0, 15), sysfs.root()), 3, "stack.threads");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(),
            "stack.threads: replicas=3 with numa=on, but the job's CPUs span 2 NUMA nodes (node "
            "0: CPUs 0-3,8-11, node 1: CPUs 4-7,12-15); allowed: a multiple of 2, so that every "
            "node runs as many replicas");
  // A share that holds one CPU of node 1 cannot run 2 replicas there.
  auto thin = SplitCpusByNode(ReadCpuPlaces({0, 1, 4}, sysfs.root()), 4, "stack.threads");
  ASSERT_FALSE(thin.ok());
  EXPECT_NE(thin.status().message().find("puts 2 on NUMA node 1, which the job may use only 1 "
                                         "CPUs of (4)"),
            std::string::npos)
      << thin.status();
}

TEST(CpuPlacesTest, ThisHostsCpusAllHaveAPlace) {
  // The real sysfs: every CPU gets a node the host lists, and physical
  // cores are a non-empty subset.
  const std::vector<CpuPlace> places = ReadCpuPlaces({0});
  ASSERT_EQ(places.size(), 1u);
  EXPECT_GE(places[0].node, 0);
  EXPECT_EQ(PhysicalCoreCpus(places), (std::vector<int>{0}));
}

}  // namespace
}  // namespace paradnn::common
