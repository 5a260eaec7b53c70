#include "client/listing_format.h"

#include <google/protobuf/util/json_util.h>

#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/output_format.h"
#include "common/state_names.h"
#include "platform/silicon_peak.h"

namespace paradnn::client {
namespace {

std::string FormatLocalTime(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S", &local);
  return buffer;
}

int64_t Finished(const v1::SweepStatus& s) {
  return s.done_jobs() + s.failed_jobs() + s.cancelled_jobs() + s.predicted_jobs();
}

std::string Dash(const std::string& text) { return text.empty() ? "-" : text; }

}  // namespace

std::string DescribeParam(const v1::ParamSpec& spec) {
  switch (spec.kind_case()) {
    case v1::ParamSpec::kValue:
      return absl::StrCat(spec.value());
    case v1::ParamSpec::kValues:
      return absl::StrCat("[", absl::StrJoin(spec.values().values(), ", "), "]");
    case v1::ParamSpec::kRange: {
      const v1::IntRange& r = spec.range();
      std::string out = absl::StrCat(r.min(), "..", r.max());
      if (r.has_mul()) absl::StrAppend(&out, " x", r.mul());
      if (r.has_add()) absl::StrAppend(&out, " +", r.add());
      return out;
    }
    case v1::ParamSpec::KIND_NOT_SET:
      break;
  }
  return "?";
}

std::string FormatSweepList(const std::vector<v1::SweepStatus>& sweeps) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(sweeps.size());
  for (const v1::SweepStatus& s : sweeps) {
    rows.push_back({absl::StrCat(s.sweep_id()), s.name(), s.family(), s.device(),
                    common::SweepStateName(s.state()),
                    absl::StrCat(Finished(s), "/", s.total_jobs()), absl::StrCat(s.ok_results()),
                    HumanClock(s.elapsed_seconds())});
  }
  return AlignColumns({"id", "name", "family", "device", "state", "done", "ok", "elapsed"}, rows,
                      {true, false, false, false, false, true, true, true});
}

namespace {

// The run settings a sweep set ("defaults" for none), "ci=0.02 seed=7".
std::string DescribeRunSettings(const v1::RunSettings& r) {
  std::vector<std::string> parts;
  if (r.ci() != 0) parts.push_back(absl::StrCat("ci=", r.ci()));
  if (r.max_seconds() != 0) parts.push_back(absl::StrCat("max_seconds=", r.max_seconds()));
  if (r.warmup_steps() != 0) parts.push_back(absl::StrCat("warmup_steps=", r.warmup_steps()));
  if (r.min_steps() != 0) parts.push_back(absl::StrCat("min_steps=", r.min_steps()));
  if (r.max_steps() != 0) parts.push_back(absl::StrCat("max_steps=", r.max_steps()));
  if (r.intra_op_threads() != 0) {
    parts.push_back(absl::StrCat("intra_op_threads=", r.intra_op_threads()));
  }
  if (r.inter_op_threads() != 0) {
    parts.push_back(absl::StrCat("inter_op_threads=", r.inter_op_threads()));
  }
  if (r.timeout_seconds() != 0) {
    parts.push_back(absl::StrCat("timeout_seconds=", r.timeout_seconds()));
  }
  if (r.seed() != 0) parts.push_back(absl::StrCat("seed=", r.seed()));
  return parts.empty() ? "defaults" : absl::StrJoin(parts, " ");
}

}  // namespace

std::string FormatSweepDetail(const v1::SweepStatus& s) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"family", s.family()});
  rows.push_back({"device", s.device()});
  rows.push_back({"state", common::SweepStateName(s.state())});
  std::string jobs = absl::StrCat(s.total_jobs(), " total: ", s.done_jobs(), " done, ",
                                  s.leased_jobs(), " running, ", s.pending_jobs(), " pending, ",
                                  s.failed_jobs(), " failed, ", s.cancelled_jobs(), " cancelled");
  if (s.spec().run().budget_seconds() > 0) {
    absl::StrAppend(&jobs, ", ", s.held_jobs(), " held (not chosen to measure yet), ",
                    s.predicted_jobs(), " predicted");
  }
  rows.push_back({"jobs", jobs});
  // Pending jobs that wait for a reason (a gang for enough idle workers of
  // one platform), one row each.
  for (const std::string& line : s.waiting()) rows.push_back({"waiting", line});
  if (s.spec().run().budget_seconds() > 0) {
    rows.push_back(
        {"budget",
         absl::StrCat(HumanClock(s.spec().run().budget_seconds()),
                      s.budget_ends_unix_ms() > 0
                          ? absl::StrCat(", ends ", FormatLocalTime(s.budget_ends_unix_ms()))
                          : ", counting from the first job's start")});
  }
  std::string ok = absl::StrCat(s.ok_results());
  if (s.reused_results() > 0) {
    absl::StrAppend(&ok, " (", s.reused_results(),
                    " taken from earlier sweeps' measurements; --fresh measures them again)");
  }
  rows.push_back({"ok results", ok});
  rows.push_back({"created", FormatLocalTime(s.created_unix_ms())});
  rows.push_back({"finished", FormatLocalTime(s.finished_unix_ms())});
  rows.push_back({"elapsed", HumanClock(s.elapsed_seconds())});
  const v1::SweepSpec& spec = s.spec();
  if (!spec.params().empty()) {
    std::map<std::string, std::string> params;
    for (const auto& [key, param] : spec.params()) params[key] = DescribeParam(param);
    std::vector<std::string> parts;
    parts.reserve(params.size());
    for (const auto& [key, text] : params) parts.push_back(absl::StrCat(key, "=", text));
    rows.push_back({"params", absl::StrJoin(parts, "  ")});
  }
  if (!spec.options().empty()) {
    std::map<std::string, std::string> options;
    for (const auto& [key, list] : spec.options()) {
      options[key] = list.values_size() == 1
                         ? list.values(0)
                         : absl::StrCat("[", absl::StrJoin(list.values(), ", "), "]");
    }
    std::vector<std::string> parts;
    parts.reserve(options.size());
    for (const auto& [key, text] : options) parts.push_back(absl::StrCat(key, "=", text));
    rows.push_back({"options", absl::StrJoin(parts, "  ")});
  }
  rows.push_back(
      {"precision", spec.precision().empty() ? "float32" : absl::StrJoin(spec.precision(), ", ")});
  rows.push_back(
      {"optimizer", spec.optimizer().empty() ? "rmsprop" : absl::StrJoin(spec.optimizer(), ", ")});
  if (spec.has_run()) rows.push_back({"run", DescribeRunSettings(spec.run())});
  std::string out = absl::StrCat("sweep ", s.sweep_id(), ": ", EscapeForTerminal(s.name()), "\n");
  std::string body = AlignColumns({"", ""}, rows, {false, false});
  // Drop the empty header line AlignColumns writes first.
  absl::StrAppend(&out, body.substr(body.find('\n') + 1));
  return out;
}

std::string FormatRoofs(const v1::Platform& platform) {
  std::vector<std::string> parts;
  for (const v1::MatmulRoof& roof : platform.matmul_roofs()) {
    std::string part =
        absl::StrCat(platform::RoofKernel(roof) == "matmul" ? "" : absl::StrCat(roof.kernel(), " "),
                     roof.dtype(), " ",
                     roof.flops_per_sec() > 0 ? HumanCount(roof.flops_per_sec()) + "FLOP/s"
                                              : std::string("uncalibrated"));
    if (roof.theoretical_flops_per_sec() > 0) {
      absl::StrAppend(&part, " (peak ", HumanCount(roof.theoretical_flops_per_sec()), ")");
    }
    if (roof.datasheet_flops_per_sec() > 0) {
      absl::StrAppend(&part, " (datasheet ", HumanCount(roof.datasheet_flops_per_sec()), ")");
    }
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, ", ");
}

std::string FormatWorkers(const std::vector<v1::WorkerInfo>& workers, int64_t now_unix_ms) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(workers.size());
  for (const v1::WorkerInfo& w : workers) {
    // The clock the OS reports beside the one measured at calibration: the
    // silicon peaks behind the roofs' "(peak ...)" rest on the measured one.
    const std::string host =
        w.cpus().empty() ? w.hostname() : absl::StrCat(w.hostname(), " (CPUs ", w.cpus(), ")");
    rows.push_back({w.worker_id(), Dash(w.device_kind()), Dash(w.state()), Dash(host),
                    absl::StrCat(w.jobs_done()), Dash(w.platform().blas_backend()),
                    Dash(w.platform().libtorch_version()),
                    Dash(platform::PlatformClockText(w.platform())),
                    Dash(FormatRoofs(w.platform())), HumanAge(w.last_seen_unix_ms(), now_unix_ms)});
  }
  return AlignColumns({"id", "device", "state", "host", "jobs done", "BLAS", "LibTorch", "clock",
                       "matmul roofs", "last seen"},
                      rows, {false, false, false, false, true, false, false, false, false, false});
}

namespace {

// `messages` as a JSON array of objects, one per line, as the results' JSON
// prints them (proto field names, defaults included).
template <typename Message>
std::string JsonArray(const std::vector<Message>& messages) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::vector<std::string> objects;
  for (const Message& m : messages) {
    std::string json;
    // Serializing a valid message cannot fail; an empty object would show it.
    if (!google::protobuf::util::MessageToJsonString(m, &json, options).ok()) json = "{}";
    objects.push_back(std::move(json));
  }
  return absl::StrCat("[", absl::StrJoin(objects, ",\n "), "]\n");
}

}  // namespace

std::string FormatSweeps(const std::vector<v1::SweepStatus>& sweeps, OutputFormat format) {
  if (format == OutputFormat::kJson) return JsonArray(sweeps);
  std::vector<std::string> header = {"sweep_id",
                                     "name",
                                     "family",
                                     "device",
                                     "state",
                                     "total_jobs",
                                     "done_jobs",
                                     "leased_jobs",
                                     "pending_jobs",
                                     "failed_jobs",
                                     "cancelled_jobs",
                                     "ok_results",
                                     "elapsed_seconds",
                                     "created_unix_ms",
                                     "finished_unix_ms",
                                     "held_jobs",
                                     "predicted_jobs",
                                     "budget_seconds",
                                     "budget_ends_unix_ms"};
  header.emplace_back("reused_results");
  std::string out = CsvLine(header);
  for (const v1::SweepStatus& s : sweeps) {
    std::vector<std::string> fields = {absl::StrCat(s.sweep_id()),
                                       s.name(),
                                       s.family(),
                                       s.device(),
                                       common::SweepStateName(s.state()),
                                       absl::StrCat(s.total_jobs()),
                                       absl::StrCat(s.done_jobs()),
                                       absl::StrCat(s.leased_jobs()),
                                       absl::StrCat(s.pending_jobs()),
                                       absl::StrCat(s.failed_jobs()),
                                       absl::StrCat(s.cancelled_jobs()),
                                       absl::StrCat(s.ok_results()),
                                       absl::StrCat(s.elapsed_seconds()),
                                       absl::StrCat(s.created_unix_ms()),
                                       absl::StrCat(s.finished_unix_ms()),
                                       absl::StrCat(s.held_jobs()),
                                       absl::StrCat(s.predicted_jobs()),
                                       absl::StrCat(s.spec().run().budget_seconds()),
                                       absl::StrCat(s.budget_ends_unix_ms())};
    fields.push_back(absl::StrCat(s.reused_results()));
    absl::StrAppend(&out, CsvLine(fields));
  }
  return out;
}

std::string FormatWorkerList(const std::vector<v1::WorkerInfo>& workers, OutputFormat format) {
  if (format == OutputFormat::kJson) return JsonArray(workers);
  std::string out =
      CsvLine({"worker_id", "device_kind", "state", "hostname", "jobs_done", "blas_backend",
               "libtorch_version", "fingerprint", "last_seen_unix_ms"});
  for (const v1::WorkerInfo& w : workers) {
    absl::StrAppend(&out, CsvLine({w.worker_id(), w.device_kind(), w.state(), w.hostname(),
                                   absl::StrCat(w.jobs_done()), w.platform().blas_backend(),
                                   w.platform().libtorch_version(), w.platform().fingerprint(),
                                   absl::StrCat(w.last_seen_unix_ms())}));
  }
  return out;
}

}  // namespace paradnn::client
