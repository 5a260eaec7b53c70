// `paradnn tune SWEEP.yaml` (or --preset NAME): the framework thread
// settings that train each configuration of a sweep fastest on this host,
// and whether they beat what a user would otherwise run (issue 40,
// docs/tuning.md). On a private coordinator and one worker with every CPU
// (as `paradnn local`, database --db): a search sweep measures every
// candidate of SearchCandidates (client/tune_plan.h) in interleaved rounds;
// a confirmation sweep then measures each configuration's best beside the
// baselines (LibTorch's defaults, Intel's recommendation, the TensorFlow
// guide's defaults, the guideline) in fresh rounds, and `paradnn compare`'s
// statistics give the speedups, their intervals and verdicts. Prints the
// table and the lines to copy into a training script.
#ifndef PARADNN_CLIENT_TUNE_COMMAND_H_
#define PARADNN_CLIENT_TUNE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "client/commands.h"
#include "client/tune_plan.h"

namespace paradnn::client {

struct TuneFlags {
  std::string file;    // the sweep file ("-": standard input)
  std::string preset;  // or a built-in sweep
  std::string db = "paradnn-tune.db";
  int search_rounds = 2;
  int confirm_rounds = 3;
  double fdr = 0.05;
  int64_t max_jobs = 0;
  std::string format = "table";  // table | json
  // Also search concurrent replicas: the host's throughput of P training
  // processes, not one model's speed.
  bool replicas = false;
};

// `tune` and its options on `app`.
CLI::App* AddTuneCommand(CLI::App& app, TuneFlags* flags);

// The whole command; returns its exit status. `log_level` goes to the
// private coordinator and worker.
int RunTune(const CommandContext& ctx, const TuneFlags& flags, const std::string& log_level);

// One configuration's best against one baseline, from the confirmation.
struct TuneVerdict {
  double speedup = 0;  // baseline step / best step
  double low = 0, high = 0;
  std::string verdict;  // "faster", "no difference detected", ...
};

// A configuration's line of the report.
struct TunedConfig {
  ConfigBest best;                        // from the search
  double confirmed_step_seconds = 0;      // the best's median in the confirmation
  std::map<std::string, TuneVerdict> vs;  // baseline -> its verdict
  std::string lines_to_copy;              // model::SettingsToCopy
};

// What a tune found, for the table and JSON.
struct TuneReport {
  std::string host;  // "AMD EPYC: 2 logical CPUs, 2 physical cores, 1 socket(s); OpenBLAS ..."
  int64_t search_sweep = 0;
  int64_t confirm_sweep = 0;
  std::vector<std::string> candidates;           // the search's settings
  std::map<std::string, std::string> baselines;  // what each ran as ("intra-op 2, ...")
  std::vector<TunedConfig> configs;
  std::map<std::string, TuneVerdict> geomeans;  // per baseline, over configs
};

// The table: the host and sweeps, what the baselines ran as, per
// configuration its best settings, the search's runners-up, its step time
// and against each baseline the speedup, its 95 % interval and the verdict,
// and the lines to copy; then each baseline's geometric mean.
std::string FormatTuneReport(const TuneReport& report);

// The same as one JSON object (--format json): host, sweeps, candidates,
// baselines, configurations (config, best, step_seconds, search, vs
// {baseline: {speedup, low, high, verdict}}, lines_to_copy) and geomeans.
std::string FormatTuneJson(const TuneReport& report);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_TUNE_COMMAND_H_
