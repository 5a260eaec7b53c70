// The scale-out analysis (analysis_kinds.h): the selected results of
// data-parallel sweeps read as ScaleOutRuns, each OK job's DataParallelStep
// from its stored Measurement and its all-reduce against the platform's
// communication roof (communication_roofs.h), then scale_out_series.h's
// arithmetic.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "db/result_store.h"
#include "server/analysis/allreduce_fit.h"
#include "server/analysis/analysis_kinds.h"
#include "server/analysis/analysis_scope.h"
#include "server/analysis/communication_roofs.h"
#include "server/analysis/result_selection.h"
#include "server/analysis/scale_out_series.h"

namespace paradnn::server::analysis {
namespace {

// Each OK job's Measurement is read on its own: more than this many is a
// selection to narrow, not one to answer in minutes.
constexpr size_t kMaxScaleOutRuns = 100'000;

bool IsSweptKey(const Selected& selected, const std::string& key) {
  return std::find(selected.all_keys.begin(), selected.all_keys.end(), key) !=
         selected.all_keys.end();
}

// A count hyper-parameter of `record`; 1 when the sweeps do not set it (its
// default), nullopt when it is not a positive integer.
std::optional<int64_t> PositiveCount(const Selected& selected, const Record& record,
                                     const std::string& key) {
  if (!IsSweptKey(selected, key)) return 1;
  const std::string& text = FieldValue(selected, record, key);
  if (text.empty()) return 1;
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value <= 0) return std::nullopt;
  return value;
}

// What the series of a (configuration, N, batch) say about roofs: those
// compared with and those missing, each sentence once; and the platforms
// their runs came from.
using PointKey = std::tuple<std::string, int32_t, int64_t>;
struct SeriesNotes {
  std::map<PointKey, std::set<std::string>> used;
  std::map<PointKey, std::set<std::string>> missing;
  std::map<PointKey, std::set<int64_t>> platforms;
};

// A series whose points ran on several platforms compares hosts as much as
// N: said in its note (a one-host emulation whose baseline ran on a worker
// of another CPU share is the usual cause).
std::string MixedPlatformsNote(const std::set<int64_t>& platforms) {
  if (platforms.size() < 2) return "";
  return absl::StrCat("its points ran on ", platforms.size(), " platforms (ids ",
                      absl::StrJoin(platforms, ", "),
                      "): the efficiencies compare those hosts as well as N; select one "
                      "platform's results (--where fingerprint=F) to compare N alone");
}

// The platform's roof time for `run`'s all-reduce (alpha per bucket), and
// which roof it was or that none exists, into `notes`.
absl::Status CompareWithRoof(const Record& record, RoofBook* roofs, ScaleOutRun* run,
                             SeriesNotes* notes) {
  if (!run->data_parallel || run->ranks <= 1 || run->allreduce_bytes <= 0) return absl::OkStatus();
  absl::StatusOr<const v1::AllreduceRoof*> roof =
      roofs->Find(record.platform_id, run->backend, run->ranks);
  if (!roof.ok()) return roof.status();
  const PointKey key{run->config, run->n, run->batch};
  const std::string label = roofs->Label(record.platform_id, run->backend, run->ranks);
  if (*roof == nullptr) {
    notes->missing[key].insert(absl::StrCat("no all-reduce roof for platform ", label,
                                            ": run an allreduce sweep (family allreduce, "
                                            "params.bytes over several sizes)"));
    return absl::OkStatus();
  }
  notes->used[key].insert(absl::StrCat(label, ": ", DescribeRoof(**roof)));
  if (!(*roof)->fitted()) {
    notes->missing[key].insert(
        absl::StrCat("the all-reduce roof for platform ", label, " has no fit: ", (*roof)->note()));
    return absl::OkStatus();
  }
  run->roof_allreduce_s = RoofSeconds(**roof, static_cast<double>(run->allreduce_bytes), run->ranks,
                                      std::max(run->buckets, 1));
  return absl::OkStatus();
}

// Each series' roofs and missing roofs, from its points' runs.
void AddSeriesNotes(const SeriesNotes& notes, v1::ScaleOutResponse* response) {
  for (v1::ScaleOutSeries& series : *response->mutable_series()) {
    std::set<std::string> used;
    std::set<std::string> missing;
    for (const v1::ScaleOutPoint& point : series.points()) {
      const PointKey key{series.config(), point.n(), point.batch()};
      if (auto it = notes.used.find(key); it != notes.used.end()) {
        used.insert(it->second.begin(), it->second.end());
      }
      if (auto it = notes.missing.find(key); it != notes.missing.end()) {
        missing.insert(it->second.begin(), it->second.end());
      }
    }
    std::set<int64_t> platforms;
    for (const v1::ScaleOutPoint& point : series.points()) {
      if (auto it = notes.platforms.find({series.config(), point.n(), point.batch()});
          it != notes.platforms.end()) {
        platforms.insert(it->second.begin(), it->second.end());
      }
    }
    if (const std::string mixed = MixedPlatformsNote(platforms); !mixed.empty()) {
      missing.insert(mixed);
    }
    for (const std::string& roof : used) series.add_roofs(roof);
    if (missing.empty()) continue;
    std::string note = series.note();
    for (const std::string& line : missing) absl::StrAppend(&note, note.empty() ? "" : "; ", line);
    series.set_note(note);
  }
}

// The job's DataParallelStep into `run`, when its stored Measurement has one.
absl::Status ReadStepParts(const db::Database& database, const Record& record, ScaleOutRun* run) {
  if (record.predicted) return absl::OkStatus();  // a prediction has no Measurement of its own
  absl::StatusOr<std::optional<v1::Measurement>> measurement =
      db::ReadMeasurementOfJob(database, record.job_id);
  if (!measurement.ok()) return measurement.status();
  if (!measurement->has_value() || !(*measurement)->has_data_parallel()) return absl::OkStatus();
  const v1::DataParallelStep& step = (*measurement)->data_parallel();
  run->data_parallel = true;
  if (step.ranks() > 0) run->ranks = step.ranks();
  run->backend = step.backend();
  run->compute_s = step.compute_s();
  run->exposed_communication_s = step.exposed_communication_s();
  run->optimizer_s = step.optimizer_s();
  run->allreduce_s = step.allreduce_s();
  run->bus_bytes_per_sec = step.bus_bytes_per_sec();
  run->allreduce_bytes = step.allreduce_bytes();
  run->buckets = step.buckets();
  return absl::OkStatus();
}

// The runs and gaps of `selected` along `field`.
absl::Status CollectScaleOutRuns(const db::Database& database, const Selected& selected,
                                 const std::string& field, std::vector<ScaleOutRun>* runs,
                                 std::vector<ScaleOutGap>* gaps, SeriesNotes* notes) {
  RoofBook roofs(&database);
  const std::string other = field == "hosts" ? "devices" : "hosts";
  for (const Record& record : selected.records) {
    const std::optional<int64_t> n = PositiveCount(selected, record, field);
    const std::optional<int64_t> per_n = PositiveCount(selected, record, other);
    const std::optional<int64_t> batch = PositiveCount(selected, record, "batch");
    if (!n || !per_n || !batch) continue;  // not a count: no place on the N axis
    const std::string config = ConfigLabel(selected, record, field);
    if (record.outcome != v1::OK) {
      gaps->push_back({config, static_cast<int32_t>(*n), *batch, v1::Outcome_Name(record.outcome)});
      continue;
    }
    const std::optional<double> step = ColumnValue(selected, record, Column::kStepMedianSeconds);
    if (!step || *step <= 0) continue;
    if (runs->size() == kMaxScaleOutRuns) {
      return absl::ResourceExhaustedError(
          absl::StrCat("scale_out reads at most ", kMaxScaleOutRuns,
                       " OK results; select fewer sweeps or results (--where)"));
    }
    ScaleOutRun& run = runs->emplace_back();
    run.config = config;
    run.n = static_cast<int32_t>(*n);
    run.ranks = static_cast<int32_t>(*n * *per_n);
    run.batch = *batch;
    run.step_s = *step;
    run.predicted = record.predicted;
    if (!record.predicted) notes->platforms[{config, run.n, run.batch}].insert(record.platform_id);
    if (absl::Status s = ReadStepParts(database, record, &run); !s.ok()) return s;
    if (absl::Status s = CompareWithRoof(record, &roofs, &run, notes); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::ScaleOutResponse> ScaleOut(const KindContext& context,
                                              const v1::ScaleOutRequest& request) {
  const std::string field = request.field().empty() ? "hosts" : request.field();
  if (std::none_of(std::begin(kScaleOutFields), std::end(kScaleOutFields),
                   [&](const char* allowed) { return field == allowed; })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scale_out.field: '", field,
        "' is not a data-parallel count; allowed: hosts (processes of a gang, one per worker), "
        "devices (replicas per process). Scaling along another field (intra_op_threads, ...) "
        "is the scaling analysis"));
  }
  LoadPlan plan;
  plan.all_hyper = true;
  plan.metrics = {"step_time"};
  plan.config_without = std::vector<std::string>{field, "batch"};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  std::vector<std::string> shown = selected->all_keys;
  shown.insert(shown.end(), {"family", "precision", "optimizer"});
  context.outline->scope =
      ScopeOf(*selected, context.selection, shown, "median of each configuration's repeats per N");
  if (!IsSweptKey(*selected, field)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scale_out.field: the selected sweeps do not sweep ", field, " (params.", field,
        "); their hyper-parameters: ", absl::StrJoin(selected->all_keys, ", ")));
  }
  std::vector<ScaleOutRun> runs;
  std::vector<ScaleOutGap> gaps;
  SeriesNotes notes;
  if (absl::Status s =
          CollectScaleOutRuns(*context.database, *selected, field, &runs, &gaps, &notes);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::ScaleOutResponse> response = BuildScaleOut(runs, gaps, field);
  if (response.ok()) AddSeriesNotes(notes, &*response);
  return response;
}

}  // namespace paradnn::server::analysis
