// The guideline's and the baselines' settings (model/thread_guideline.h) on
// hosts of several shapes, and the guideline for the families' widths.
#include "model/thread_guideline.h"

#include <gtest/gtest.h>

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
  EXPECT_TRUE(s.env.empty());
}

}  // namespace
}  // namespace paradnn::model
