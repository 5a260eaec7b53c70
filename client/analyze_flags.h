// The command line of `paradnn analyze KIND` (and the SWEEP ids `report`
// shares): the options every kind takes, and a subcommand per row of the
// table of kinds (client/analysis_kinds.h), whose row says its help,
// options and how they fill the request, so the CLI's subcommands and the
// requests it sends come from one table; an unknown kind is an error, never
// some other analysis. Thread-safe (the table is constant).
#ifndef PARADNN_CLIENT_ANALYZE_FLAGS_H_
#define PARADNN_CLIENT_ANALYZE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client {

// What the analyze options parse into.
struct AnalyzeFlags {
  std::vector<int64_t> sweep_ids;
  std::vector<std::string> where;  // FIELD=VALUE
  bool include_predicted = false;  // budgeted sweeps' predicted results too
  std::string metric;
  std::string x;
  std::string y;
  std::string panel;
  std::vector<std::string> features;
  bool log2_features = false;
  bool log2_target = false;
  bool interactions = false;
  bool ops = false;
  std::vector<std::string> group_by;
  std::string field;
  std::string baseline;
  std::string candidate;
  std::string color_by;
  double fdr = 0;    // speedup, tuning: the verdicts' false discovery rate (0 = 0.05)
  std::string plot;  // FILE.png|.svg
  std::string db;    // --db FILE: analyse this database file, no coordinator needed
};

// A CLI11 check that says plainly what is wrong ("'abc' is not a sweep id
// (a positive integer)"); CLI11's PositiveNumber prints the whole double
// range.
CLI::Validator PositiveInteger(const std::string& what);

// --db FILE on `command` (analyze KIND, report).
void AddDbFile(CLI::App* command, std::string* db_path);

// SWEEP... (one or more sweep ids), for analyze and report.
void AddSweepIds(CLI::App* command, std::vector<int64_t>* sweep_ids);

// One subcommand of `analyze` per kind of the table with a description,
// with its options; --format goes to `format`.
void AddAnalyzeKinds(CLI::App* analyze, AnalyzeFlags* flags, std::string* format);

// The request `analyze KIND` sends for the parsed flags: the selection of
// SWEEP..., --where and --include-predicted, and the kind's part.
// InvalidArgument for an unknown kind or one with a command of its own
// (naming the kinds) or a malformed --where.
absl::StatusOr<v1::AnalyzeRequest> BuildAnalyzeRequest(const std::string& kind,
                                                       const AnalyzeFlags& flags);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_ANALYZE_FLAGS_H_
