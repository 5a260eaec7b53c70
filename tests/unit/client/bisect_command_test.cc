// `paradnn bisect`'s input and output (client/bisect_command.h): the stacks'
// settings parsed and checked naming the flag, the plan checked against the
// sweep file, each measurement's sweep, the flags as CLI11 parses them, and
// the report.
#include "client/bisect_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/sweep_file.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kOneFc =
    "name: one-fc\nfamily: fc\nparams:\n  layer: 2\n  node: 64\n  input: 32\n  output: 8\n"
    "  batch: 16\n";

v1::SweepSpec Sweep(const std::string& text) {
  absl::StatusOr<v1::SweepSpec> spec = ParseSweepText(text, "f.yaml", 0);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : v1::SweepSpec();
}

BisectFlags ThreeSettings() {
  BisectFlags flags;
  flags.file = "f.yaml";
  flags.good = {"blas_core=Haswell,intra_op_threads=2"};
  flags.bad = {"blas_core=Prescott,intra_op_threads=1,env.OMP_WAIT_POLICY=passive"};
  return flags;
}

std::string SettingsError(const std::vector<std::string>& texts) {
  return std::string(ParseBisectSettings(texts, "--bad").status().message());
}

TEST(BisectSettingsTest, PairsOverCommasAndFlagsWithCommasInsideValues) {
  absl::StatusOr<std::map<std::string, std::string>> settings = ParseBisectSettings(
      {"blas_core=Prescott,intra_op_threads=1",
       "env.KMP_AFFINITY=granularity=fine,compact,1,0,env.OMP_WAIT_POLICY=passive",
       "env.MALLOC_ARENA_MAX=", "env.GOMP_CPU_AFFINITY=0,1,env.KMP_AFFINITY2=compact,fine=1"},
      "--bad");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->size(), 7u);
  // Only a setting's name after a comma starts a new pair.
  EXPECT_EQ(settings->at("env.GOMP_CPU_AFFINITY"), "0,1");
  EXPECT_EQ(settings->at("env.KMP_AFFINITY2"), "compact,fine=1");
  EXPECT_EQ(settings->at("blas_core"), "Prescott");
  EXPECT_EQ(settings->at("intra_op_threads"), "1");
  EXPECT_EQ(settings->at("env.KMP_AFFINITY"), "granularity=fine,compact,1,0");
  EXPECT_EQ(settings->at("env.OMP_WAIT_POLICY"), "passive");
  EXPECT_EQ(settings->at("env.MALLOC_ARENA_MAX"), "");  // unset in the runner
  absl::StatusOr<std::map<std::string, std::string>> none = ParseBisectSettings({""}, "--good");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(BisectSettingsTest, RefusalsNameTheFlagTheSettingAndWhatIsAllowed) {
  EXPECT_THAT(SettingsError({"blas_core"}), StartsWith("--bad: 'blas_core' is not NAME=VALUE"));
  EXPECT_THAT(
      SettingsError({"omp=4"}),
      StartsWith("--bad omp: not a setting bisect can switch; allowed: intra_op_threads, "
                 "inter_op_threads, blas_core, aten_capability, threads (libtorch, "
                 "intel, tensorflow, guideline or intra=T,inter=I[,pin=on|off][,replicas=P][,"
                 "cores=physical|logical][,numa=on|off] (T and I 1..1024, P 1..256)) or env.NAME "
                 "with NAME starting with OMP_"));
  EXPECT_THAT(SettingsError({"env.LD_PRELOAD=x"}),
              StartsWith("--bad env.LD_PRELOAD: LD_PRELOAD is not a performance variable"));
  EXPECT_THAT(SettingsError({"env.OMP_WAIT_POLICY=a b"}),
              StartsWith("--bad env.OMP_WAIT_POLICY: 'a b' is not an allowed value"));
  EXPECT_THAT(SettingsError({"intra_op_threads=0"}),
              StartsWith("--bad intra_op_threads: 0 is out of range"));
  EXPECT_THAT(SettingsError({"intra_op_threads=two"}),
              StartsWith("--bad intra_op_threads: 'two' is not an integer"));
  EXPECT_EQ(SettingsError({"blas_core=Zen", "blas_core=Haswell"}), "--bad blas_core: given twice");
  EXPECT_THAT(SettingsError({"blas_core=Zen,omp=4"}),
              StartsWith("--bad blas_core: 'Zen,omp=4' is not auto, as-installed or an OpenBLAS"));
  EXPECT_THAT(SettingsError({"aten_capability=avx1024"}),
              StartsWith("--bad aten_capability: 'avx1024' is not auto, as-installed or default"));
}

TEST(BisectPlanTest, TheStacksAndOptionsGoToTheRequest) {
  BisectFlags flags = ThreeSettings();
  flags.unmixable = {"blas_core"};
  flags.max_measurements = 40;
  absl::StatusOr<BisectPlan> plan = PlanBisect(flags, Sweep(kOneFc));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->base.name(), "one-fc");
  const v1::BisectRequest& request = plan->request;
  EXPECT_EQ(request.good().size(), 2u);
  EXPECT_EQ(request.bad().size(), 3u);
  EXPECT_EQ(request.bad().at("env.OMP_WAIT_POLICY"), "passive");
  EXPECT_EQ(request.max_measurements(), 40);
  EXPECT_EQ(request.reference_rounds(), 4);
  EXPECT_THAT(request.unmixable(), ::testing::ElementsAre("blas_core"));
  EXPECT_TRUE(request.measurements().empty());
}

std::string PlanError(const BisectFlags& flags, const std::string& text) {
  return std::string(PlanBisect(flags, Sweep(text)).status().message());
}

TEST(BisectPlanTest, RefusesWhatItCannotMeasureNamingTheFieldOrFlag) {
  const std::string one = kOneFc;
  EXPECT_THAT(PlanError(ThreeSettings(), one + "repeats: 3\n"), StartsWith("repeats: bisect"));
  EXPECT_THAT(PlanError(ThreeSettings(),
                        "name: two\nfamily: fc\nparams:\n  layer: 2\n  node: {values: [64, 128]}\n"
                        "  input: 32\n  output: 8\n  batch: 16\n"),
              StartsWith("FILE: the sweep expands to 2 configurations; bisect measures one"));
  EXPECT_THAT(PlanError(ThreeSettings(), one + "stack: {blas_core: Zen}\n"),
              StartsWith("stack.blas_core: set in the sweep file and in --good/--bad"));
  EXPECT_THAT(PlanError(ThreeSettings(), one + "run: {intra_op_threads: 2}\n"),
              StartsWith("params.intra_op_threads: set in the sweep file and in --good/--bad"));
  BisectFlags same;
  same.good = {"blas_core=Zen"};
  same.bad = {"blas_core=Zen"};
  EXPECT_THAT(PlanError(same, one), StartsWith("--good, --bad: the stacks do not differ"));
  BisectFlags unmixable = ThreeSettings();
  unmixable.unmixable = {"aten_capability"};
  EXPECT_EQ(PlanError(unmixable, one),
            "--unmixable aten_capability: not a setting the stacks differ in; they differ in "
            "blas_core, env.OMP_WAIT_POLICY, intra_op_threads");
  EXPECT_THAT(PlanError(ThreeSettings(), one + "device: cuda\n"),
              StartsWith("--good/--bad blas_core: stack settings choose CPU libraries' kernels"));
}

TEST(BisectMixSweepTest, AMixIsTheConfigurationWithItsSettingsMeasuredAfresh) {
  v1::BisectMix mix;
  mix.set_index(4);
  mix.add_from_bad("env.OMP_WAIT_POLICY");
  (*mix.mutable_settings())["blas_core"] = "Haswell";
  (*mix.mutable_settings())["intra_op_threads"] = "2";
  (*mix.mutable_settings())["env.OMP_WAIT_POLICY"] = "passive";
  const v1::SweepSpec spec = BisectMixSweep(Sweep(kOneFc), mix);
  EXPECT_EQ(spec.name(), "one-fc-bisect-5");
  EXPECT_TRUE(spec.run().fresh());
  EXPECT_TRUE(spec.source_text().empty());
  EXPECT_EQ(spec.params().at("intra_op_threads").value(), 2);
  EXPECT_EQ(spec.stack().at("blas_core").values(0), "Haswell");
  EXPECT_EQ(spec.stack().at("env.OMP_WAIT_POLICY").values(0), "passive");
  // Every measurement in a fresh runner, none in the zygote.
  EXPECT_EQ(spec.stack().at("env.OMP_DISPLAY_ENV").values(0), "false");
  EXPECT_TRUE(model::ValidateSweep(spec, 0).ok()) << model::ValidateSweep(spec, 0);
  EXPECT_EQ(model::CountConfigurations(spec), 1);
}

TEST(BisectCommandTest, FlagsRepeatAndTheFileMayComeAnywhere) {
  CLI::App app;
  BisectFlags flags;
  std::string format = "table";
  AddBisectCommand(app, &flags, &format);
  // CLI11 takes the arguments last first.
  app.parse(std::vector<std::string>{"json", "--format", "env.OMP_WAIT_POLICY=passive", "--bad",
                                     "blas_core=Prescott", "--bad", "f.yaml", "blas_core=Haswell",
                                     "--good", "bisect"});
  EXPECT_EQ(flags.file, "f.yaml");
  EXPECT_THAT(flags.good, ::testing::ElementsAre("blas_core=Haswell"));
  EXPECT_THAT(flags.bad,
              ::testing::ElementsAre("blas_core=Prescott", "env.OMP_WAIT_POLICY=passive"));
  EXPECT_EQ(format, "json");
  CLI::App missing;
  BisectFlags ignored;
  AddBisectCommand(missing, &ignored, &format);
  EXPECT_THROW(
      missing.parse(std::vector<std::string>{"blas_core=Zen", "--good", "f.yaml", "bisect"}),
      CLI::RequiredError);
}

// A finished search: blas_core found, three measurements.
v1::BisectResponse Found() {
  v1::BisectResponse result;
  result.add_differing("blas_core");
  result.add_differing("intra_op_threads");
  result.set_done(true);
  result.set_outcome("culprits found");
  result.add_culprits("blas_core");
  result.mutable_culprit_effect()->set_ratio(2.04);
  result.mutable_culprit_effect()->set_low(1.9);
  result.mutable_culprit_effect()->set_high(2.2);
  result.mutable_culprit_effect()->set_basis("rounds (pooled)");
  result.set_culprit_share(1.01);
  v1::BisectDecision* decision = result.add_decisions();
  decision->add_from_bad("blas_core");
  decision->set_carries(true);
  decision->set_clear(true);
  decision->set_share(1.01);
  decision->set_rounds(1);
  result.set_measurements(3);
  result.set_summary("blas_core carries the effect");
  return result;
}

std::vector<BisectMeasured> ThreeMeasured() {
  std::vector<BisectMeasured> measured(3);
  for (int i = 0; i < 3; ++i) {
    measured[i].mix.set_index(i);
    measured[i].sweep_id = 10 + i;
    measured[i].worker = "w1";
    measured[i].step_seconds = {0.05 * (i + 1)};
  }
  measured[1].mix.add_from_bad("blas_core");
  measured[1].mix.add_from_bad("intra_op_threads");
  measured[2].mix.add_from_bad("blas_core");
  measured[2].step_seconds.clear();
  measured[2].error = "ERROR";
  return measured;
}

TEST(BisectReportTest, TheTableSaysTheCulpritItsEffectAndEveryMeasurement) {
  v1::BisectRequest request;
  (*request.mutable_good())["blas_core"] = "Haswell";
  (*request.mutable_bad())["blas_core"] = "Prescott";
  (*request.mutable_bad())["intra_op_threads"] = "1";
  const std::string table =
      FormatBisectReport(Found(), ThreeMeasured(), request, OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("the stacks differ in 2 settings"));
  EXPECT_THAT(table, ContainsRegex("intra_op_threads +- +1\n"));
  EXPECT_THAT(table, HasSubstr("outcome: culprits found\nculprit: blas_core\n"));
  EXPECT_THAT(table, HasSubstr("2.04x [1.90x, 2.20x] (+104.0 %)"));
  EXPECT_THAT(table, HasSubstr("measurements: 3 (A 1, B 1, probes 1)"));
  EXPECT_THAT(table, ContainsRegex("A \\+ blas_core +failed: ERROR"));
  EXPECT_THAT(table, HasSubstr("100.000 ms"));

  const nlohmann::json json = nlohmann::json::parse(
      FormatBisectReport(Found(), ThreeMeasured(), request, OutputFormat::kJson));
  EXPECT_EQ(json["result"]["culprits"][0], "blas_core");
  EXPECT_EQ(json["result"]["outcome"], "culprits found");
  ASSERT_EQ(json["measurements"].size(), 3u);
  EXPECT_EQ(json["measurements"][1]["mix"], "B");
  EXPECT_DOUBLE_EQ(json["measurements"][1]["median_step_s"].get<double>(), 0.1);
  EXPECT_EQ(json["measurements"][2]["error"], "ERROR");
}

}  // namespace
}  // namespace paradnn::client
