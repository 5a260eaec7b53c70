// Each result's re-run interval (v1::RerunInterval) from the re-run model
// of its platform, learned from the platform's stored results.
#ifndef PARADNN_SERVER_ANALYSIS_RERUN_INTERVALS_H_
#define PARADNN_SERVER_ANALYSIS_RERUN_INTERVALS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.pb.h"
#include "server/analysis/rerun_model.h"

namespace paradnn::server::analysis {

// The most recent results of a platform the model learns from: enough
// re-runs to estimate every band, bounded so that a large database answers
// in milliseconds.
inline constexpr size_t kRerunModelResults = 20000;

// A platform's re-run model, and the group (what makes runs re-runs of
// each other) of each job it learned from.
struct PlatformRerunModel {
  RerunModel model;
  std::map<int64_t, std::string> group_of_job;

  // The group of `job_id`; "" when the model did not read it.
  const std::string& GroupOf(int64_t job_id) const;
};

// The re-run model of platform `fingerprint` from its stored results.
absl::StatusOr<PlatformRerunModel> LoadRerunModel(const db::Database& database,
                                                  const std::string& fingerprint);

// The interval of a run of median `step_s`, own interval `within_rel` and
// group `group` ("" = unknown).
v1::RerunInterval RerunIntervalOf(const RerunModel& model, double step_s, double within_rel,
                                  const std::string& group);

// Sets `rerun` on every row with an OK measurement that has a step time,
// one model per platform.
absl::Status FillRerunIntervals(const db::Database& database, std::vector<v1::ResultRow>* rows);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_RERUN_INTERVALS_H_
