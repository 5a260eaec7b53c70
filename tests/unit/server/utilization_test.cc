#include "server/utilization.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <tuple>

namespace paradnn::server {
namespace {

v1::MatmulRoof Roof(const char* kernel, const char* dtype, double flops) {
  v1::MatmulRoof roof;
  roof.set_kernel(kernel);
  roof.set_dtype(dtype);
  roof.set_flops_per_sec(flops);
  return roof;
}

v1::Platform TestPlatform() {
  v1::Platform platform;
  platform.set_device_kind("cpu");
  *platform.add_matmul_roofs() = Roof("matmul", "float32", 200e9);
  *platform.add_matmul_roofs() = Roof("matmul", "bfloat16", 400e9);
  *platform.add_matmul_roofs() = Roof("conv", "float32", 250e9);
  v1::SiliconPeak* peak = platform.add_silicon_peaks();
  peak->set_dtype("float32");
  peak->set_flops_per_sec(300e9);
  peak->set_basis("2 cores x ...");
  peak = platform.add_silicon_peaks();
  peak->set_dtype("bfloat16");
  peak->set_flops_per_sec(1600e9);
  return platform;
}

v1::Measurement Job(const char* family, const char* precision, double model, double executed) {
  v1::Measurement m;
  m.mutable_config()->set_family(family);
  m.mutable_config()->set_precision(precision);
  m.set_device("cpu");
  m.set_outcome(v1::OK);
  m.set_model_flops_per_sec(model);
  m.set_executed_flops_per_sec(executed);
  return m;
}

// A name and what `map` makes of it.
struct NameCase {
  const char* name;
  const char* expected;
};

// Checks every case of `map`; a failure names the case's `what` and name.
template <typename Map>
void ExpectEachMapsTo(Map map, const char* what, std::initializer_list<NameCase> cases) {
  for (const NameCase& c : cases) {
    EXPECT_EQ(map(c.name), c.expected) << what << " '" << c.name << "'";
  }
}

TEST(UtilizationTest, ComputeDtypeOfEveryPrecision) {
  ExpectEachMapsTo(ComputeDtype, "precision",
                   {{"", "float32"},
                    {"float32", "float32"},
                    {"bfloat16", "bfloat16"},
                    {"mixed_bf16", "bfloat16"},
                    {"float16", "float16"},
                    {"mixed_fp16", "float16"},
                    {"int8", ""}});
}

TEST(UtilizationTest, KernelPathOfFamilies) {
  ExpectEachMapsTo(RoofKernelOf, "family",
                   {{"fc", "matmul"},
                    {"rnn", "matmul"},
                    {"transformer", "matmul"},
                    {"cnn", "conv"},
                    {"resnet50", "conv"},
                    {"squeezenet1_0", "conv"},
                    {"retinanet", "conv"},
                    {"no-such-family", "matmul"}});
}

TEST(UtilizationTest, AgainstTheStacksBestAndTheSilicon) {
  UtilizationRoofs roofs(TestPlatform());
  v1::Measurement fc = Job("fc", "float32", 150e9, 180e9);
  EXPECT_FALSE(roofs.Fill(&fc));
  EXPECT_DOUBLE_EQ(fc.mfu(), 0.75);
  EXPECT_DOUBLE_EQ(fc.hfu(), 0.9);
  EXPECT_DOUBLE_EQ(fc.silicon_mfu(), 0.5);
  EXPECT_DOUBLE_EQ(fc.silicon_hfu(), 0.6);
  EXPECT_EQ(fc.roof(), "matmul float32");
  EXPECT_TRUE(fc.suspect().empty());

  // A CNN is measured against the conv roof of its dtype...
  v1::Measurement cnn = Job("cnn", "float32", 125e9, 125e9);
  roofs.Fill(&cnn);
  EXPECT_DOUBLE_EQ(cnn.mfu(), 0.5);
  EXPECT_EQ(cnn.roof(), "conv float32");
  // ... and against the matmul roof, said so, where no conv roof exists.
  v1::Measurement bf16_cnn = Job("resnet50", "mixed_bf16", 100e9, 100e9);
  roofs.Fill(&bf16_cnn);
  EXPECT_DOUBLE_EQ(bf16_cnn.mfu(), 0.25);
  EXPECT_EQ(bf16_cnn.roof(), "matmul bfloat16 (no conv roof calibrated)");
  EXPECT_DOUBLE_EQ(bf16_cnn.silicon_mfu(), 100e9 / 1600e9);
}

TEST(UtilizationTest, APeakBelowTheCalibratedRoofIsRaisedToIt) {
  v1::Platform platform = TestPlatform();
  platform.mutable_silicon_peaks(0)->set_flops_per_sec(166e9);  // under the 250 G conv roof
  UtilizationRoofs roofs(platform);
  EXPECT_DOUBLE_EQ(roofs.platform().silicon_peaks(0).flops_per_sec(), 250e9);
  EXPECT_NE(roofs.platform().silicon_peaks(0).inconsistency().find("basis is wrong"),
            std::string::npos);
  v1::Measurement fc = Job("fc", "float32", 150e9, 150e9);
  EXPECT_FALSE(roofs.Fill(&fc));
  EXPECT_DOUBLE_EQ(fc.silicon_mfu(), 0.6);
  EXPECT_TRUE(fc.suspect().empty());
}

TEST(UtilizationTest, NoRoofOrPeakGivesZeroAndOverwritesWhatTheWorkerSent) {
  UtilizationRoofs roofs(TestPlatform());
  v1::Measurement m = Job("fc", "mixed_fp16", 100e9, 100e9);
  m.set_mfu(0.9);
  m.set_silicon_mfu(0.9);
  EXPECT_FALSE(roofs.Fill(&m));
  EXPECT_EQ(m.mfu(), 0);
  EXPECT_EQ(m.hfu(), 0);
  EXPECT_EQ(m.silicon_mfu(), 0);
  EXPECT_EQ(m.roof(), "");
}

TEST(UtilizationTest, AJobFasterThanItsRoofRaisesItAndIsFlagged) {
  UtilizationRoofs roofs(TestPlatform());
  // 320 G executed: above the 200 G matmul roof and the 300 G peak.
  v1::Measurement fast = Job("fc", "float32", 280e9, 320e9);
  EXPECT_TRUE(roofs.Fill(&fast));
  EXPECT_DOUBLE_EQ(fast.hfu(), 1.0);
  EXPECT_DOUBLE_EQ(fast.mfu(), 280.0 / 320.0);
  EXPECT_DOUBLE_EQ(fast.silicon_hfu(), 1.0);
  ASSERT_EQ(fast.suspect_size(), 2);
  EXPECT_NE(fast.suspect(0).find("faster than the calibrated matmul float32 roof"),
            std::string::npos)
      << fast.suspect(0);
  EXPECT_NE(fast.suspect(1).find("faster than the theoretical float32 peak"), std::string::npos)
      << fast.suspect(1);
  EXPECT_TRUE(roofs.platform().matmul_roofs(0).raised_by_job());
  EXPECT_DOUBLE_EQ(roofs.platform().matmul_roofs(0).flops_per_sec(), 320e9);
  EXPECT_FALSE(roofs.platform().silicon_peaks(0).inconsistency().empty());
  // Later jobs are measured against the raised roof, and never above 100 %.
  v1::Measurement next = Job("fc", "float32", 160e9, 160e9);
  EXPECT_FALSE(roofs.Fill(&next));
  EXPECT_DOUBLE_EQ(next.mfu(), 0.5);
  EXPECT_TRUE(next.suspect().empty());
  // The model count can exceed the executed one: the roof moves only to the
  // executed rate, and the model rate above it is shown as 100 %, flagged.
  v1::Measurement model_heavy = Job("fc", "float32", 400e9, 350e9);
  EXPECT_TRUE(roofs.Fill(&model_heavy));
  EXPECT_DOUBLE_EQ(roofs.platform().matmul_roofs(0).flops_per_sec(), 350e9);
  EXPECT_DOUBLE_EQ(model_heavy.mfu(), 1.0);
  EXPECT_DOUBLE_EQ(model_heavy.hfu(), 1.0);
  bool clamp_said = false;
  for (const std::string& s : model_heavy.suspect()) {
    clamp_said = clamp_said || s.find("shown as 100 %") != std::string::npos;
  }
  EXPECT_TRUE(clamp_said);
}

TEST(UtilizationTest, ASuspectOrFailedJobNeverMovesARoof) {
  UtilizationRoofs roofs(TestPlatform());
  v1::Measurement busy = Job("fc", "float32", 280e9, 320e9);
  busy.add_suspect("host busy: load average 3.50 on 2 CPUs");
  EXPECT_FALSE(roofs.Fill(&busy));
  EXPECT_DOUBLE_EQ(roofs.platform().matmul_roofs(0).flops_per_sec(), 200e9);
  EXPECT_DOUBLE_EQ(busy.mfu(), 1.0);
  EXPECT_DOUBLE_EQ(busy.silicon_hfu(), 1.0);
  EXPECT_FALSE(roofs.platform().matmul_roofs(0).raised_by_job());
  v1::Measurement timeout = Job("fc", "float32", 280e9, 320e9);
  timeout.set_outcome(v1::TIMEOUT);
  EXPECT_FALSE(roofs.Fill(&timeout));
  EXPECT_DOUBLE_EQ(roofs.platform().matmul_roofs(0).flops_per_sec(), 200e9);
}

TEST(UtilizationTest, AJobNeverClearsAPeaksInconsistency) {
  v1::Platform platform = TestPlatform();
  platform.mutable_silicon_peaks(0)->set_flops_per_sec(150e9);  // under the 250 G conv roof
  UtilizationRoofs roofs(platform);
  const std::string note = roofs.platform().silicon_peaks(0).inconsistency();
  ASSERT_FALSE(note.empty());
  // Within 5 % of the raised peak: still the same wrong basis.
  v1::Measurement fast = Job("cnn", "float32", 255e9, 255e9);
  EXPECT_TRUE(roofs.Fill(&fast));
  EXPECT_EQ(roofs.platform().silicon_peaks(0).inconsistency(), note);
}

TEST(UtilizationTest, SlowBlasCoreFlagsFloat32MatmulJobsOnly) {
  v1::Platform platform = TestPlatform();
  platform.set_blas_core("Prescott");
  platform.set_blas_core_choice("as-installed");
  v1::StackFinding* installed = platform.add_stack_findings();
  installed->set_component("blas_core");
  installed->set_setting("Prescott");
  installed->set_flops_per_sec(50e9);
  installed->set_correct(true);
  installed->set_as_installed(true);
  v1::StackFinding* best = platform.add_stack_findings();
  best->set_component("blas_core");
  best->set_setting("SkylakeX");
  best->set_flops_per_sec(205e9);
  best->set_correct(true);
  UtilizationRoofs roofs(platform);
  v1::Measurement fc = Job("fc", "float32", 40e9, 40e9);
  roofs.Fill(&fc);
  ASSERT_EQ(fc.suspect_size(), 1);
  EXPECT_EQ(fc.suspect(0),
            "BLAS runs Prescott kernels; this CPU supports SkylakeX (4.1x faster fp32 GEMM "
            "measured)");
  v1::Measurement bf16 = Job("fc", "bfloat16", 40e9, 40e9);
  roofs.Fill(&bf16);
  EXPECT_TRUE(bf16.suspect().empty());
  v1::Measurement cnn = Job("cnn", "float32", 40e9, 40e9);
  roofs.Fill(&cnn);
  EXPECT_TRUE(cnn.suspect().empty());
  // A worker that runs the doctor's core is not flagged...
  platform.set_blas_core("SkylakeX");
  platform.set_blas_core_choice("auto");
  UtilizationRoofs tuned(platform);
  v1::Measurement tuned_fc = Job("fc", "float32", 40e9, 40e9);
  tuned.Fill(&tuned_fc);
  EXPECT_TRUE(tuned_fc.suspect().empty());
  // ...but a job of a stack axis that ran the installed core on it is: the
  // result's own record wins over the platform's.
  v1::Measurement axis_fc = Job("fc", "float32", 40e9, 40e9);
  (*axis_fc.mutable_stack())["blas_core"] = "Prescott";
  tuned.Fill(&axis_fc);
  ASSERT_EQ(axis_fc.suspect_size(), 1);
  EXPECT_NE(axis_fc.suspect(0).find("BLAS runs Prescott kernels"), std::string::npos);
}

TEST(UtilizationTest, SlowAtenCapabilityFlagsEveryCpuFamily) {
  v1::Platform platform = TestPlatform();
  platform.set_aten_capability("avx2");
  for (const auto& [setting, rate, installed] :
       {std::tuple{"avx2", 10e9, true}, std::tuple{"avx512", 12e9, false}}) {
    v1::StackFinding* f = platform.add_stack_findings();
    f->set_component("aten_capability");
    f->set_setting(setting);
    f->set_flops_per_sec(rate);
    f->set_correct(true);
    f->set_as_installed(installed);
  }
  UtilizationRoofs roofs(platform);
  for (const char* family : {"fc", "cnn", "rnn"}) {
    v1::Measurement m = Job(family, "bfloat16", 40e9, 40e9);
    roofs.Fill(&m);
    ASSERT_EQ(m.suspect_size(), 1) << family;
    EXPECT_EQ(m.suspect(0),
              "ATen runs avx2 kernels; this CPU supports avx512 (1.2x faster fp32 elementwise "
              "measured)");
  }
  v1::Measurement tuned = Job("fc", "float32", 40e9, 40e9);
  (*tuned.mutable_stack())["aten_capability"] = "avx512";
  roofs.Fill(&tuned);
  EXPECT_TRUE(tuned.suspect().empty());
}

// A 16-bit path slower than half of float32's on the job's kernel path is a
// fallback, said on the result with both roofs; one at float32's rate or
// above, or a path without both roofs calibrated, says nothing.
TEST(UtilizationTest, ASixteenBitFallbackSlowerThanFloat32IsFlagged) {
  v1::Platform platform = TestPlatform();
  platform.set_isa_paths("ATen AVX2; oneDNN AVX2; AVX-512 BF16: no; AMX: no");
  *platform.add_matmul_roofs() = Roof("conv", "bfloat16", 1.06e9);
  UtilizationRoofs roofs(platform);
  v1::Measurement cnn = Job("resnet50", "bfloat16", 0.5e9, 0.5e9);
  roofs.Fill(&cnn);
  ASSERT_EQ(cnn.suspect_size(), 1) << cnn.DebugString();
  EXPECT_EQ(cnn.suspect(0),
            "bfloat16 convs run at 1.06 GFLOP/s on this stack, 236x below its float32 convs (250 "
            "GFLOP/s): no native bfloat16 path here (ATen AVX2; oneDNN AVX2; AVX-512 BF16: no; "
            "AMX: no), so this result measures the stack's fallback, not the silicon");
  // The bfloat16 GEMM roof is twice float32's: no note on an FC.
  v1::Measurement fc = Job("fc", "mixed_bf16", 100e9, 100e9);
  roofs.Fill(&fc);
  EXPECT_TRUE(fc.suspect().empty()) << fc.DebugString();
  // float32 jobs never carry it.
  v1::Measurement fp32_cnn = Job("resnet50", "float32", 100e9, 100e9);
  roofs.Fill(&fp32_cnn);
  EXPECT_TRUE(fp32_cnn.suspect().empty()) << fp32_cnn.DebugString();
}

}  // namespace
}  // namespace paradnn::server
