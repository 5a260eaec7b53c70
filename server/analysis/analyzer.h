// Analyzer answers the Analyze RPC: it selects results with SQL (sweeps,
// `where` filters, hyper-parameters and platform fields read in the query)
// and hands the rows to the arithmetic of analysis_math.h.
//
// Fields and metrics are the names analysis.proto lists; anything else is
// InvalidArgument naming the allowed names. Thread-safe (reads only, each on
// one snapshot of the database).
#ifndef PARADNN_SERVER_ANALYSIS_ANALYZER_H_
#define PARADNN_SERVER_ANALYSIS_ANALYZER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/analysis.pb.h"
#include "server/analysis/result_selection.h"

namespace paradnn::server::analysis {

class Analyzer {
 public:
  // `database` must outlive the analyzer.
  explicit Analyzer(const db::Database* database) : database_(database) {}

  // NotFound for an unknown sweep; InvalidArgument for a bad request (no
  // sweep, unknown metric or field, constant heat-map axis, too few points,
  // no common configurations); ResourceExhausted naming the limit for an
  // analysis past the bounds of analysis_math.h (cells, terms, groups), or
  // when an allocation fails anyway; errors of the database otherwise.
  absl::StatusOr<v1::AnalyzeResponse> Analyze(const v1::AnalyzeRequest& request) const;

 private:
  absl::StatusOr<v1::AnalyzeResponse> AnalyzeUnguarded(const v1::AnalyzeRequest& request) const;
  const db::Database* database_;
};

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_ANALYZER_H_
