// The tuning analysis (v1::TuningResponse: the paper's thread-setting
// findings checked on this host) as the CLI shows it: its table and CSV,
// what the table of kinds (client/analysis_kinds.cc) points at for
// FormatAnalysis and ToDisplayUnits. No figure: the table is the answer.
// Pure functions; thread-safe.
#ifndef PARADNN_CLIENT_TUNING_VIEWS_H_
#define PARADNN_CLIENT_TUNING_VIEWS_H_

#include <string>

#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::internal {

// The findings per family (counts, then each family's statement and the
// outcome of every configuration it rests on), then one row per
// configuration: width, best setting, best one-pool and several-pools
// values, pool gain and verdict.
std::string TuningTable(const v1::TuningResponse& t);
// One row per check (a finding's outcome for one configuration or batch
// group) with its family's statement and, for a configuration, its
// measurements; raw numbers.
std::string TuningCsv(const v1::TuningResponse& t);
// A fraction metric's values (mfu, ...) in percent, as ToDisplayUnits
// (client/analysis_views.h) shows every kind's; pool gains are ratios and
// stay.
void TuningToDisplayUnits(v1::TuningResponse* t);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_TUNING_VIEWS_H_
