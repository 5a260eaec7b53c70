#include "worker/runner/stack_doctor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace paradnn::runner {
namespace {

// A random (m x k) * (k x n) product, computed in float32.
struct Gemm {
  int64_t m, n, k;
  std::vector<float> a, b, c;
};

Gemm RandomGemm(int64_t m, int64_t n, int64_t k) {
  Gemm g{m, n, k, std::vector<float>(m * k), std::vector<float>(k * n), std::vector<float>(m * n)};
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (float& x : g.a) x = uniform(random);
  for (float& x : g.b) x = uniform(random);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += g.a[i * k + p] * g.b[p * n + j];
      g.c[i * n + j] = sum;
    }
  }
  return g;
}

TEST(GemmCheckTest, Float32RoundingPassesAndAWrongCoreIsRejected) {
  Gemm g = RandomGemm(64, 48, 256);
  const double good = MaxGemmRelativeError(g.a.data(), g.b.data(), g.c.data(), g.m, g.n, g.k,
                                           /*samples=*/1 << 20);
  EXPECT_LT(good, 1e-5);
  // A kernel that gets one element wrong (a bad tail loop, a lost carry).
  Gemm wrong = g;
  wrong.c[17 * g.n + 31] += 0.5f;
  EXPECT_GT(
      MaxGemmRelativeError(wrong.a.data(), wrong.b.data(), wrong.c.data(), g.m, g.n, g.k, 1 << 20),
      kMaxGemmRelativeError);
  // One that drops the last k-block: every element off.
  Gemm short_k = g;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      for (int64_t p = g.k - 8; p < g.k; ++p)
        short_k.c[i * g.n + j] -= g.a[i * g.k + p] * g.b[p * g.n + j];
    }
  }
  EXPECT_GT(MaxGemmRelativeError(short_k.a.data(), short_k.b.data(), short_k.c.data(), g.m, g.n,
                                 g.k, /*samples=*/64),
            kMaxGemmRelativeError);
  Gemm nan = g;
  nan.c[0] = std::nanf("");
  EXPECT_EQ(MaxGemmRelativeError(nan.a.data(), nan.b.data(), nan.c.data(), g.m, g.n, g.k, 1 << 20),
            1);
}

TEST(BlasCoreCandidatesTest, ByCpuFlags) {
  const std::vector<std::string> sapphire = {
      "pni",      "sse4_2",   "avx",      "avx2",        "fma",         "avx512f",  "avx512bw",
      "avx512cd", "avx512dq", "avx512vl", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile"};
  EXPECT_EQ(BlasCoreCandidates(sapphire),
            (std::vector<std::string>{"Prescott", "Nehalem", "Sandybridge", "Haswell", "SkylakeX",
                                      "Cooperlake", "SapphireRapids"}));
  EXPECT_EQ(BlasCoresToTry(sapphire),
            (std::vector<std::string>{"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids"}));
  // Zen 4: AVX-512 with BF16, no AMX.
  std::vector<std::string> zen4 = sapphire;
  zen4.resize(zen4.size() - 3);
  EXPECT_EQ(BlasCoresToTry(zen4), (std::vector<std::string>{"Haswell", "SkylakeX", "Cooperlake"}));
  EXPECT_EQ(BlasCoresToTry({"pni", "sse4_2"}), (std::vector<std::string>{"Prescott", "Nehalem"}));
  EXPECT_TRUE(BlasCoreCandidates({"neon", "asimd"}).empty());
}

StackTrial Trial(const std::string& requested, const std::string& used, double gflops,
                 double error = 1e-7) {
  StackTrial t;
  t.requested = requested;
  t.used = used;
  t.rate = gflops * 1e9;
  t.max_relative_error = error;
  return t;
}

StackDecision DecideBlasCore(const StackTrial& installed, const std::vector<StackTrial>& others) {
  return DecideStackSetting(BlasCoreSetting(), installed, others);
}

google::protobuf::RepeatedPtrField<v1::StackFinding> Findings(const StackDecision& d) {
  google::protobuf::RepeatedPtrField<v1::StackFinding> findings;
  for (const v1::StackFinding& f : d.findings) *findings.Add() = f;
  return findings;
}

TEST(DecideBlasCoreTest, PrescottFallbackIsReplacedByTheFastestCorrectCore) {
  // The Xeon: OpenBLAS 0.3.21 falls back to Prescott.
  const StackDecision d =
      DecideBlasCore(Trial("", "Prescott", 63),
                     {Trial("Haswell", "Haswell", 180), Trial("SkylakeX", "SkylakeX", 258),
                      Trial("Cooperlake", "Cooperlake", 260, /*error=*/0.3),
                      Trial("SapphireRapids", "Prescott", 63)});
  EXPECT_EQ(d.chosen, "SkylakeX");
  EXPECT_EQ(d.as_installed, "Prescott");
  EXPECT_NEAR(d.speedup_over_installed, 258.0 / 63, 1e-9);
  ASSERT_EQ(d.findings.size(), 5u);
  EXPECT_TRUE(d.findings[0].as_installed());
  EXPECT_FALSE(d.findings[0].chosen());
  EXPECT_TRUE(d.findings[2].chosen());
  // The fastest trial computed wrong results: never chosen, and said why.
  EXPECT_FALSE(d.findings[3].correct());
  EXPECT_NE(d.findings[3].note().find("wrong results"), std::string::npos) << d.findings[3].note();
  // A name this OpenBLAS does not know fell back to its own pick.
  EXPECT_FALSE(d.findings[4].correct());
  EXPECT_NE(d.findings[4].note().find("not a core this OpenBLAS knows"), std::string::npos);

  EXPECT_EQ(platform::SlowStackCondition(Findings(d), "blas_core", "Prescott"),
            "BLAS runs Prescott kernels; this CPU supports SkylakeX (4.1x faster fp32 GEMM "
            "measured)");
  // A process that ran the chosen core is not flagged; one that does not
  // say is taken to run the installed core.
  EXPECT_EQ(platform::SlowStackCondition(Findings(d), "blas_core", "SkylakeX"), std::nullopt);
  EXPECT_NE(platform::SlowStackCondition(Findings(d), "blas_core", ""), std::nullopt);
  EXPECT_EQ(platform::SlowStackCondition(Findings(d), "aten_capability", "avx2"), std::nullopt);
}

TEST(DecideBlasCoreTest, NoiseDoesNotFlipTheInstalledChoice) {
  // 2 % faster is within the noise: the installed core stays, no flag.
  const StackDecision d =
      DecideBlasCore(Trial("", "Cooperlake", 200), {Trial("SkylakeX", "SkylakeX", 204)});
  EXPECT_EQ(d.chosen, "");
  EXPECT_TRUE(d.findings[0].chosen());
  EXPECT_EQ(platform::SlowStackCondition(Findings(d), "blas_core", "Cooperlake"), std::nullopt);
}

TEST(DecideBlasCoreTest, AWrongInstalledCoreIsReplacedEvenBySlowerCorrectOne) {
  const StackDecision d = DecideBlasCore(Trial("", "SkylakeX", 250, /*error=*/1e-2),
                                         {Trial("Haswell", "Haswell", 180)});
  EXPECT_EQ(d.chosen, "Haswell");
  EXPECT_FALSE(d.findings[0].correct());
}

TEST(DecideBlasCoreTest, CrashedTrialsAreFindingsNotChoices) {
  StackTrial crashed;
  crashed.requested = "SapphireRapids";
  crashed.error = "trial died of signal 4 (illegal instruction)";
  const StackDecision d = DecideBlasCore(Trial("", "Haswell", 100), {crashed});
  EXPECT_EQ(d.chosen, "");
  ASSERT_EQ(d.findings.size(), 2u);
  EXPECT_FALSE(d.findings[1].correct());
  EXPECT_EQ(d.findings[1].note(), "trial died of signal 4 (illegal instruction)");
}

TEST(StackTrialJsonTest, RoundTrips) {
  const StackTrial t = Trial("SkylakeX", "SkylakeX", 201.5, 9.5e-8);
  absl::StatusOr<StackTrial> back = ParseStackTrialJson(StackTrialJson(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->used, "SkylakeX");
  EXPECT_DOUBLE_EQ(back->rate, 201.5e9);
  EXPECT_DOUBLE_EQ(back->max_relative_error, 9.5e-8);
  EXPECT_FALSE(ParseStackTrialJson("not json").ok());
}

TEST(AtenCapabilityTest, CandidatesByCpuFlags) {
  const std::vector<std::string> zen4 = {"pni",      "sse4_2",     "avx",      "avx2",
                                         "fma",      "avx512f",    "avx512bw", "avx512dq",
                                         "avx512vl", "avx512_bf16"};
  EXPECT_EQ(AtenCapabilityCandidates(zen4),
            (std::vector<std::string>{"default", "avx2", "avx512"}));
  EXPECT_EQ(AtenCapabilitiesToTry(zen4), (std::vector<std::string>{"avx2", "avx512"}));
  EXPECT_EQ(AtenCapabilitiesToTry({"pni", "avx", "avx2", "fma"}),
            (std::vector<std::string>{"avx2"}));
  // No AVX2: only the default kernels, tried as the only choice.
  EXPECT_EQ(AtenCapabilitiesToTry({"pni", "avx"}), (std::vector<std::string>{"default"}));
  EXPECT_TRUE(AtenCapabilityCandidates({"asimd"}).empty());
  EXPECT_EQ(AtenCapabilityName(" NO AVX"), "default");
  EXPECT_EQ(AtenCapabilityName("AVX512"), "avx512");
  EXPECT_EQ(AtenCapabilityName("AVX2"), "avx2");
}

TEST(AtenCapabilityTest, FasterCorrectCapabilityIsChosenAndTheInstalledOneFlagged) {
  // LibTorch 1.13 picks AVX2 on an AVX-512 CPU; AVX-512 measured 1.2x faster.
  const StackDecision d =
      DecideStackSetting(AtenCapabilitySetting(), Trial("", "avx2", 10),
                         {Trial("avx2", "avx2", 10), Trial("avx512", "avx512", 12)});
  EXPECT_EQ(d.chosen, "avx512");
  ASSERT_EQ(d.findings.size(), 2u);  // the installed value needs no second trial
  EXPECT_EQ(d.findings[0].component(), "aten_capability");
  EXPECT_EQ(platform::SlowStackCondition(Findings(d), "aten_capability", "avx2"),
            "ATen runs avx2 kernels; this CPU supports avx512 (1.2x faster fp32 elementwise "
            "measured)");
  EXPECT_EQ(platform::SlowStackCondition(Findings(d), "aten_capability", "AVX512"), std::nullopt);
  // A capability whose kernels compute wrong results is never chosen.
  const StackDecision wrong = DecideStackSetting(AtenCapabilitySetting(), Trial("", "avx2", 10),
                                                 {Trial("avx512", "avx512", 14, 0.01)});
  EXPECT_EQ(wrong.chosen, "");
  EXPECT_NE(wrong.findings[1].note().find("wrong results: fp32 elementwise error"),
            std::string::npos)
      << wrong.findings[1].note();
  // LibTorch ignores a value it does not take and runs its own.
  const StackDecision unknown = DecideStackSetting(AtenCapabilitySetting(), Trial("", "avx2", 10),
                                                   {Trial("avx512", "avx2", 10)});
  EXPECT_NE(unknown.findings[1].note().find("not a capability this LibTorch takes"),
            std::string::npos);
}

TEST(StackSettingValueTest, NamesTheFlagAndWhatIsAllowed) {
  const platform::StackSettingInfo& aten = *platform::FindStackSettingInfo("aten_capability");
  EXPECT_TRUE(platform::ValidateStackValue(aten, "avx512", "x").ok());
  EXPECT_TRUE(platform::ValidateStackValue(aten, "as-installed", "x").ok());
  EXPECT_EQ(platform::ValidateStackValue(aten, "avx1024", "stack.aten_capability[1]").message(),
            "stack.aten_capability[1]: 'avx1024' is not auto, as-installed or default, avx2 or "
            "avx512");
  const platform::StackSettingInfo& blas = *platform::FindStackSettingInfo("blas_core");
  EXPECT_TRUE(platform::ValidateStackValue(blas, "SapphireRapids", "x").ok());
  EXPECT_FALSE(platform::ValidateStackValue(blas, "Sky lake", "x").ok());
  EXPECT_EQ(platform::FindStackSettingInfo("omp_threads"), nullptr);
}

TEST(StackDecisionCacheTest, WritesAndReadsBack) {
  const std::string dir =
      testing::TempDir() + "/blas-cache-" + std::to_string(::getpid()) + "/nested";
  const StackDecision d =
      DecideBlasCore(Trial("", "Prescott", 60), {Trial("Haswell", "Haswell", 180)});
  const std::string key = StackDoctorCacheKey("Example CPU", "OpenBLAS 0.3.21", "");
  EXPECT_NE(key, StackDoctorCacheKey("Example CPU", "OpenBLAS 0.3.26", ""));
  EXPECT_FALSE(ReadCachedStackDecision(dir, BlasCoreSetting(), key).ok());
  ASSERT_TRUE(WriteCachedStackDecision(dir, BlasCoreSetting(), key, d).ok());
  // Each setting has a cache of its own.
  EXPECT_FALSE(ReadCachedStackDecision(dir, AtenCapabilitySetting(), key).ok());
  absl::StatusOr<StackDecision> back = ReadCachedStackDecision(dir, BlasCoreSetting(), key);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->chosen, "Haswell");
  EXPECT_EQ(back->as_installed, "Prescott");
  EXPECT_NEAR(back->speedup_over_installed, 3.0, 1e-9);
  EXPECT_EQ(back->findings.size(), 2u);
}

}  // namespace
}  // namespace paradnn::runner
