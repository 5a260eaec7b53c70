// The guideline's and the baselines' settings (model/thread_guideline.h) on
// hosts of several shapes, and the guideline for the families' widths.
#include "model/thread_guideline.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "model/families/fc.h"
#include "model/families/vision.h"
#include "model/model_counts.h"

namespace paradnn::model {
namespace {

// Two sockets of 16 cores, 2 threads each.
constexpr CpuCores kTwoSocketXeon{64, 32, 2};
constexpr CpuCores kTwoVcpus{2, 2, 1};

TEST(ThreadGuidelineTest, ANarrowModelTakesOnePoolOfEveryPhysicalCore) {
  const ThreadSettings s = GuidelineSettings(OperatorWidth{5, 5}, kTwoSocketXeon);
  EXPECT_EQ(s.name, "guideline");
  EXPECT_EQ(s.inter_op_threads, 1);
  EXPECT_EQ(s.intra_op_threads, 32);  // physical cores, not the 64 hyper-threads
  EXPECT_TRUE(s.env.empty());
  EXPECT_NE(s.why.find("average width 1.00"), std::string::npos) << s.why;
}

TEST(ThreadGuidelineTest, AWideModelSplitsThePhysicalCoresAmongItsPools) {
  // Width 26 / 8 = 3.25 -> 3 pools of 32 / 3 = 10 threads.
  const ThreadSettings s = GuidelineSettings(OperatorWidth{26, 8}, kTwoSocketXeon);
  EXPECT_EQ(s.inter_op_threads, 3);
  EXPECT_EQ(s.intra_op_threads, 10);
  // Rounded to the nearest: 1.45 -> 1, 1.5 -> 2.
  EXPECT_EQ(GuidelineSettings(OperatorWidth{29, 20}, kTwoSocketXeon).inter_op_threads, 1);
  EXPECT_EQ(GuidelineSettings(OperatorWidth{3, 2}, kTwoSocketXeon).inter_op_threads, 2);
  // Never more pools than physical cores, never fewer than one thread each.
  const ThreadSettings wide = GuidelineSettings(OperatorWidth{100, 2}, kTwoVcpus);
  EXPECT_EQ(wide.inter_op_threads, 2);
  EXPECT_EQ(wide.intra_op_threads, 1);
  // No heavy operators (the allreduce family): one pool.
  EXPECT_EQ(GuidelineSettings(OperatorWidth{}, kTwoVcpus).inter_op_threads, 1);
  // A host whose cores are unknown counts its logical CPUs.
  EXPECT_EQ(GuidelineSettings(OperatorWidth{4, 4}, CpuCores{8, 0, 1}).intra_op_threads, 8);
}

TEST(ThreadGuidelineTest, TheFamiliesWidthsGiveTheirPools) {
  const CpuCores sixteen{16, 16, 1};
  const ThreadSettings fc =
      GuidelineSettings(CountWork(MakeFcSpec(FcShape{4, 64, 64, 10, 8})).width, sixteen);
  EXPECT_EQ(fc.inter_op_threads, 1);
  EXPECT_EQ(fc.intra_op_threads, 16);
  // SqueezeNet's fire modules: 26 / 18 = 1.44 -> 1 pool.
  const ThreadSettings squeeze = GuidelineSettings(
      CountWork(MakeVisionSpec(VisionArch::kSqueezeNet10, VisionShape{224, 1000, 8})).width,
      sixteen);
  EXPECT_EQ(squeeze.inter_op_threads, 1);
}

TEST(ThreadGuidelineTest, IntelsRecommendationIsPerSocketWithAShortBlockTime) {
  const ThreadSettings s = IntelRecommendedSettings(kTwoSocketXeon);
  EXPECT_EQ(s.name, "intel");
  EXPECT_EQ(s.intra_op_threads, 16);
  EXPECT_EQ(s.inter_op_threads, 2);
  EXPECT_EQ(s.env.at("KMP_BLOCKTIME"), "1");
  EXPECT_EQ(s.env.at("KMP_AFFINITY"), "granularity=fine,compact,1,0");
  EXPECT_EQ(s.env.at("OMP_PROC_BIND"), "close");
  EXPECT_EQ(IntelRecommendedSettings(kTwoVcpus).intra_op_threads, 2);
  EXPECT_EQ(IntelRecommendedSettings(kTwoVcpus).inter_op_threads, 1);
}

TEST(ThreadGuidelineTest, TensorFlowsDefaultsAreEveryLogicalCpuForBothPools) {
  const ThreadSettings s = TensorFlowDefaultSettings(kTwoSocketXeon);
  EXPECT_EQ(s.name, "tensorflow");
  EXPECT_EQ(s.intra_op_threads, 64);
  EXPECT_EQ(s.inter_op_threads, 64);
  EXPECT_EQ(s.pinning, ThreadPinning::kOff);
  // OpenMP as installed: the runner's own short spin is kept out.
  EXPECT_EQ(s.env, (std::map<std::string, std::string>{{"PARADNN_RUNNER_KEEP_OPENMP_ENV", "1"}}));
}

platform::ThreadProfile Profile(const char* value) {
  return *platform::ParseThreadProfile(value, "stack.threads");
}

TEST(ThreadGuidelineTest, ProfilesResolveOnTheHostTheyRunOn) {
  const OperatorWidth wide{26, 8};
  EXPECT_EQ(ResolveThreadProfile(Profile("guideline"), wide, kTwoSocketXeon).inter_op_threads, 3);
  EXPECT_EQ(ResolveThreadProfile(Profile("guideline"), wide, kTwoVcpus).inter_op_threads, 2);
  EXPECT_EQ(ResolveThreadProfile(Profile("intel"), wide, kTwoSocketXeon).intra_op_threads, 16);
  EXPECT_EQ(ResolveThreadProfile(Profile("tensorflow"), wide, kTwoVcpus).intra_op_threads, 2);
  const ThreadSettings libtorch = ResolveThreadProfile(Profile("libtorch"), wide, kTwoSocketXeon);
  EXPECT_EQ(libtorch.name, "libtorch");
  EXPECT_EQ(libtorch.intra_op_threads, 0);  // LibTorch picks
  EXPECT_EQ(libtorch.inter_op_threads, 0);
  EXPECT_EQ(libtorch.pinning, ThreadPinning::kOff);
  const ThreadSettings exact =
      ResolveThreadProfile(Profile("intra=3,inter=2,pin=on"), wide, kTwoVcpus);
  EXPECT_EQ(exact.name, "intra=3,inter=2,pin=on");
  EXPECT_EQ(exact.intra_op_threads, 3);  // as asked, even past the host's CPUs
  EXPECT_EQ(exact.inter_op_threads, 2);
  EXPECT_EQ(exact.pinning, ThreadPinning::kOn);
  EXPECT_EQ(ResolveThreadProfile(Profile("intra=1,inter=1"), wide, kTwoVcpus).pinning,
            ThreadPinning::kRunnerRule);
}

TEST(ThreadGuidelineTest, OnlyTheBaselinesSetTheOpenMpEnvironment) {
  EXPECT_EQ(ThreadProfileEnvironment(Profile("intel")).at("OMP_PLACES"), "cores");
  EXPECT_EQ(ThreadProfileEnvironment(Profile("libtorch")).at("PARADNN_RUNNER_KEEP_OPENMP_ENV"),
            "1");
  EXPECT_TRUE(ThreadProfileEnvironment(Profile("guideline")).empty());
  EXPECT_TRUE(ThreadProfileEnvironment(Profile("intra=2,inter=1")).empty());
}

TEST(ThreadGuidelineTest, TheLinesToCopyReproduceWhatWasMeasured) {
  // The guideline, pinned, with the runner's short spin.
  ThreadSettings s = GuidelineSettings(OperatorWidth{5, 5}, kTwoVcpus);
  EXPECT_EQ(SettingsToCopy(s, RanWith{true, "1000"}),
            "export GOMP_SPINCOUNT=1000  # paradnn's runner ran with this short spin\n"
            "export OMP_PROC_BIND=true  # one OpenMP thread per core, as measured\n"
            "torch.set_num_threads(2)\n"
            "torch.set_num_interop_threads(1)  # before any inter-op work starts\n");
  // Intel's: its own environment, not the runner's spin.
  s = IntelRecommendedSettings(kTwoVcpus);
  const std::string intel = SettingsToCopy(s, RanWith{false, ""});
  EXPECT_NE(intel.find("export KMP_BLOCKTIME=1\n"), std::string::npos) << intel;
  EXPECT_NE(intel.find("export OMP_PROC_BIND=close\n"), std::string::npos) << intel;
  EXPECT_EQ(intel.find("PARADNN"), std::string::npos) << intel;
  // The guideline on a host with hyper-threads: started on one CPU per core.
  s = GuidelineSettings(OperatorWidth{5, 5}, CpuCores{4, 2, 1});
  RanWith smt{true, "1000"};
  smt.hyper_threads = true;
  const std::string guideline = SettingsToCopy(s, smt);
  EXPECT_NE(guideline.find("# one CPU per physical core, siblings idle, as measured:\n"
                           "taskset -c $(lscpu -p=CPU,CORE | awk -F, '!/^#/ && !seen[$2]++ "
                           "{printf \"%s%s\", sep, $1; sep=\",\"}') python train.py\n"),
            std::string::npos)
      << guideline;
  // One process per socket, memory on its node.
  platform::ThreadProfile per_socket =
      *platform::ParseThreadProfile("intra=8,inter=1,replicas=2,numa=on", "f");
  const std::string numa = SettingsToCopy(ResolveThreadProfile(per_socket, {}, CpuCores{16, 16, 2}),
                                          RanWith{true, "1000"});
  EXPECT_NE(numa.find("# 2 training processes at once, each on its NUMA node's CPUs with its "
                      "memory there, e.g. numactl --cpunodebind=0 --membind=0 python train.py & "
                      "numactl --cpunodebind=1 --membind=1 python train.py &\n"),
            std::string::npos)
      << numa;
  // LibTorch's own: nothing to set.
  EXPECT_EQ(SettingsToCopy(LibTorchDefaultSettings(), RanWith{}),
            "# nothing to set: LibTorch's own thread counts\n");
  EXPECT_EQ(SettingsToCopy(LibTorchDefaultSettings(), RanWith{false, "", 1, 2}),
            "# nothing to set: LibTorch's own thread counts (here intra-op 1, inter-op 2)\n");
}

}  // namespace
}  // namespace paradnn::model
