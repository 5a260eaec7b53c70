// `paradnn history [SWEEP...]`: the same configuration on the same hardware
// class over time (every sweep by default), grouped by stack fingerprint,
// with the change points of its step time: "step_time +12.0 % [8.1 %,
// 15.2 %] between fingerprint A and B: libtorch_version 1.13.1 -> 2.1.0".
// The history analysis computes it (server/analysis/history_series.h).
#ifndef PARADNN_CLIENT_HISTORY_COMMAND_H_
#define PARADNN_CLIENT_HISTORY_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "client/commands.h"

namespace paradnn::client {

struct HistoryFlags {
  std::vector<int64_t> sweeps;     // none: every sweep the coordinator holds
  std::vector<std::string> where;  // FIELD=VALUE
  std::string metric = "step_time";
  int min_points = 5;
  double significance = 0.01;
  std::string db;
};

// `history` and its options on `app`; --format goes to `format`.
CLI::App* AddHistoryCommand(CLI::App& app, HistoryFlags* flags, std::string* format);

int RunHistory(const CommandContext& ctx, const HistoryFlags& flags, OutputFormat format);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_HISTORY_COMMAND_H_
