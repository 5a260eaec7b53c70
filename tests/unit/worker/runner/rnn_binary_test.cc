// The RNN family through the built paradnn-runner (from $PARADNN_BIN_DIR).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/worker/runner/run_runner.h"

namespace paradnn::runner {
namespace {

TEST(RnnBinaryTest, DescribePrintsTheLstmCounts) {
  // L=2, E=64, T=10, V=100, B=8.
  const RunnerRun r = RunRunner(
      "--family rnn --cell lstm --layer 2 --embed 64 --length 10 --vocab 100 --batch 8 --describe");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const int64_t params = 100 * 64 + 2 * 4 * (2 * 64 * 64 + 2 * 64) + 64 * 100 + 100;
  const int64_t macs = 10 * (2 * 4 * 2 * 64 * 64 + 64 * 100);
  EXPECT_EQ(j.at("params").get<int64_t>(), params);
  EXPECT_EQ(j.at("macs_per_example").get<int64_t>(), macs);
  EXPECT_DOUBLE_EQ(j.at("model_flops").get<double>(), 6.0 * macs * 8);
  EXPECT_GT(j.at("bytes_per_step").get<double>(), 0);
  EXPECT_GT(j.at("peak_memory_estimate_bytes").get<double>(), 0);
  EXPECT_EQ(j.at("config").at("options").at("cell").get<std::string>(), "lstm");
}

TEST(RnnBinaryTest, ShortMeasurementOfEveryCellIsOk) {
  for (const char* cell : {"rnn", "lstm", "gru"}) {
    SCOPED_TRACE(cell);
    ExpectShortMeasurementOk(std::string("--family rnn --cell ") + cell +
                             " --layer 1 --embed 16 --length 5 --vocab 32 --batch 4");
  }
}

TEST(RnnBinaryTest, UnknownCellIsAUsageErrorNamingTheFlag) {
  ExpectUsageErrorNaming(
      "--family rnn --cell transformer --layer 1 --embed 8 --length 4 --vocab 8 --batch 2",
      {"--cell", "rnn|lstm|gru"});
}

}  // namespace
}  // namespace paradnn::runner
