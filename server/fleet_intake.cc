#include "server/fleet_intake.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "db/platform_store.h"
#include "db/statement.h"
#include "fleet/event_line.h"
#include "fleet/job_goodput.h"
#include "fleet/model_cost.h"
#include "model/sweep.h"
#include "platform/silicon_peak.h"
#include "server/analysis/analysis_math.h"

namespace paradnn::server {
namespace {

constexpr int kMaxLineErrors = 100;
constexpr int kDefaultTopJobs = 5;

grpc::Status Internal(const absl::Status& status) {
  return grpc::Status(grpc::StatusCode::INTERNAL, std::string(status.message()));
}

// Roofs by (device kind, dtype): the request's, then the calibrated ones of
// the latest platform each device kind's workers reported; each one used
// is recorded once in `used`.
class FleetRoofs {
 public:
  FleetRoofs(const db::Database& database, const v1::FleetReportRequest& request)
      : database_(database) {
    for (const v1::FleetRoof& roof : request.roofs()) {
      given_[{roof.device_kind(), roof.dtype()}] = roof;
    }
  }

  std::optional<fleet::DeviceRoof> Lookup(const std::string& kind, const std::string& dtype) {
    const std::pair<std::string, std::string> key{kind, dtype};
    auto found = used_.find(key);
    if (found == used_.end()) {
      std::optional<v1::FleetRoof> roof = Given(kind, dtype);
      if (!roof) roof = Calibrated(kind, dtype);
      found = used_.emplace(key, roof).first;
    }
    if (!found->second) return std::nullopt;
    return fleet::DeviceRoof{found->second->flops_per_sec(), found->second->bytes_per_sec()};
  }

  void AddUsed(v1::FleetReportResponse* report) const {
    for (const auto& [key, roof] : used_) {
      if (roof) *report->add_roofs() = *roof;
    }
  }

 private:
  std::optional<v1::FleetRoof> Given(const std::string& kind, const std::string& dtype) const {
    auto it = given_.find({kind, dtype});
    if (it == given_.end()) it = given_.find({kind, ""});  // a roofs file without dtypes
    if (it == given_.end()) return std::nullopt;
    v1::FleetRoof roof = it->second;
    roof.set_dtype(dtype);
    if (roof.source().empty()) roof.set_source("given with the report request");
    return roof;
  }

  std::optional<v1::FleetRoof> Calibrated(const std::string& kind, const std::string& dtype) const {
    std::string worker;
    int64_t platform_id = 0;
    const absl::Status read = database_.Read([&](sqlite3* db) -> absl::Status {
      db::Statement find(db,
                         "SELECT id, platform_id FROM workers WHERE device_kind = ? AND "
                         "platform_id IS NOT NULL ORDER BY last_seen_unix_ms DESC LIMIT 1");
      find.Bind(1, kind);
      absl::StatusOr<bool> row = find.Step();
      if (!row.ok()) return row.status();
      if (*row) {
        worker = find.ColumnText(0);
        platform_id = find.ColumnInt(1);
      }
      return absl::OkStatus();
    });
    if (!read.ok() || platform_id == 0) return std::nullopt;
    absl::StatusOr<v1::Platform> platform = db::ReadPlatform(database_, platform_id);
    if (!platform.ok()) return std::nullopt;
    v1::FleetRoof roof;
    roof.set_device_kind(kind);
    roof.set_dtype(dtype);
    const v1::MatmulRoof* matmul = platform::CalibratedRoof(*platform, "matmul", dtype);
    if (matmul == nullptr) return std::nullopt;
    roof.set_flops_per_sec(matmul->flops_per_sec());
    // The memory roof: the bandwidth of the largest working sets (DRAM).
    const std::vector<v1::BandwidthRoof> bandwidth = analysis::BandwidthRoofs(*platform);
    if (!bandwidth.empty()) roof.set_bytes_per_sec(bandwidth.back().bytes_per_sec());
    roof.set_source(absl::StrCat("calibrated on worker ", worker, " (platform ", platform_id, ")"));
    return roof;
  }

  const db::Database& database_;
  std::map<std::pair<std::string, std::string>, v1::FleetRoof> given_;
  std::map<std::pair<std::string, std::string>, std::optional<v1::FleetRoof>> used_;
};

// The badput causes fleet-wide, largest first, each with the jobs that lost
// the most device time to it.
void AddBadputSources(const std::vector<v1::JobGoodput>& jobs, int top_jobs,
                      v1::FleetReportResponse* report) {
  const v1::GoodputAggregate& fleet = report->fleet();
  for (const char* cause : fleet::kBadputCauses) {
    v1::BadputSource source;
    source.set_cause(cause);
    source.set_device_s(fleet::BadputSeconds(fleet.device_parts(), cause));
    if (fleet.device_holding_s() > 0) {
      source.set_share_of_holding(source.device_s() / fleet.device_holding_s());
    }
    std::vector<const v1::JobGoodput*> order;
    for (const v1::JobGoodput& job : jobs) {
      if (fleet::BadputSeconds(job.parts(), cause) > 0) order.push_back(&job);
    }
    auto device_s = [&cause](const v1::JobGoodput* j) {
      return j->devices() * fleet::BadputSeconds(j->parts(), cause);
    };
    const size_t kept = std::min(order.size(), static_cast<size_t>(top_jobs));
    std::partial_sort(order.begin(), order.begin() + static_cast<long>(kept), order.end(),
                      [&](const v1::JobGoodput* a, const v1::JobGoodput* b) {
                        return device_s(a) > device_s(b);
                      });
    for (size_t i = 0; i < kept; ++i) *source.add_top_jobs() = *order[i];
    *report->add_badput() = std::move(source);
  }
  std::sort(report->mutable_badput()->begin(), report->mutable_badput()->end(),
            [](const v1::BadputSource& a, const v1::BadputSource& b) {
              return a.device_s() > b.device_s();
            });
}

void AddBreakdowns(const std::vector<v1::JobGoodput>& jobs, v1::FleetReportResponse* report) {
  auto attribute = [](const char* name) {
    return [name](const v1::JobGoodput& j) {
      const auto it = j.attributes().find(name);
      return it == j.attributes().end() ? std::string("(none)") : it->second;
    };
  };
  auto add = [](std::vector<v1::GoodputAggregate> groups,
                google::protobuf::RepeatedPtrField<v1::GoodputAggregate>* into) {
    for (v1::GoodputAggregate& g : groups) *into->Add() = std::move(g);
  };
  add(fleet::GoodputBreakdown(jobs, [](const v1::JobGoodput& j) { return j.device_kind(); }),
      report->mutable_by_device_kind());
  add(fleet::GoodputBreakdown(
          jobs, [](const v1::JobGoodput& j) { return fleet::JobSizeBucket(j.devices()); }),
      report->mutable_by_size());
  // Sizes in size order, not text order ("65+" before "9-64").
  std::sort(report->mutable_by_size()->begin(), report->mutable_by_size()->end(),
            [](const v1::GoodputAggregate& a, const v1::GoodputAggregate& b) {
              return std::stoi(a.group()) < std::stoi(b.group());
            });
  add(fleet::GoodputBreakdown(jobs, attribute("framework")), report->mutable_by_framework());
  add(fleet::GoodputBreakdown(jobs, attribute("workload")), report->mutable_by_workload());
  add(fleet::GoodputBreakdown(jobs,
                              [](const v1::JobGoodput& j) { return fleet::UtcDay(j.submitted()); }),
      report->mutable_by_day());
}

// The fastest OK one-device paradnn result on workers of `kind` of the configuration
// `params` give (those keys equal; others free: the stack's settings
// searched) of `family` at `precision`; nullopt when there is none.
struct MeasuredConfig {
  int64_t job_id = 0;
  double step_s = 0;
  v1::ModelConfig config;
};
absl::StatusOr<std::optional<MeasuredConfig>> FastestResult(
    const db::Database& database, const std::string& kind, const std::string& family,
    const std::string& precision, const google::protobuf::Map<std::string, double>& params) {
  std::string sql =
      "SELECT r.job_id, r.step_median_s, j.config FROM results r JOIN jobs j ON j.id = r.job_id "
      "JOIN sweeps s ON s.id = j.sweep_id JOIN workers w ON w.id = r.worker_id "
      "WHERE r.outcome = ? AND r.step_median_s > 0 AND w.device_kind = ? AND s.family = ? "
      "AND j.precision = ? AND NOT EXISTS (SELECT 1 FROM job_params d WHERE d.job_id = j.id "
      "AND d.key IN ('hosts', 'devices') AND d.int_value > 1)";
  const std::map<std::string, double> sorted(params.begin(), params.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    sql +=
        " AND EXISTS (SELECT 1 FROM job_params p WHERE p.job_id = j.id AND p.key = ? AND "
        "p.int_value = ?)";
  }
  sql += " ORDER BY r.step_median_s LIMIT 1";
  std::optional<MeasuredConfig> found;
  absl::Status read = database.Read([&](sqlite3* db) -> absl::Status {
    db::Statement query(db, sql.c_str());
    query.Bind(1, static_cast<int64_t>(v1::OK)).Bind(2, kind).Bind(3, family).Bind(4, precision);
    int index = 5;
    for (const auto& [key, value] : sorted) {
      query.Bind(index, key).Bind(index + 1, static_cast<int64_t>(value));
      index += 2;
    }
    absl::StatusOr<bool> row = query.Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
    MeasuredConfig m;
    m.job_id = query.ColumnInt(0);
    m.step_s = query.ColumnDouble(1);
    if (!m.config.ParseFromString(query.ColumnBlob(2))) {
      return absl::DataLossError(absl::StrCat("jobs.config of job ", m.job_id, " does not parse"));
    }
    found = std::move(m);
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return found;
}

// For each job whose model paradnn counts (program goodput from paradnn's
// counts): the program goodput paradnn's fastest one-device result of the
// same configuration reaches on a worker of the same device kind; for an
// N-device job, of its batch / N (one device's share of the work, which the
// job's own program goodput is per device too).
absl::Status AddParadnnReferences(const db::Database& database,
                                  const std::vector<v1::JobGoodput>& jobs,
                                  const fleet::RoofLookup& roofs, v1::FleetReportResponse* report) {
  for (const v1::JobGoodput& job : jobs) {
    if (!job.has_program() || !absl::StartsWith(job.flops_source(), "paradnn counts")) continue;
    // One device's work: an N-device job's batch / N (data parallelism).
    google::protobuf::Map<std::string, double> per_device = job.model_params();
    if (job.devices() > 1) {
      const auto batch = per_device.find("batch");
      if (batch == per_device.end() || std::fmod(batch->second, job.devices()) != 0) continue;
      batch->second /= job.devices();
    }
    v1::TrainingEvent submitted;
    *submitted.mutable_attributes() = job.attributes();
    *submitted.mutable_model_params() = per_device;
    const std::optional<fleet::StepCost> cost = fleet::ParadnnStepCost(submitted);
    const auto precision = job.attributes().find("precision");
    const std::string dtype = precision == job.attributes().end() ? "float32" : precision->second;
    const std::optional<fleet::DeviceRoof> roof = roofs(job.device_kind(), dtype);
    if (!cost || !roof) continue;
    absl::StatusOr<std::optional<MeasuredConfig>> measured =
        FastestResult(database, job.device_kind(), job.attributes().at("model"), dtype, per_device);
    if (!measured.ok()) return measured.status();
    if (!measured->has_value()) continue;
    double ideal = cost->flops / roof->flops_per_sec;
    if (roof->bytes_per_sec > 0) ideal = std::max(ideal, cost->bytes / roof->bytes_per_sec);
    v1::ParadnnReference& r = *report->add_references();
    r.set_job(job.job());
    r.set_device_kind(job.device_kind());
    r.set_model(model::ConfigName((*measured)->config));
    r.set_job_program(job.program());
    r.set_paradnn_step_s((*measured)->step_s);
    r.set_paradnn_program(ideal / (*measured)->step_s);
    r.set_result_job_id((*measured)->job_id);
    std::vector<std::string> stack;
    for (const auto& [key, value] : (*measured)->config.stack()) {
      stack.push_back(absl::StrCat(key, "=", value));
    }
    std::sort(stack.begin(), stack.end());
    r.set_stack(stack.empty() ? "the worker's own" : absl::StrJoin(stack, " "));
  }
  return absl::OkStatus();
}

}  // namespace

FleetIngestReactor::FleetIngestReactor(db::Database* database,
                                       v1::IngestFleetEventsResponse* response)
    : store_(database), response_(response) {
  StartRead(&batch_);
}

void FleetIngestReactor::OnReadDone(bool ok) {
  if (!ok) {  // the client has sent everything
    Finish(grpc::Status::OK);
    return;
  }
  std::vector<v1::TrainingEvent> events;
  for (int i = 0; i < batch_.lines_size(); ++i) {
    const std::string& line = batch_.lines(i);
    response_->set_lines(response_->lines() + 1);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
    absl::StatusOr<v1::TrainingEvent> event = fleet::ParseEventLine(line);
    if (event.ok()) {
      events.push_back(*std::move(event));
      continue;
    }
    response_->set_bad_lines(response_->bad_lines() + 1);
    if (response_->errors_size() < kMaxLineErrors) {
      v1::FleetLineError& error = *response_->add_errors();
      error.set_source(batch_.source());
      error.set_line_number(batch_.first_line_number() + i);
      error.set_error(std::string(event.status().message()));
    }
  }
  const int64_t good = static_cast<int64_t>(events.size());
  store_.Add(events, [this, good](absl::StatusOr<int64_t> added) {
    if (!added.ok()) {
      Finish(Internal(added.status()));
      return;
    }
    response_->set_stored(response_->stored() + *added);
    response_->set_duplicates(response_->duplicates() + good - *added);
    StartRead(&batch_);
  });
}

absl::StatusOr<v1::FleetReportResponse> BuildFleetReport(const db::Database& database,
                                                         const v1::FleetReportRequest& request) {
  FleetRoofs roofs(database, request);
  const fleet::RoofLookup lookup = [&roofs](const std::string& kind, const std::string& dtype) {
    return roofs.Lookup(kind, dtype);
  };
  v1::FleetReportResponse report;
  std::vector<v1::JobGoodput> jobs;
  absl::Status read = db::ForEachFleetJob(
      database, [&](const std::string& job, std::vector<v1::TrainingEvent> events) -> absl::Status {
        report.set_events(report.events() + static_cast<int64_t>(events.size()));
        fleet::DecomposedJob d =
            fleet::DecomposeJob(std::move(events), lookup, fleet::ParadnnStepCost);
        if (!d.incomplete.empty()) {
          report.add_incomplete(absl::StrCat(job, ": ", d.incomplete));
          return absl::OkStatus();
        }
        if (!d.goodput.program_blank().empty()) {
          ++(*report.mutable_program_blank())[d.goodput.program_blank()];
        }
        jobs.push_back(std::move(d.goodput));
        return absl::OkStatus();
      });
  if (!read.ok()) return read;
  std::vector<const v1::JobGoodput*> all;
  all.reserve(jobs.size());
  for (const v1::JobGoodput& job : jobs) all.push_back(&job);
  *report.mutable_fleet() = fleet::AggregateGoodput(all, "");
  AddBreakdowns(jobs, &report);
  AddBadputSources(jobs, request.top_jobs() > 0 ? request.top_jobs() : kDefaultTopJobs, &report);
  if (absl::Status references = AddParadnnReferences(database, jobs, lookup, &report);
      !references.ok()) {
    return references;
  }
  roofs.AddUsed(&report);
  if (request.jobs()) {
    for (v1::JobGoodput& job : jobs) *report.add_jobs() = std::move(job);
  }
  return report;
}

}  // namespace paradnn::server
