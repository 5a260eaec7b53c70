#include "worker/runner/suspect_conditions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace paradnn::runner {
namespace {

TEST(SuspectConditionsTest, DetectsReferenceBlas) {
  EXPECT_TRUE(IsReferenceBlas("reference BLAS (/usr/lib/x86_64-linux-gnu/blas/libblas.so.3)"));
  EXPECT_TRUE(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"));
  EXPECT_FALSE(
      IsReferenceBlas("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64 "
                      "(/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3)"));
  EXPECT_FALSE(IsReferenceBlas("MKL (/opt/intel/mkl/lib/libmkl_rt.so)"));
  EXPECT_FALSE(IsReferenceBlas("BLIS (/usr/lib/x86_64-linux-gnu/blis-openmp/libblas.so.3)"));
  EXPECT_FALSE(IsReferenceBlas("none found (no sgemm_ in the process)"));
  EXPECT_FALSE(IsReferenceBlas(""));
  EXPECT_EQ(ReferenceBlasCondition("reference BLAS (/usr/lib/x86_64-linux-gnu/blas/libblas.so.3)"),
            "reference BLAS in use: matmul throughput is ~13x below OpenBLAS on this class of CPU");
  EXPECT_EQ(ReferenceBlasCondition("OpenBLAS 0.3.21"), std::nullopt);
}

TEST(SuspectConditionsTest, ParsesLoadAverage) {
  EXPECT_EQ(ParseLoadAverage1("1.31 1.74 3.55 5/102 32573\n"), 1.31);
  EXPECT_EQ(ParseLoadAverage1("0.00 0.01 0.05 1/80 7"), 0.0);
  EXPECT_EQ(ParseLoadAverage1(""), std::nullopt);
  EXPECT_EQ(ParseLoadAverage1("busy 1 2"), std::nullopt);
  EXPECT_EQ(ParseLoadAverage1("-1 0 0"), std::nullopt);
}

TEST(SuspectConditionsTest, HostLoadThresholdIsHalfACpuBesidesTheRunner) {
  // 4 CPUs: others may run 2.0 threads; the runner's 2 threads are its own.
  EXPECT_EQ(HostLoadCondition(4.0, 4.0, 2, 4), std::nullopt);
  EXPECT_EQ(HostLoadCondition(4.01, 1.0, 2, 4), "host busy: load average 4.01 on 4 CPUs");
  EXPECT_EQ(HostLoadCondition(0.5, 6.5, 2, 4), "host busy: load average 6.50 on 4 CPUs");
  EXPECT_EQ(HostLoadCondition(3.0, std::nullopt, 0, 4), "host busy: load average 3.00 on 4 CPUs");
  EXPECT_EQ(HostLoadCondition(std::nullopt, 1.9, 0, 4), std::nullopt);
  // Unknown samples or CPU count: nothing to judge.
  EXPECT_EQ(HostLoadCondition(std::nullopt, std::nullopt, 1, 4), std::nullopt);
  EXPECT_EQ(HostLoadCondition(9.0, 9.0, 1, 0), std::nullopt);
}

TEST(SuspectConditionsTest, GovernorOtherThanPerformance) {
  EXPECT_EQ(GovernorCondition("powersave\n"), "cpu frequency scaling: governor powersave");
  EXPECT_EQ(GovernorCondition("schedutil"), "cpu frequency scaling: governor schedutil");
  EXPECT_EQ(GovernorCondition("performance"), std::nullopt);
  EXPECT_EQ(GovernorCondition(""), std::nullopt);  // unreadable: not judged
}

TEST(SuspectConditionsTest, NoisyStepsAboveTenPercentCv) {
  EXPECT_EQ(NoisyStepsCondition(0.14), "noisy steps: CV 14 %");
  EXPECT_EQ(NoisyStepsCondition(0.101), "noisy steps: CV 10 %");
  EXPECT_EQ(NoisyStepsCondition(0.10), std::nullopt);
  EXPECT_EQ(NoisyStepsCondition(0.02), std::nullopt);
  EXPECT_EQ(NoisyStepsCondition(0), std::nullopt);
}

TEST(SuspectConditionsTest, HostSlowerThanAtCalibration) {
  EXPECT_EQ(HostSpeedCondition(std::nullopt, std::nullopt), std::nullopt);
  EXPECT_EQ(HostSpeedCondition(0.97, 1.02), std::nullopt);
  EXPECT_EQ(HostSpeedCondition(0.85, 0.85), std::nullopt);
  EXPECT_EQ(HostSpeedCondition(0.70, 0.95),
            "host slower than at calibration: matmul probe at 70 % of its calibrated speed "
            "before timing, 95 % after");
  EXPECT_EQ(HostSpeedCondition(std::nullopt, 0.5),
            "host slower than at calibration: matmul probe at not measured of its calibrated "
            "speed before timing, 50 % after");
}

TEST(SuspectConditionsTest, CollectsEveryConditionInOrder) {
  SuspectFacts facts;
  facts.blas_backend = "reference BLAS (/usr/lib/x86_64-linux-gnu/blas/libblas.so.3)";
  facts.governor = "powersave";
  facts.load_at_start = 3.0;
  facts.load_at_end = 3.5;
  facts.runner_threads = 1;
  facts.logical_cpus = 2;
  facts.steps_cv = 0.25;
  facts.probe_ratio_before = 0.6;
  facts.probe_ratio_after = 0.7;
  EXPECT_EQ(SuspectConditions(facts),
            (std::vector<std::string>{
                "reference BLAS in use: matmul throughput is ~13x below OpenBLAS on this class "
                "of CPU",
                "host busy: load average 3.50 on 2 CPUs",
                "cpu frequency scaling: governor powersave", "noisy steps: CV 25 %",
                "host slower than at calibration: matmul probe at 60 % of its calibrated "
                "speed before timing, 70 % after"}));
  SuspectFacts clean;
  clean.blas_backend = "OpenBLAS 0.3.21";
  clean.governor = "performance";
  clean.load_at_start = 0.1;
  clean.load_at_end = 1.0;
  clean.runner_threads = 1;
  clean.logical_cpus = 2;
  clean.steps_cv = 0.01;
  clean.probe_ratio_before = 0.99;
  clean.probe_ratio_after = 1.01;
  EXPECT_TRUE(SuspectConditions(clean).empty());
  clean.subnormal_gradient_fraction = 0.0005;
  clean.flush_denormal = "on";
  EXPECT_TRUE(SuspectConditions(clean).empty());
}

TEST(SuspectConditionsTest, SubnormalGradients) {
  EXPECT_EQ(SubnormalCondition(std::nullopt, "off"), std::nullopt);
  EXPECT_EQ(SubnormalCondition(0.001, "off"), std::nullopt);
  EXPECT_EQ(SubnormalCondition(0.28, "off"),
            "denormals: 28.0 % of gradient values are subnormal (denormal arithmetic is 10-100x "
            "slower on x86); flush-to-zero is off (the runner's default is on; "
            "PARADNN_FLUSH_DENORMAL=off turned it off)");
  EXPECT_EQ(SubnormalCondition(0.05, "on"),
            "denormals: 5.0 % of gradient values are subnormal (denormal arithmetic is 10-100x "
            "slower on x86); flush-to-zero is on");
}

TEST(SuspectConditionsTest, NonFiniteLoss) {
  EXPECT_EQ(NonFiniteLossCondition(2.9, 2.1), std::nullopt);
  EXPECT_EQ(NonFiniteLossCondition(2.9, std::nan("")),
            "loss not finite: nan at the last timed step (2.9 at the first warm-up step): the "
            "model diverged or a kernel computed wrong values; the step times stand, the "
            "training does not");
  EXPECT_NE(NonFiniteLossCondition(2.9, HUGE_VAL), std::nullopt);
  SuspectFacts facts;
  facts.first_loss = 2.9;
  facts.last_loss = std::nan("");
  const std::vector<std::string> conditions = SuspectConditions(facts);
  ASSERT_FALSE(conditions.empty());
  EXPECT_EQ(conditions.back().rfind("loss not finite", 0), 0u) << conditions.back();
}

}  // namespace
}  // namespace paradnn::runner
