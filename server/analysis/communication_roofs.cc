#include "server/analysis/communication_roofs.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/statement.h"
#include "server/analysis/allreduce_fit.h"

namespace paradnn::server::analysis {
namespace {

// A platform's allreduce results read at most: calibrations are small
// sweeps; a platform with more is read by its newest.
constexpr int64_t kMaxRoofResults = 20'000;

struct StoredRun {
  int64_t sweep_id = 0;
  AllreduceRun run;
};

// The OK allreduce results measured on `fingerprint`, newest sweep first.
// Reads the results table directly (the selection-driven loader needs the
// sweeps named; these are whichever sweeps calibrated the platform).
absl::StatusOr<std::vector<StoredRun>> ReadAllreduceRuns(const db::Database& database,
                                                         const std::string& fingerprint) {
  std::vector<StoredRun> runs;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    db::Statement query(
        db,
        "SELECT j.sweep_id, r.measurement FROM results r JOIN jobs j ON j.id = r.job_id "
        "JOIN sweeps s ON s.id = j.sweep_id JOIN platforms p ON p.id = r.platform_id "
        "WHERE s.family = ?1 AND p.fingerprint = ?2 AND r.outcome = ?3 "
        "AND r.reused_from_job_id IS NULL ORDER BY j.sweep_id DESC, r.id DESC LIMIT ?4");
    query.Bind(1, std::string(kAllreduceFamily)).Bind(2, fingerprint);
    query.Bind(3, static_cast<int>(v1::OK)).Bind(4, kMaxRoofResults);
    return query.ForEachRow([&]() -> absl::Status {
      v1::Measurement measurement;
      if (!measurement.ParseFromString(query.ColumnBlob(1))) {
        return absl::DataLossError(absl::StrCat("results of sweep ", query.ColumnInt(0),
                                                ": a stored measurement does not parse"));
      }
      std::optional<AllreduceRun> run = AllreduceRunOf(measurement);
      if (run.has_value()) runs.push_back({query.ColumnInt(0), *std::move(run)});
      return absl::OkStatus();
    });
  });
  if (!status.ok()) return status;
  return runs;
}

// "52.1 us", "1.23 GB/s": three significant digits with an SI prefix.
std::string Si(double value, const char* unit) {
  const std::pair<double, const char*> prefixes[] = {
      {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "u"}};
  for (const auto& [scale, prefix] : prefixes) {
    if (value >= scale) return absl::StrFormat("%.3g %s%s", value / scale, prefix, unit);
  }
  return absl::StrFormat("%.3g %s", value, unit);
}

}  // namespace

std::optional<AllreduceRun> AllreduceRunOf(const v1::Measurement& measurement) {
  if (!measurement.has_data_parallel()) return std::nullopt;
  const v1::DataParallelStep& step = measurement.data_parallel();
  AllreduceRun run;
  run.backend = step.backend();
  run.ranks = step.ranks();
  run.bytes = static_cast<double>(step.allreduce_bytes());
  run.time_s = step.allreduce_s() > 0 ? step.allreduce_s() : measurement.stats().median_s();
  if (run.ranks <= 0 || !(run.time_s > 0) || step.allreduce_bytes() < 0) return std::nullopt;
  return run;
}

absl::StatusOr<std::map<RoofKey, v1::AllreduceRoof>> LoadLatestRoofs(
    const db::Database& database, const std::string& fingerprint) {
  absl::StatusOr<std::vector<StoredRun>> runs = ReadAllreduceRuns(database, fingerprint);
  if (!runs.ok()) return runs.status();
  // Per key, per sweep (newest first), its runs.
  std::map<RoofKey, std::map<int64_t, std::vector<AllreduceSample>, std::greater<>>> by_key;
  for (const StoredRun& stored : *runs) {
    by_key[{stored.run.backend, stored.run.ranks}][stored.sweep_id].push_back(
        {stored.run.bytes, stored.run.time_s});
  }
  std::map<RoofKey, v1::AllreduceRoof> roofs;
  for (const auto& [key, sweeps] : by_key) {
    auto chosen = sweeps.begin();
    for (auto it = sweeps.begin(); it != sweeps.end(); ++it) {
      std::set<double> sizes;
      for (const AllreduceSample& s : it->second) sizes.insert(s.bytes);
      if (sizes.size() >= 2) {
        chosen = it;
        break;
      }
    }
    v1::AllreduceRoof roof = FitAllreduceRoof(chosen->second, key.second);
    roof.set_backend(key.first);
    roof.add_sweep_ids(chosen->first);
    roofs.emplace(key, std::move(roof));
  }
  return roofs;
}

absl::StatusOr<const RoofBook::Platform*> RoofBook::Read(int64_t platform_id) {
  auto it = platforms_.find(platform_id);
  if (it != platforms_.end()) return &it->second;
  Platform platform;
  if (platform_id > 0) {
    absl::StatusOr<v1::Platform> stored = db::ReadPlatform(*database_, platform_id);
    if (stored.ok()) {
      platform.device_name = stored->device_name();
      platform.fingerprint = stored->fingerprint();
      absl::StatusOr<std::map<RoofKey, v1::AllreduceRoof>> roofs =
          LoadLatestRoofs(*database_, platform.fingerprint);
      if (!roofs.ok()) return roofs.status();
      platform.roofs = *std::move(roofs);
    } else if (!absl::IsNotFound(stored.status())) {
      return stored.status();
    }
  }
  return &platforms_.emplace(platform_id, std::move(platform)).first->second;
}

absl::StatusOr<const v1::AllreduceRoof*> RoofBook::Find(int64_t platform_id,
                                                        const std::string& backend, int32_t ranks) {
  absl::StatusOr<const Platform*> platform = Read(platform_id);
  if (!platform.ok()) return platform.status();
  auto it = (*platform)->roofs.find({backend, ranks});
  if (it == (*platform)->roofs.end()) return nullptr;
  return &it->second;
}

absl::StatusOr<const std::map<RoofKey, v1::AllreduceRoof>*> RoofBook::All(int64_t platform_id) {
  absl::StatusOr<const Platform*> platform = Read(platform_id);
  if (!platform.ok()) return platform.status();
  return &(*platform)->roofs;
}

std::string RoofBook::Label(int64_t platform_id, const std::string& backend, int32_t ranks) const {
  auto it = platforms_.find(platform_id);
  const std::string name =
      it == platforms_.end() || it->second.fingerprint.empty()
          ? absl::StrCat("id ", platform_id)
          : absl::StrCat(it->second.device_name, " (", it->second.fingerprint, ")");
  return absl::StrCat(name, ", ", backend.empty() ? "unknown backend" : backend, ", ", ranks,
                      " ranks");
}

namespace {

// The ceiling of one job point, when its job is data-parallel and its
// platform has a fitted roof for it; whether one was set.
absl::StatusOr<bool> CeilingOf(const db::Database& database, RoofBook* roofs,
                               v1::RooflinePoint* point) {
  absl::StatusOr<std::optional<v1::Measurement>> measurement =
      db::ReadMeasurementOfJob(database, point->job_id());
  if (!measurement.ok()) return measurement.status();
  if (!measurement->has_value() || !(*measurement)->has_data_parallel()) return false;
  const v1::DataParallelStep& step = (*measurement)->data_parallel();
  if (step.ranks() <= 1 || step.allreduce_bytes() <= 0) return false;
  absl::StatusOr<const v1::AllreduceRoof*> roof =
      roofs->Find(point->platform_id(), step.backend(), step.ranks());
  if (!roof.ok()) return roof.status();
  if (*roof == nullptr || !(*roof)->fitted()) return false;
  const double seconds = RoofSeconds(**roof, static_cast<double>(step.allreduce_bytes()),
                                     step.ranks(), std::max(step.buckets(), 1));
  const double flops_per_step = point->flops_per_sec() * (*measurement)->stats().median_s();
  if (!(seconds > 0) || !(flops_per_step > 0)) return false;
  point->set_communication_roof_s(seconds);
  point->set_communication_ceiling_flops_per_sec(flops_per_step / seconds);
  return true;
}

}  // namespace

absl::Status AddCommunicationCeilings(const db::Database& database,
                                      v1::RooflineResponse* roofline) {
  RoofBook roofs(&database);
  std::set<int64_t> with_ceilings;
  for (v1::RooflinePoint& point : *roofline->mutable_points()) {
    if (point.op()) continue;
    absl::StatusOr<const std::map<RoofKey, v1::AllreduceRoof>*> all =
        roofs.All(point.platform_id());
    if (!all.ok()) return all.status();
    if ((*all)->empty()) continue;  // no allreduce sweep on it: nothing to read
    absl::StatusOr<bool> set = CeilingOf(database, &roofs, &point);
    if (!set.ok()) return set.status();
    if (*set) with_ceilings.insert(point.platform_id());
  }
  for (v1::PlatformRoofs& platform : *roofline->mutable_roofs()) {
    if (with_ceilings.count(platform.platform_id()) == 0) continue;
    absl::StatusOr<const std::map<RoofKey, v1::AllreduceRoof>*> all =
        roofs.All(platform.platform_id());
    if (!all.ok()) return all.status();
    for (const auto& [key, roof] : **all) *platform.add_communication() = roof;
  }
  return absl::OkStatus();
}

std::string DescribeRoof(const v1::AllreduceRoof& roof) {
  const std::string sweeps = absl::StrJoin(roof.sweep_ids(), ", ");
  const std::string basis = absl::StrCat(roof.sweep_ids_size() == 1 ? "sweep " : "sweeps ", sweeps,
                                         ", ", roof.runs(), " runs at ", roof.sizes(), " sizes");
  if (!roof.fitted()) return absl::StrCat(roof.note(), " (", basis, ")");
  const std::string beta = roof.beta_bytes_per_sec() > 0
                               ? Si(roof.beta_bytes_per_sec(), "B/s")
                               : std::string("unresolved (latency-bound)");
  return absl::StrFormat("alpha %s, beta %s (%s, residual %.1f%%)%s", Si(roof.alpha_s(), "s"), beta,
                         basis, 100 * roof.relative_residual(),
                         roof.constraint().empty() ? "" : absl::StrCat("; ", roof.constraint()));
}

}  // namespace paradnn::server::analysis
