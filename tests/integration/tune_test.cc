// `paradnn tune` end to end (issue 40): a private coordinator and the real
// worker and runner search the thread settings of a small FC, confirm the
// best beside the baselines in fresh rounds and print verdicts and the lines
// to copy; every setting ran as asked. And a sweep that sets thread counts
// itself is refused before anything starts.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "paradnn/v1/metrics.pb.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

// sweep id -> each stored result's Measurement.
std::multimap<int64_t, v1::Measurement> StoredMeasurements(const std::string& db_path) {
  std::multimap<int64_t, v1::Measurement> out;
  for (auto& [sweep, m] :
       QueryMeasurements(db_path,
                         "SELECT jobs.sweep_id, results.measurement FROM results "
                         "JOIN jobs ON jobs.id = results.job_id ORDER BY results.id")) {
    out.emplace(sweep, std::move(m));
  }
  return out;
}

TEST(TuneTest, SearchesConfirmsAndSaysWhatToCopy) {
  TempDir dir;
  const std::string sweep = dir.File("fc.yaml");
  const std::string db = dir.File("tune.db");
  std::ofstream(sweep) << "name: fc-tune\nfamily: fc\ndevice: cpu\n"
                          "params: {layer: 2, node: 64, input: 128, output: 10, batch: 32}\n"
                          "run: {max_seconds: 0.3, warmup_steps: 2, min_steps: 5}\n";
  const CommandResult tune = RunCommand({BinDir() + "/paradnn", "tune", sweep, "--db", db,
                                         "--search-rounds", "1", "--confirm-rounds", "2"},
                                        seconds(400));
  ASSERT_EQ(tune.exit_code, 0) << tune.out << tune.err;
  for (const char* part :
       {"paradnn tune on ", "the baselines on this host:", "fc batch=32 input=128 layer=2",
        "  best: ", "  vs libtorch ", "  vs intel ", "  vs tensorflow ", "  vs guideline ",
        "  to copy into a training script:\n    ", "geometric mean over 1 configuration"}) {
    EXPECT_NE(tune.out.find(part), std::string::npos) << "no '" << part << "' in\n" << tune.out;
  }
  // The lines to copy: the calls, or LibTorch's own counts where they won.
  EXPECT_TRUE(tune.out.find("torch.set_num_threads(") != std::string::npos ||
              tune.out.find("# nothing to set: LibTorch's own thread counts (here intra-op ") !=
                  std::string::npos)
      << tune.out;

  const std::multimap<int64_t, v1::Measurement> stored = StoredMeasurements(db);
  // The search: 8 settings on this 2-CPU host (more on larger ones), one round.
  std::set<std::string> searched;
  for (auto [it, end] = stored.equal_range(1); it != end; ++it) {
    const v1::Measurement& m = it->second;
    EXPECT_EQ(m.outcome(), v1::OK) << m.error();
    const std::string threads = m.stack().at("threads");
    searched.insert(threads);
    if (threads == "intra=1,inter=2") {  // explicit counts run as asked
      EXPECT_EQ(m.intra_op_threads(), 1);
      EXPECT_EQ(m.inter_op_threads(), 2);
    }
    if (threads == "intra=1,inter=1") {
      EXPECT_EQ(m.intra_op_threads(), 1);
    }
  }
  EXPECT_GE(searched.size(), 5u);
  EXPECT_EQ(searched.count("libtorch"), 1u);
  // The confirmation: the baselines (and the best, where it is none of
  // them), two fresh rounds each.
  std::map<std::string, int> confirmed;
  for (auto [it, end] = stored.equal_range(2); it != end; ++it) {
    ++confirmed[it->second.stack().at("threads")];
  }
  for (const char* baseline : {"libtorch", "intel", "tensorflow", "guideline"}) {
    EXPECT_EQ(confirmed[baseline], 2) << baseline;
  }
  EXPECT_LE(confirmed.size(), 5u);
}

TEST(TuneTest, ASweepThatSetsThreadCountsIsRefusedNamingTheField) {
  TempDir dir;
  const std::string sweep = dir.File("fc.yaml");
  std::ofstream(sweep) << "name: fc\nfamily: fc\n"
                          "params: {layer: 2, node: 64, input: 128, output: 10, batch: 32, "
                          "intra_op_threads: 2}\n";
  const CommandResult tune =
      RunCommand({BinDir() + "/paradnn", "tune", sweep, "--db", dir.File("t.db")}, seconds(60));
  EXPECT_EQ(tune.exit_code, 2) << tune.out << tune.err;
  EXPECT_NE(tune.err.find("params.intra_op_threads: paradnn tune chooses the thread counts"),
            std::string::npos)
      << tune.err;
}

}  // namespace
}  // namespace paradnn::testing
