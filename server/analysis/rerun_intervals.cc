#include "server/analysis/rerun_intervals.h"

#include <map>

#include "db/rerun_history.h"

namespace paradnn::server::analysis {

const std::string& PlatformRerunModel::GroupOf(int64_t job_id) const {
  static const std::string* const kNone = new std::string();
  auto it = group_of_job.find(job_id);
  return it == group_of_job.end() ? *kNone : it->second;
}

absl::StatusOr<PlatformRerunModel> LoadRerunModel(const db::Database& database,
                                                  const std::string& fingerprint) {
  absl::StatusOr<std::vector<db::StoredRun>> runs =
      db::LoadStoredRuns(database, fingerprint, kRerunModelResults);
  if (!runs.ok()) return runs.status();
  PlatformRerunModel out;
  std::vector<RerunSample> samples;
  samples.reserve(runs->size());
  for (db::StoredRun& run : *runs) {
    out.group_of_job[run.job_id] = run.group;
    samples.push_back({std::move(run.group), run.step_s, run.within_rel, run.sentinel});
  }
  out.model = RerunModel::Fit(samples);
  return out;
}

v1::RerunInterval RerunIntervalOf(const RerunModel& model, double step_s, double within_rel,
                                  const std::string& group) {
  const RerunInterval interval = PredictRerun(model, step_s, within_rel, group);
  v1::RerunInterval out;
  out.set_low_s(interval.low_s);
  out.set_high_s(interval.high_s);
  out.set_half_width_rel(interval.half_width_rel);
  out.set_rel_sd(interval.spread.rel_sd);
  out.set_basis(interval.spread.basis);
  out.set_degrees_of_freedom(interval.spread.degrees_of_freedom);
  out.set_rerun_configurations(static_cast<int64_t>(model.rerun_groups()));
  out.set_within_rel(within_rel);
  return out;
}

absl::Status FillRerunIntervals(const db::Database& database, std::vector<v1::ResultRow>* rows) {
  std::map<std::string, PlatformRerunModel> models;
  for (v1::ResultRow& row : *rows) {
    if (!row.has_measurement() || row.measurement().outcome() != v1::OK) continue;
    const double step_s = row.measurement().stats().median_s();
    if (!(step_s > 0)) continue;
    auto it = models.find(row.platform_fingerprint());
    if (it == models.end()) {
      absl::StatusOr<PlatformRerunModel> model =
          LoadRerunModel(database, row.platform_fingerprint());
      if (!model.ok()) return model.status();
      it = models.emplace(row.platform_fingerprint(), *std::move(model)).first;
    }
    // A reused result stands for the job it was copied from.
    const int64_t measured_job =
        row.reused_from_job_id() > 0 ? row.reused_from_job_id() : row.job_id();
    *row.mutable_rerun() =
        RerunIntervalOf(it->second.model, step_s, row.measurement().stats().ci95_rel(),
                        it->second.GroupOf(measured_job));
  }
  return absl::OkStatus();
}

}  // namespace paradnn::server::analysis
