#include "client/analyze_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "client/analysis_kinds.h"

namespace paradnn::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Parses `args` (after the program name) against `paradnn analyze KIND ...`.
struct ParsedAnalyze {
  AnalyzeFlags flags;
  std::string format = "table";
  std::string kind;
};

ParsedAnalyze Parse(std::vector<std::string> args) {
  ParsedAnalyze parsed;
  CLI::App app("test", "paradnn");
  CLI::App* analyze = app.add_subcommand("analyze");
  analyze->require_subcommand(1);
  AddAnalyzeKinds(analyze, &parsed.flags, &parsed.format);
  args.insert(args.begin(), "analyze");
  std::reverse(args.begin(), args.end());  // CLI11 takes them last to first
  app.parse(args);
  for (CLI::App* kind : analyze->get_subcommands()) parsed.kind = kind->get_name();
  return parsed;
}

// Which case each kind fills is analysis_kinds_test's; here, that every
// subcommand sends the one selection of its sweeps and filters.
TEST(AnalyzeFlagsTest, EverySubcommandSendsItsSweepsAsTheRequestsSelection) {
  int subcommands = 0;
  for (const AnalysisKind& kind : AnalysisKinds()) {
    if (kind.fill == nullptr) continue;
    ++subcommands;
    AnalyzeFlags flags;
    flags.sweep_ids = {3, 4};
    flags.where = {"precision=float32"};
    flags.include_predicted = true;
    absl::StatusOr<v1::AnalyzeRequest> request = BuildAnalyzeRequest(kind.name, flags);
    ASSERT_TRUE(request.ok()) << kind.name << ": " << request.status();
    EXPECT_THAT(request->selection().sweep_ids(), ElementsAre(3, 4)) << kind.name;
    EXPECT_EQ(request->selection().where().at("precision"), "float32") << kind.name;
    EXPECT_TRUE(request->selection().include_predicted()) << kind.name;
  }
  EXPECT_GE(subcommands, 6);  // heatmap, sensitivity, roofline, boxplot, speedup, scaling, ...
}

TEST(AnalyzeFlagsTest, AKindWithACommandOfItsOwnIsNotAnAnalyzeSubcommand) {
  absl::StatusOr<v1::AnalyzeRequest> request = BuildAnalyzeRequest("history", AnalyzeFlags{});
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(request.status().message()),
              HasSubstr("'history' is not an analysis of `analyze` (see `paradnn history`)"));
  EXPECT_THROW(Parse({"history", "1"}), CLI::ParseError);
}

TEST(AnalyzeFlagsTest, AnUnknownKindIsAnErrorNamingTheKinds) {
  absl::StatusOr<v1::AnalyzeRequest> request = BuildAnalyzeRequest("pareto", AnalyzeFlags{});
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(request.status().message()),
              HasSubstr("'pareto' is not an analysis; one of heatmap, sensitivity, roofline"));
}

TEST(AnalyzeFlagsTest, ParsedOptionsReachTheRequest) {
  ParsedAnalyze parsed = Parse({"heatmap", "7", "--metric", "gflops", "--x", "node", "--y", "batch",
                                "--panel", "precision", "--where", "layer=4", "--format", "csv"});
  EXPECT_EQ(parsed.kind, "heatmap");
  EXPECT_EQ(parsed.format, "csv");
  absl::StatusOr<v1::AnalyzeRequest> request = BuildAnalyzeRequest(parsed.kind, parsed.flags);
  ASSERT_TRUE(request.ok()) << request.status();
  const v1::HeatmapRequest& heatmap = request->heatmap();
  EXPECT_EQ(heatmap.metric(), "gflops");
  EXPECT_EQ(heatmap.x(), "node");
  EXPECT_EQ(heatmap.y(), "batch");
  EXPECT_EQ(heatmap.panel(), "precision");
  ASSERT_EQ(request->selection().sweep_ids_size(), 1);
  EXPECT_EQ(request->selection().sweep_ids(0), 7);
  EXPECT_EQ(request->selection().where().at("layer"), "4");
}

TEST(AnalyzeFlagsTest, SweepIdsMustBePositiveIntegers) {
  EXPECT_THROW(Parse({"roofline", "abc"}), CLI::ValidationError);
  EXPECT_THROW(Parse({"roofline", "0"}), CLI::ValidationError);
  EXPECT_THROW(Parse({"heatmap", "1", "--x", "node", "--y", "batch"}), CLI::RequiredError)
      << "heatmap needs --metric";
}

}  // namespace
}  // namespace paradnn::client
