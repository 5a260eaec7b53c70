// The tuning analysis end to end (Analyzer over a real SQLite file): sweeps
// that vary the thread settings, stored as `paradnn tune`'s search stores
// them (stack.threads, or params intra_op_threads / inter_op_threads, in
// interleaved repeat rounds, each result with the counts it ran), and the
// paper's three findings per family with the measurements behind them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/unit/server/analysis/analyzer_test_support.h"

namespace paradnn::server::analysis {
namespace {

using ::testing::HasSubstr;

// One setting of one configuration: what the sweep asked for and what ran.
struct TunedSetting {
  std::string threads;  // stack.threads; "" for a sweep of thread params
  int32_t intra = 1;
  int32_t inter = 1;
  double step_s = 0;  // before the round's jitter
};

// One configuration and its settings.
struct TunedConfig {
  std::string family;
  std::map<std::string, int64_t> params;
  std::vector<TunedSetting> settings;
  bool jitter = true;  // false: every setting of a round equally fast or slow
};

// A narrow FC (width 1).
std::map<std::string, int64_t> NarrowFc(int64_t batch) {
  return {{"layer", 4}, {"node", 64}, {"input", 100}, {"output", 10}, {"batch", batch}};
}

// Inception with 4 branches per block: width (2 + 2·2·4) / (2 + 2·2) = 3.
std::map<std::string, int64_t> WideInception() {
  return {{"batch", 16},  {"block", 2},  {"branches", 4},
          {"filter", 16}, {"image", 64}, {"output", 100}};
}

class TuningAnalyzerTest : public AnalyzerTest {
 protected:
  static constexpr int kRounds = 3;

  // One sweep of `configs`, every setting once per round, rounds
  // interleaved as a tune search runs them; each run's step time off by a
  // percent or so from round to round, differently per setting, so that
  // the paired verdicts have a spread to judge.
  int64_t StoreTuneSweep(const std::vector<TunedConfig>& configs) {
    v1::SweepSpec spec;
    spec.set_name("tune-search");
    spec.set_family(configs.front().family);
    spec.set_device("cpu");
    std::vector<db::NewJob> jobs;
    std::vector<v1::Measurement> measurements;
    for (int round = 0; round < kRounds; ++round) {
      for (const TunedConfig& config : configs) {
        for (size_t i = 0; i < config.settings.size(); ++i) {
          const TunedSetting& setting = config.settings[i];
          db::NewJob& job = jobs.emplace_back();
          job.config.set_family(config.family);
          job.config.set_precision("float32");
          job.config.set_optimizer("rmsprop");
          for (const auto& [key, value] : config.params) {
            (*job.config.mutable_params())[key] = value;
          }
          if (setting.threads.empty()) {
            (*job.config.mutable_params())["intra_op_threads"] = setting.intra;
            (*job.config.mutable_params())["inter_op_threads"] = setting.inter;
          } else {
            (*job.config.mutable_stack())["threads"] = setting.threads;
          }
          job.device = "cpu";
          job.ordinal = static_cast<int32_t>(jobs.size() - 1);
          job.repeat = round;
          const int shift = config.jitter ? round + static_cast<int>(i) : round;
          const double jitter = 1 + 0.01 * (shift % 3 - 1);
          measurements.push_back(Measured(setting, setting.step_s * jitter));
        }
      }
    }
    absl::StatusOr<int64_t> sweep =
        db::SweepStore(database_.get()).CreateSync(spec, std::move(jobs), kNow);
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    db::JobStore job_store(database_.get());
    db::ResultStore result_store(database_.get());
    for (const v1::Measurement& m : measurements) {  // leased in ordinal order
      absl::StatusOr<std::optional<db::Lease>> lease =
          job_store.LeaseNextSync("cpu", "w0", kNow, kNow + 60'000);
      EXPECT_TRUE(lease.ok() && lease->has_value());
      if (!lease.ok() || !lease->has_value()) return 0;
      absl::StatusOr<db::StoreOutcome> stored = result_store.StoreSync(
          (*lease)->job_id, (*lease)->attempt_id, "w0", cpu_platform_, m, kNow);
      EXPECT_TRUE(stored.ok()) << stored.status();
    }
    return sweep.ok() ? *sweep : 0;
  }

  static v1::Measurement Measured(const TunedSetting& setting, double step_s) {
    v1::Measurement m;
    m.set_outcome(v1::OK);
    m.mutable_stats()->set_median_s(step_s);
    m.mutable_stats()->set_steps(10);
    m.set_examples_per_sec(16 / step_s);
    m.set_intra_op_threads(setting.intra);
    m.set_inter_op_threads(setting.inter);
    return m;
  }

  absl::StatusOr<v1::TuningResponse> Tune(int64_t sweep) {
    v1::AnalyzeRequest request;
    request.mutable_selection()->add_sweep_ids(sweep);
    request.mutable_tuning();
    absl::StatusOr<v1::AnalyzeResponse> response = Analyze(request);
    if (!response.ok()) return response.status();
    return response->tuning();
  }

  // The finding `key` for `family`; fails the test when there is none.
  static const v1::TuningFinding* FindingOf(const v1::TuningResponse& tuning,
                                            const std::string& key, const std::string& family) {
    for (const v1::TuningFinding& f : tuning.findings()) {
      if (f.key() == key && f.family() == family) return &f;
    }
    ADD_FAILURE() << "no finding " << key << " for " << family;
    return nullptr;
  }

  static constexpr int64_t kNow = 1'700'000'000'000;
};

TEST_F(TuningAnalyzerTest, NarrowFcFastestInOnePoolOnEveryCoreAgrees) {
  const int64_t sweep = StoreTuneSweep({{"fc",
                                         NarrowFc(64),
                                         {{"intra=2,inter=1", 2, 1, 0.010},
                                          {"libtorch", 1, 1, 0.018},
                                          {"tensorflow", 2, 2, 0.013},
                                          {"intra=1,inter=2", 1, 2, 0.020}}}});
  absl::StatusOr<v1::TuningResponse> tuning = Tune(sweep);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->metric(), "step_time");
  ASSERT_EQ(tuning->configs_size(), 1);
  const v1::TuningConfig& config = tuning->configs(0);
  EXPECT_THAT(config.config(), HasSubstr("fc batch=64 input=100 layer=4 node=64"));
  EXPECT_THAT(config.config(), ::testing::Not(HasSubstr("threads")));
  ASSERT_TRUE(config.has_width());
  EXPECT_DOUBLE_EQ(config.width(), 1);
  EXPECT_EQ(config.max_intra_op_threads(), 2);
  EXPECT_EQ(config.best_setting(), "intra=2,inter=1");
  EXPECT_NEAR(config.best_value(), 0.010, 1e-4);
  EXPECT_EQ(config.one_pool_setting(), "intra=2,inter=1");
  EXPECT_EQ(config.pools_setting(), "tensorflow");
  EXPECT_NEAR(config.pool_gain(), 0.010 / 0.013, 0.01);
  EXPECT_EQ(config.pools_verdict(), "slower");  // several pools are slower here
  ASSERT_EQ(config.settings_size(), 4);
  EXPECT_EQ(config.settings(3).setting(), "intra=1,inter=2");
  EXPECT_EQ(config.settings(3).runs(), kRounds);

  const v1::TuningFinding* narrow = FindingOf(*tuning, "narrow_one_pool", "fc");
  ASSERT_NE(narrow, nullptr);
  EXPECT_EQ(narrow->applies(), 1);
  EXPECT_EQ(narrow->agree(), 1);
  EXPECT_EQ(narrow->statement(), "this host agrees in 1 of 1 fc configurations");
  ASSERT_EQ(narrow->checks_size(), 1);
  EXPECT_EQ(narrow->checks(0).outcome(), "agrees");
  EXPECT_THAT(narrow->checks(0).detail(), HasSubstr("best: intra=2,inter=1 (intra-op 2"));
  // Neither wide nor several batches: only the narrow finding applies.
  EXPECT_EQ(tuning->findings_size(), 1);
}

TEST_F(TuningAnalyzerTest, WideInceptionFasterWithSeveralPoolsAgreesFromThreadParams) {
  // A sweep of params intra_op_threads / inter_op_threads: the settings
  // are named by the counts that ran.
  const int64_t sweep = StoreTuneSweep(
      {{"inception", WideInception(), {{"", 2, 1, 0.020}, {"", 1, 2, 0.014}, {"", 1, 1, 0.030}}}});
  absl::StatusOr<v1::TuningResponse> tuning = Tune(sweep);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  ASSERT_EQ(tuning->configs_size(), 1);
  const v1::TuningConfig& config = tuning->configs(0);
  EXPECT_THAT(config.config(), ::testing::Not(HasSubstr("inter_op_threads")));
  EXPECT_DOUBLE_EQ(config.width(), 3);
  EXPECT_EQ(config.best_setting(), "intra=1,inter=2");
  EXPECT_EQ(config.one_pool_setting(), "intra=2,inter=1");
  EXPECT_NEAR(config.pool_gain(), 0.020 / 0.014, 0.02);
  EXPECT_EQ(config.pools_verdict(), "faster");
  const v1::TuningFinding* wide = FindingOf(*tuning, "wide_pools", "inception");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->applies(), 1);
  EXPECT_EQ(wide->agree(), 1);
  EXPECT_EQ(wide->finding(), "wide models train fastest with several pools");
  EXPECT_THAT(wide->checks(0).detail(), HasSubstr("gain 1.43x: faster"));
}

TEST_F(TuningAnalyzerTest, SmallBatchGainsMoreFromPoolsAndNarrowDisagreementIsCounted) {
  const int64_t sweep = StoreTuneSweep({
      // batch 16: pools 1.5x faster (a narrow model that disagrees)
      {"fc", NarrowFc(16), {{"intra=2,inter=1", 2, 1, 0.015}, {"intra=1,inter=2", 1, 2, 0.010}}},
      // batch 512: the same either way
      {"fc",
       NarrowFc(512),
       {{"intra=2,inter=1", 2, 1, 0.100}, {"intra=1,inter=2", 1, 2, 0.100}},
       /*jitter=*/false},
  });
  absl::StatusOr<v1::TuningResponse> tuning = Tune(sweep);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  ASSERT_EQ(tuning->configs_size(), 2);
  EXPECT_NEAR(tuning->configs(0).pool_gain(), 1.5, 0.02);  // batch=16 sorts first
  EXPECT_DOUBLE_EQ(tuning->configs(1).pool_gain(), 1.0);

  const v1::TuningFinding* batch = FindingOf(*tuning, "small_batch_pools", "fc");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->applies(), 1);
  EXPECT_EQ(batch->agree(), 1);
  EXPECT_EQ(batch->statement(), "this host agrees in 1 of 1 fc batch groups");
  EXPECT_THAT(batch->checks(0).config(), HasSubstr(", batch 16 vs 512"));
  EXPECT_THAT(batch->checks(0).config(), ::testing::Not(HasSubstr("batch=")));
  EXPECT_THAT(batch->checks(0).detail(),
              HasSubstr("pool gain 1.50x at batch 16, 1.00x at batch 512; the gains' ratio "
                        "paired by round: slower"));

  const v1::TuningFinding* narrow = FindingOf(*tuning, "narrow_one_pool", "fc");
  ASSERT_NE(narrow, nullptr);
  EXPECT_EQ(narrow->applies(), 2);
  EXPECT_EQ(narrow->agree(), 0);
  EXPECT_EQ(narrow->disagree(), 1);
  EXPECT_EQ(narrow->no_difference(), 1);
  EXPECT_EQ(narrow->statement(),
            "this host agrees in 0 of 2 fc configurations; disagrees in 1; no difference "
            "detected in 1");
  EXPECT_EQ(narrow->checks(0).outcome(), "disagrees");
  EXPECT_THAT(narrow->checks(0).detail(), HasSubstr(": faster"));
}

TEST_F(TuningAnalyzerTest, WideModelFasterInOnePoolDisagrees) {
  const int64_t sweep = StoreTuneSweep(
      {{"inception", WideInception(), {{"intel", 2, 1, 0.010}, {"guideline", 1, 2, 0.016}}}});
  absl::StatusOr<v1::TuningResponse> tuning = Tune(sweep);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  const v1::TuningFinding* wide = FindingOf(*tuning, "wide_pools", "inception");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->disagree(), 1);
  EXPECT_EQ(wide->checks(0).outcome(), "disagrees");
  EXPECT_EQ(tuning->configs(0).pools_verdict(), "slower");
}

TEST_F(TuningAnalyzerTest, RefusesSweepsThatDoNotVaryTheThreadSettings) {
  const int64_t sweep = StoreTuneSweep({{"fc", NarrowFc(16), {{"libtorch", 1, 1, 0.01}}},
                                        {"fc", NarrowFc(32), {{"libtorch", 1, 1, 0.02}}}});
  absl::StatusOr<v1::TuningResponse> tuning = Tune(sweep);
  ASSERT_FALSE(tuning.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(tuning.status()));
  EXPECT_EQ(tuning.status().message(),
            absl::StrCat("analyze tuning needs results that vary stack.threads or "
                         "intra_op_threads/inter_op_threads; sweep ",
                         sweep, " has none — paradnn tune makes such sweeps"));
}

// Pool gains that differ by less than the rounds' noise are no agreement:
// 0.98x at batch 16 (the rounds' jitter moves it by 2 %) and 0.985x at 512.
TEST_F(TuningAnalyzerTest, BatchGainsWithinTheNoiseAreNoDifference) {
  const int64_t sweep = StoreTuneSweep({
      {"fc", NarrowFc(16), {{"intra=2,inter=1", 2, 1, 0.0150}, {"intra=1,inter=2", 1, 2, 0.0153}}},
      {"fc",
       NarrowFc(512),
       {{"intra=2,inter=1", 2, 1, 0.100}, {"intra=1,inter=2", 1, 2, 0.1015}},
       /*jitter=*/false},
  });
  absl::StatusOr<v1::TuningResponse> tuning = Tune(sweep);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  const v1::TuningFinding* batch = FindingOf(*tuning, "small_batch_pools", "fc");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->agree(), 0);
  EXPECT_EQ(batch->no_difference(), 1);
  EXPECT_EQ(batch->checks(0).outcome(), "no difference detected");
  EXPECT_EQ(batch->statement(),
            "this host agrees in 0 of 1 fc batch groups; no difference detected in 1");
}

// The large batch gaining more from pools is a disagreement, said as one.
TEST_F(TuningAnalyzerTest, LargeBatchGainingMoreFromPoolsDisagrees) {
  const int64_t sweep = StoreTuneSweep({
      {"fc", NarrowFc(16), {{"intra=2,inter=1", 2, 1, 0.015}, {"intra=1,inter=2", 1, 2, 0.015}}},
      {"fc",
       NarrowFc(512),
       {{"intra=2,inter=1", 2, 1, 0.150}, {"intra=1,inter=2", 1, 2, 0.100}},
       /*jitter=*/false},
  });
  absl::StatusOr<v1::TuningResponse> tuning = Tune(sweep);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  const v1::TuningFinding* batch = FindingOf(*tuning, "small_batch_pools", "fc");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->disagree(), 1);
  EXPECT_EQ(batch->checks(0).outcome(), "disagrees");
  EXPECT_THAT(batch->checks(0).detail(), HasSubstr("1.00x at batch 16, 1.50x at batch 512"));
}

}  // namespace
}  // namespace paradnn::server::analysis
