// `paradnn bisect FILE --good SETTINGS --bad SETTINGS`: which of the
// settings two stacks differ in (blas_core, aten_capability, env.NAME,
// intra_op_threads, inter_op_threads) moves the step time of one
// configuration, with as few measurements as it can (issue 37,
// "regressions found and bisected"). The coordinator's bisect analysis
// (server/analysis/bisect_search.h, through Analyze) says what to measure;
// each measurement is a sweep of the file's configuration with that mix's
// settings, measured afresh, one after another on a running coordinator
// (--coordinator) or on a private coordinator and worker (as `paradnn
// local`). Prints a line per measurement and the result: outcome,
// culprits, their effect with its interval, their share of the stacks'
// difference, the decisions and the measurements it took.
#ifndef PARADNN_CLIENT_BISECT_COMMAND_H_
#define PARADNN_CLIENT_BISECT_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/commands.h"
#include "client/output_format.h"
#include "paradnn/v1/analysis.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

struct BisectFlags {
  std::string file;                    // a sweep file of one configuration ("-": stdin)
  std::vector<std::string> good;       // --good NAME=VALUE,... (repeatable)
  std::vector<std::string> bad;        // --bad
  std::vector<std::string> unmixable;  // --unmixable NAME (repeatable)
  int reference_rounds = 4;
  int rounds_per_probe = 4;
  double significance = 0.05;
  int max_measurements = 100;
  // Without a coordinator named: the private coordinator's database (kept).
  std::string db = "paradnn.db";
};

// `bisect` and its options on `app`; --format goes to `format`.
CLI::App* AddBisectCommand(CLI::App& app, BisectFlags* flags, std::string* format);

// The settings of --good or --bad (`flag`): NAME=VALUE pairs separated by
// commas, over one or more flags. A comma not followed by NAME= continues
// the value (env.KMP_AFFINITY=granularity=fine,compact); VALUE may be
// empty (env.NAME= unsets the variable). InvalidArgument naming the flag
// and the setting for a malformed pair, a setting given twice, an unknown
// setting or a value not allowed (platform/stack_env.h; thread counts
// 1..1024).
absl::StatusOr<std::map<std::string, std::string>> ParseBisectSettings(
    const std::vector<std::string>& texts, absl::string_view flag);

// What `bisect` measures: the configuration and the search's request (the
// stacks and options, no measurements yet).
struct BisectPlan {
  v1::SweepSpec base;
  v1::BisectRequest request;
};

// Checks the flags against `base` (the sweep file, validated): one
// configuration, no repeats or budget, no named setting also set in the
// file, stack settings on a CPU sweep only, stacks that differ, --unmixable
// among the differences, options in range. InvalidArgument naming the
// flag or field otherwise.
absl::StatusOr<BisectPlan> PlanBisect(const BisectFlags& flags, v1::SweepSpec base);

// The sweep of one measurement: the plan's configuration with `mix`'s
// settings (stack settings on its stack axis, thread counts as params),
// measured afresh (run.fresh). A CPU sweep's jobs also get
// env.OMP_DISPLAY_ENV=false (OpenMP's default) unless a stack names it, so
// that every measurement runs in a fresh runner process: a job without a
// stack setting runs in the worker's pre-forked zygote, which would make a
// difference of its own.
v1::SweepSpec BisectMixSweep(const v1::SweepSpec& base, const v1::BisectMix& mix);

// One measurement as made: its sweep, where it ran and its step times
// (empty when the job failed, with `error`).
struct BisectMeasured {
  v1::BisectMix mix;
  int64_t sweep_id = 0;
  std::string worker;
  std::vector<double> step_seconds;
  std::string error;
};

// "A", "B", or "A + blas_core, env.OMP_WAIT_POLICY" (A with those from B).
std::string BisectMixLabel(const v1::BisectMix& mix, size_t differing);

// The result as `format` says: table (the outcome, culprits, effects,
// decisions and the measurements in order) or json ({"result": the
// BisectResponse as proto3 JSON, "measurements": [...]}).
std::string FormatBisectReport(const v1::BisectResponse& result,
                               const std::vector<BisectMeasured>& measured,
                               const v1::BisectRequest& request, OutputFormat format);

// The whole command. `running_coordinator`: measure on ctx.address;
// otherwise on a private coordinator (flags.db) and one worker. 0 when the
// search ended (culprits found, no difference, not reproduced), 1 when its
// measurement budget ran out, 2 for bad input, 3 for a coordinator lost,
// 130 interrupted.
int RunBisect(const CommandContext& ctx, const BisectFlags& flags, bool running_coordinator,
              OutputFormat format);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_BISECT_COMMAND_H_
