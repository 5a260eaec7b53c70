#include "worker/runner/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::Precision;
namespace {

absl::StatusOr<RunnerCommand> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "paradnn-runner");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

std::vector<std::string> FcFlags() {
  return {"--family", "fc",   "--layer",  "4",   "--node",  "1024",
          "--input",  "2000", "--output", "200", "--batch", "256"};
}

void ExpectUsageError(std::vector<std::string> args, const std::string& starts_with) {
  auto cmd = Parse(args);
  ASSERT_FALSE(cmd.ok()) << "expected an error mentioning " << starts_with;
  EXPECT_EQ(cmd.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(cmd.status().message(), starts_with)) << cmd.status();
}

TEST(CliTest, StandaloneMeasurement) {
  std::vector<std::string> args = FcFlags();
  for (const char* a : {"--precision",
                        "bfloat16",
                        "--optimizer",
                        "sgd",
                        "--ci",
                        "0.05",
                        "--max_seconds",
                        "3",
                        "--warmup_steps",
                        "2",
                        "--min_steps",
                        "4",
                        "--max_steps",
                        "40",
                        "--intra_op_threads",
                        "2",
                        "--inter_op_threads",
                        "1",
                        "--seed",
                        "7",
                        "--json"}) {
    args.emplace_back(a);
  }
  auto cmd = Parse(args);
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->mode, RunnerMode::kMeasure);
  EXPECT_TRUE(cmd->json);
  const v1::ModelConfig& config = cmd->job.config();
  EXPECT_EQ(config.family(), "fc");
  EXPECT_EQ(config.params().at("layer"), 4);
  EXPECT_EQ(config.params().at("batch"), 256);
  EXPECT_EQ(config.precision(), "bfloat16");
  EXPECT_EQ(config.optimizer(), "sgd");
  const v1::RunSettings& s = cmd->job.settings();
  EXPECT_DOUBLE_EQ(s.ci(), 0.05);
  EXPECT_DOUBLE_EQ(s.max_seconds(), 3);
  EXPECT_EQ(s.warmup_steps(), 2);
  EXPECT_EQ(s.min_steps(), 4);
  EXPECT_EQ(s.max_steps(), 40);
  EXPECT_EQ(s.intra_op_threads(), 2);
  EXPECT_EQ(s.seed(), 7u);
  EXPECT_EQ(cmd->spec.precision, Precision::kBFloat16);
}

TEST(CliTest, DefaultsAndAliases) {
  auto cmd = Parse({"--family", "fc", "--layers", "2", "--nodes", "8", "--input", "4", "--output",
                    "3", "--batch", "2", "--max-seconds", "1"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->job.config().params().at("layer"), 2);
  EXPECT_EQ(cmd->job.config().params().at("node"), 8);
  EXPECT_EQ(cmd->job.config().precision(), "float32");
  EXPECT_EQ(cmd->job.config().optimizer(), "rmsprop");
  EXPECT_DOUBLE_EQ(cmd->job.settings().max_seconds(), 1);
  EXPECT_DOUBLE_EQ(cmd->job.settings().ci(), 0);  // 0 = default, applied by the harness
}

TEST(CliTest, OtherModes) {
  auto describe = Parse([] {
    auto a = FcFlags();
    a.emplace_back("--describe");
    return a;
  }());
  ASSERT_TRUE(describe.ok()) << describe.status();
  EXPECT_EQ(describe->mode, RunnerMode::kDescribe);

  auto job = Parse({"--job-stdin", "--log-level", "warn"});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->mode, RunnerMode::kJobStdin);
  EXPECT_EQ(job->log_level, "warn");

  auto platform = Parse({"--platform", "--framed"});
  ASSERT_TRUE(platform.ok()) << platform.status();
  EXPECT_EQ(platform->mode, RunnerMode::kPlatform);
  EXPECT_TRUE(platform->framed);

  auto calibrate = Parse({"--calibrate", "--framed"});
  ASSERT_TRUE(calibrate.ok()) << calibrate.status();
  EXPECT_EQ(calibrate->mode, RunnerMode::kCalibrate);
  EXPECT_TRUE(calibrate->framed);
  auto calibrate_json = Parse({"--calibrate"});
  ASSERT_TRUE(calibrate_json.ok()) << calibrate_json.status();
  EXPECT_FALSE(calibrate_json->framed);

  auto help = Parse({"--help"});
  ASSERT_TRUE(help.ok()) << help.status();
  EXPECT_EQ(help->mode, RunnerMode::kHelp);
  EXPECT_TRUE(absl::StrContains(help->text, "--family")) << help->text;

  auto version = Parse({"--version"});
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_TRUE(absl::StrContains(version->text, "paradnn-runner")) << version->text;
}

TEST(CliTest, UsageErrorsNameTheFlag) {
  auto with = [](std::vector<std::string> extra, const std::string& drop = "") {
    std::vector<std::string> args;
    const auto base = FcFlags();
    for (size_t i = 0; i < base.size(); i += 2) {
      if (base[i] == drop) continue;
      args.push_back(base[i]);
      args.push_back(base[i + 1]);
    }
    for (auto& e : extra) args.push_back(e);
    return args;
  };
  ExpectUsageError({"--family", "no_such_family", "--layer", "4"}, "--family");
  ExpectUsageError({"--family", "no_such_family", "--layer", "4"}, "allowed: allreduce|cnn|");
  ExpectUsageError({"--layer", "4"}, "--family");
  ExpectUsageError(with({}, "--batch"), "--batch");
  ExpectUsageError(with({"--layer", "0"}, "--layer"), "--layer");
  ExpectUsageError(with({"--layer=-3"}, "--layer"), "--layer");
  ExpectUsageError(with({"--node", "abc"}, "--node"), "--node");
  ExpectUsageError(with({"--precision", "fp8"}), "--precision");
  ExpectUsageError(with({"--optimizer", "adam"}), "--optimizer");
  ExpectUsageError(with({"--ci", "2"}), "--ci");
  ExpectUsageError(with({"--max_seconds", "0"}), "--max_seconds");
  ExpectUsageError(with({"--min_steps", "1"}), "--min_steps");
  ExpectUsageError(with({"--max_steps", "3"}), "--max_steps");
  ExpectUsageError(with({"--bogus"}), "--bogus");
  ExpectUsageError({"--job-stdin", "--layer", "4"}, "--layer");
  ExpectUsageError({"--job-stdin", "--platform"}, "--platform");
  ExpectUsageError({"--framed"}, "--framed");
  ExpectUsageError({"--platform", "--calibrate"}, "--calibrate");
  ExpectUsageError({"--calibrate", "--layer", "4"}, "--layer");
  ExpectUsageError({}, "--family");
}

}  // namespace
}  // namespace paradnn::runner
