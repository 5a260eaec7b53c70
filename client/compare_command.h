// `paradnn compare`: is one side faster than the other, configuration by
// configuration, and is the difference real? Two sweeps (`compare 3 5`), or
// two values of a field within sweeps (`compare --field blas_core Prescott
// Zen --sweep 3`): per configuration the speedup with its 95 % interval and
// a verdict (faster, slower, no difference detected, not enough data), the
// false discovery rate held across configurations (Benjamini-Hochberg), and
// the geometric mean with its interval. The speedup analysis computes it
// (server/analysis/speedup_verdicts.h); this is its command line.
#ifndef PARADNN_CLIENT_COMPARE_COMMAND_H_
#define PARADNN_CLIENT_COMPARE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client {

struct CompareFlags {
  std::vector<std::string> sides;  // BASELINE CANDIDATE: sweep ids, or --field values
  std::string field;               // "" = the sides are sweeps
  std::vector<int64_t> sweeps;     // --sweep: where the field's values are looked for
  std::vector<std::string> where;  // FIELD=VALUE
  std::string metric = "step_time";
  double fdr = 0.05;
  std::string db;
};

// `compare` and its options on `app`; --format goes to `format`.
CLI::App* AddCompareCommand(CLI::App& app, CompareFlags* flags, std::string* format);

// The speedup request `compare` sends. InvalidArgument (naming the flag)
// for sides that are not two sweep ids without --field, --field without
// --sweep, two equal sides, an fdr outside (0, 1) or a malformed --where.
absl::StatusOr<v1::AnalyzeRequest> BuildCompareRequest(const CompareFlags& flags);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_COMPARE_COMMAND_H_
