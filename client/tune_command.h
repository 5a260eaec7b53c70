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

// The report: the host and sweeps, what the baselines ran as, per
// configuration its best settings, the search's runners-up, its step time
// and against each baseline the speedup, its 95 % interval and the verdict,
// and the lines to copy; then each baseline's geometric mean.
// `baselines`: what each baseline ran as on this host ("intra-op 2,
// inter-op 1, not pinned").
std::string FormatTuneReport(const std::string& host, int64_t search_sweep, int64_t confirm_sweep,
                             size_t candidates, const std::map<std::string, std::string>& baselines,
                             const std::vector<TunedConfig>& configs,
                             const std::map<std::string, TuneVerdict>& geomeans);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_TUNE_COMMAND_H_
