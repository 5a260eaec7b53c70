#include "client/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "client/commands.h"
#include "common/human_units.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every value each hyper-parameter (integer or option) takes in `spec`.
std::map<std::string, std::set<std::string>> ValuesByKey(const v1::SweepSpec& spec) {
  absl::StatusOr<std::vector<v1::ModelConfig>> configs =
      model::ExpandSweep(spec, model::kDefaultMaxJobs);
  EXPECT_TRUE(configs.ok()) << configs.status();
  std::map<std::string, std::set<std::string>> values;
  if (!configs.ok()) return values;
  for (const v1::ModelConfig& c : *configs) {
    for (const auto& [key, value] : c.params()) values[key].insert(std::to_string(value));
    for (const auto& [key, value] : c.options()) values[key].insert(value);
  }
  return values;
}

std::set<std::string> Set(std::initializer_list<int64_t> values) {
  std::set<std::string> out;
  for (int64_t v : values) out.insert(std::to_string(v));
  return out;
}

TEST(PresetsTest, NamesAndOrder) {
  std::vector<std::string> names;
  for (const Preset& preset : Presets()) names.emplace_back(preset.name);
  EXPECT_THAT(names, ElementsAre("quick", "paper-fc", "paper-cnn-bottleneck", "paper-cnn-residual",
                                 "paper-rnn", "paper-lstm", "paper-gru"));
  EXPECT_EQ(AllowedPresets(),
            "quick|paper-fc|paper-cnn-bottleneck|paper-cnn-residual|paper-rnn|paper-lstm|"
            "paper-gru");
  ASSERT_NE(FindPreset("paper-fc"), nullptr);
  EXPECT_EQ(FindPreset("paper-fc")->path, "examples/presets/paper-fc.yaml");
  EXPECT_EQ(FindPreset("quick")->path, "examples/quick.yaml");
  EXPECT_EQ(FindPreset("paper-FC"), nullptr);
}

TEST(PresetsTest, JobCountsAreThePapers) {
  const std::map<std::string, int64_t> expected = {
      {"quick", 12},
      {"paper-fc", 6 * 9 * 4 * 5 * 9},              // 9720
      {"paper-cnn-bottleneck", 8 * 3 * 3 * 3 * 5},  // 1080
      {"paper-cnn-residual", 8 * 3 * 3 * 3 * 5},
      {"paper-rnn", 4 * 3 * 3 * 5 * 4},  // 720
      {"paper-lstm", 4 * 3 * 3 * 5 * 4},
      {"paper-gru", 4 * 3 * 3 * 5 * 4},
  };
  for (const Preset& preset : Presets()) {
    SCOPED_TRACE(std::string(preset.name));
    absl::StatusOr<v1::SweepSpec> spec = LoadPreset(preset.name, model::kDefaultMaxJobs);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->name(), preset.name);  // the file's name: matches its preset name
    EXPECT_EQ(model::CountConfigurations(*spec), expected.at(std::string(preset.name)));
    EXPECT_EQ(spec->source_text(), preset.text);
    const std::string summary = PresetSummary(preset);
    EXPECT_FALSE(summary.empty());
    EXPECT_EQ(summary.back(), '.') << summary;
    if (preset.name != "quick") {
      EXPECT_THAT(summary, HasSubstr("configurations")) << summary;
    }
  }
  EXPECT_EQ(model::CountConfigurations(*LoadPreset("paper-fc", 0)), 9720);
}

TEST(PresetsTest, RangesAreTable2) {
  absl::StatusOr<v1::SweepSpec> fc = LoadPreset("paper-fc", 0);
  ASSERT_TRUE(fc.ok()) << fc.status();
  auto v = ValuesByKey(*fc);
  EXPECT_EQ(v["layer"], Set({4, 8, 16, 32, 64, 128}));
  EXPECT_EQ(v["node"], Set({32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(v["input"], Set({2000, 4000, 6000, 8000}));
  EXPECT_EQ(v["output"], Set({200, 400, 600, 800, 1000}));
  EXPECT_EQ(v["batch"], Set({64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(v.size(), 5u);

  for (const char* fn : {"bottleneck", "residual"}) {
    absl::StatusOr<v1::SweepSpec> cnn = LoadPreset(std::string("paper-cnn-") + fn, 0);
    ASSERT_TRUE(cnn.ok()) << cnn.status();
    EXPECT_EQ(cnn->family(), "cnn");
    v = ValuesByKey(*cnn);
    EXPECT_EQ(v["block"], Set({1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(v["filter"], Set({16, 32, 64}));
    EXPECT_EQ(v["image"], Set({200, 250, 300}));
    EXPECT_EQ(v["output"], Set({500, 1000, 1500}));
    EXPECT_EQ(v["batch"], Set({64, 128, 256, 512, 1024}));
    EXPECT_EQ(v["block_fn"], std::set<std::string>{fn});
    // What a tuned user runs on a CPU with oneDNN (and on CUDA).
    EXPECT_EQ(v["memory_format"], std::set<std::string>{"channels_last"});
    EXPECT_EQ(v.size(), 7u);
  }
  for (const char* cell : {"rnn", "lstm", "gru"}) {
    absl::StatusOr<v1::SweepSpec> rnn = LoadPreset(std::string("paper-") + cell, 0);
    ASSERT_TRUE(rnn.ok()) << rnn.status();
    EXPECT_EQ(rnn->family(), "rnn");
    v = ValuesByKey(*rnn);
    EXPECT_EQ(v["layer"], Set({1, 5, 9, 13}));
    EXPECT_EQ(v["embed"], Set({100, 500, 900}));
    EXPECT_EQ(v["length"], Set({10, 50, 90}));
    EXPECT_EQ(v["vocab"], Set({2, 8, 32, 128, 512}));
    EXPECT_EQ(v["batch"], Set({16, 64, 256, 1024}));
    EXPECT_EQ(v["cell"], std::set<std::string>{cell});
    EXPECT_EQ(v.size(), 6u);
  }
}

TEST(PresetsTest, EmbeddedTextEqualsTheFilesInTheRepository) {
  const char* source_dir = std::getenv("PARADNN_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "PARADNN_SOURCE_DIR is not set (run through ctest)";
  const std::filesystem::path root(source_dir);
  for (const Preset& preset : Presets()) {
    std::ifstream in(root / std::string(preset.path), std::ios::binary);
    ASSERT_TRUE(in) << preset.path;
    std::ostringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), preset.text) << preset.path << " changed; rebuild to embed it";
    EXPECT_EQ(std::filesystem::path(std::string(preset.path)).stem().string(), preset.name);
  }
  // Every file in examples/presets/ is a preset.
  for (const auto& entry : std::filesystem::directory_iterator(root / "examples/presets")) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_NE(FindPreset(entry.path().stem().string()), nullptr)
        << entry.path() << " is not embedded; add it to PARADNN_PRESET_FILES";
  }
}

TEST(PresetsTest, UnknownPresetNamesTheChoices) {
  absl::StatusOr<v1::SweepSpec> spec = LoadPreset("paper-cnn", 0);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()),
              StartsWith("--preset: 'paper-cnn' is not a preset; one of quick|paper-fc|"));
  // The job cap applies to presets as to files.
  spec = LoadPreset("paper-fc", 1000);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("sweep expands to 9720 configurations; the limit is 1000"));
}

TEST(LoadSweepTest, FileOrPresetAndTheOomFlag) {
  absl::StatusOr<v1::SweepSpec> spec = LoadSweep({"", "quick", false}, 0);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->run_predicted_oom());
  spec = LoadSweep({"", "paper-lstm", true}, 0);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->run_predicted_oom());
  EXPECT_EQ(LoadSweep({"", "", false}, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadSweep({"a.yaml", "quick", false}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(LoadSweepTest, SubmittedLineShowsTheEstimates) {
  v1::SubmitSweepResponse response;
  response.set_sweep_id(3);
  response.set_jobs(9720);
  response.set_total_model_flops(1.234e15);
  response.set_min_params(170000);
  response.set_max_params(520000000);
  response.set_max_peak_memory_estimate_bytes(31.2 * (1 << 30));
  EXPECT_EQ(FormatSubmitted("paper-fc", response),
            "submitted sweep 3 (paper-fc): 9720 jobs\n"
            "  model FLOPs per step, all jobs: 1.23P; parameters 170k .. 520M; largest memory "
            "estimate 31.2 GiB\n");
  EXPECT_EQ(common::HumanBytes(900), "900 bytes");
  EXPECT_EQ(common::HumanBytes(1536), "1.5 KiB");
}

}  // namespace
}  // namespace paradnn::client
