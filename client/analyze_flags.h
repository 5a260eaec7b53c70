// The command line of `paradnn analyze KIND` (and the SWEEP ids `report`
// shares): one AnalysisKind per analysis says its name, help, options and
// how the request is filled, so the CLI's subcommands and the requests it
// sends come from one table; an unknown kind is an error, never some other
// analysis. Thread-safe (the table is constant).
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
  double fdr = 0;    // speedup: the verdicts' false discovery rate (0 = 0.05)
  std::string plot;  // FILE.png|.svg
  std::string db;    // --db FILE: analyse this database file, no coordinator needed
};

struct AnalysisKind {
  const char* name;  // the subcommand: "heatmap", "sensitivity", ...
  const char* description;
  // The options beyond SWEEP..., --where, --format and --plot.
  void (*add_options)(CLI::App* command, AnalyzeFlags* flags);
  void (*fill)(const AnalyzeFlags& flags, const v1::ResultSelection& selection,
               v1::AnalyzeRequest* request);
};

// Every analysis the CLI offers, in the order `paradnn analyze --help` lists.
const std::vector<AnalysisKind>& AnalysisKinds();

// A CLI11 check that says plainly what is wrong ("'abc' is not a sweep id
// (a positive integer)"); CLI11's PositiveNumber prints the whole double
// range.
CLI::Validator PositiveInteger(const std::string& what);

// --db FILE on `command` (analyze KIND, report).
void AddDbFile(CLI::App* command, std::string* db_path);

// SWEEP... (one or more sweep ids), for analyze and report.
void AddSweepIds(CLI::App* command, std::vector<int64_t>* sweep_ids);

// One subcommand of `analyze` per kind, with its options; --format goes to
// `format`.
void AddAnalyzeKinds(CLI::App* analyze, AnalyzeFlags* flags, std::string* format);

// The request `analyze KIND` sends for the parsed flags. InvalidArgument for
// an unknown kind (naming the kinds) or a malformed --where.
absl::StatusOr<v1::AnalyzeRequest> BuildAnalyzeRequest(const std::string& kind,
                                                       const AnalyzeFlags& flags);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_ANALYZE_FLAGS_H_
