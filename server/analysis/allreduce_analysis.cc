// The allreduce analysis (analysis_kinds.h): the selected results of
// allreduce-family sweeps, each OK job's all-reduce read from its stored
// Measurement's DataParallelStep, grouped per (platform, backend, ranks):
// the measured points by message size and the alpha-beta roof fitted to
// every run (allreduce_fit.h).
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
#include "db/platform_store.h"
#include "db/result_store.h"
#include "server/analysis/allreduce_fit.h"
#include "server/analysis/analysis_kinds.h"
#include "server/analysis/analysis_scope.h"
#include "server/analysis/communication_roofs.h"
#include "server/analysis/result_selection.h"

namespace paradnn::server::analysis {
namespace {

// Each OK job's Measurement is read on its own.
constexpr size_t kMaxAllreduceRuns = 100'000;

// (platform id, backend, ranks)
using SeriesKey = std::tuple<int64_t, std::string, int32_t>;

struct SeriesRuns {
  std::map<double, std::vector<double>> times_by_bytes;
  std::vector<AllreduceSample> samples;
  std::set<int64_t> sweeps;
};

// What the selection held besides allreduce runs, for the response's note.
struct LeftOut {
  int64_t count = 0;
  std::set<std::string> families;
  int64_t predicted = 0;
  int64_t without_step = 0;
};

absl::Status CollectRuns(const db::Database& database, const Selected& selected,
                         std::map<SeriesKey, SeriesRuns>* series, LeftOut* left_out) {
  size_t runs = 0;
  for (const Record& record : selected.records) {
    if (record.outcome != v1::OK) continue;
    const std::string& family = FieldValue(selected, record, "family");
    if (record.predicted || family != kAllreduceFamily) {
      ++left_out->count;
      if (record.predicted) ++left_out->predicted;
      if (family != kAllreduceFamily) left_out->families.insert(family);
      continue;
    }
    absl::StatusOr<std::optional<v1::Measurement>> measurement =
        db::ReadMeasurementOfJob(database, record.job_id);
    if (!measurement.ok()) return measurement.status();
    std::optional<AllreduceRun> run;
    if (measurement->has_value()) run = AllreduceRunOf(**measurement);
    if (!run.has_value()) {
      ++left_out->count;
      ++left_out->without_step;
      continue;
    }
    if (++runs > kMaxAllreduceRuns) {
      return absl::ResourceExhaustedError(
          absl::StrCat("allreduce reads at most ", kMaxAllreduceRuns,
                       " OK results; select fewer sweeps or results (--where)"));
    }
    SeriesRuns& one = (*series)[{record.platform_id, run->backend, run->ranks}];
    one.times_by_bytes[run->bytes].push_back(run->time_s);
    one.samples.push_back({run->bytes, run->time_s});
    int64_t sweep = 0;
    if (absl::SimpleAtoi(FieldValue(selected, record, "sweep"), &sweep)) one.sweeps.insert(sweep);
  }
  return absl::OkStatus();
}

// One series: its points (median per size) under its fitted roof.
absl::StatusOr<v1::AllreduceSeries> SeriesOf(const db::Database& database, const SeriesKey& key,
                                             const SeriesRuns& runs) {
  const auto& [platform_id, backend, ranks] = key;
  v1::AllreduceSeries series;
  series.set_platform_id(platform_id);
  series.set_backend(backend);
  series.set_ranks(ranks);
  if (platform_id > 0) {
    absl::StatusOr<v1::Platform> platform = db::ReadPlatform(database, platform_id);
    if (platform.ok()) {
      series.set_platform(platform->device_name());
      series.set_fingerprint(platform->fingerprint());
    } else if (!absl::IsNotFound(platform.status())) {
      return platform.status();
    }
  }
  v1::AllreduceRoof roof = FitAllreduceRoof(runs.samples, ranks);
  roof.set_backend(backend);
  for (int64_t sweep : runs.sweeps) roof.add_sweep_ids(sweep);
  for (const auto& [bytes, times] : runs.times_by_bytes) {
    v1::AllreducePoint* point = series.add_points();
    point->set_bytes(static_cast<int64_t>(bytes));
    point->set_runs(static_cast<int32_t>(times.size()));
    point->set_time_s(Median(times));
    point->set_algorithm_bytes_per_sec(bytes / point->time_s());
    point->set_bus_bytes_per_sec(BusBytes(bytes, ranks) / point->time_s());
    point->set_roof_time_s(RoofSeconds(roof, bytes, ranks));
    if (roof.fitted()) point->set_roof_fraction(point->roof_time_s() / point->time_s());
  }
  *series.mutable_roof() = std::move(roof);
  return series;
}

std::string LeftOutNote(const LeftOut& left_out) {
  if (left_out.count == 0) return "";
  std::vector<std::string> why;
  if (!left_out.families.empty()) {
    why.push_back(absl::StrCat("of family ", absl::StrJoin(left_out.families, ", ")));
  }
  if (left_out.predicted > 0) why.push_back(absl::StrCat(left_out.predicted, " predicted"));
  if (left_out.without_step > 0) {
    why.push_back(absl::StrCat(left_out.without_step, " without a DataParallelStep"));
  }
  return absl::StrCat(left_out.count, " OK results left out (", absl::StrJoin(why, "; "),
                      "): the roof rests on measured allreduce runs only");
}

}  // namespace

absl::StatusOr<v1::AllreduceResponse> Allreduce(const KindContext& context,
                                                const v1::AllreduceRequest&) {
  LoadPlan plan;
  plan.fields = {"family", "sweep"};
  PlanScope(&plan);
  absl::StatusOr<Selected> selected = Load(context.database, context.selection, plan);
  if (!selected.ok()) return selected.status();
  CountSelected(*selected, context.outline);
  context.outline->scope =
      ScopeOf(*selected, context.selection, {"bytes", "hosts", "devices", "family"},
              "median of each message size's repeats per platform, backend and ranks; the roof "
              "fitted to every run");
  std::map<SeriesKey, SeriesRuns> by_key;
  LeftOut left_out;
  if (absl::Status s = CollectRuns(*context.database, *selected, &by_key, &left_out); !s.ok()) {
    return s;
  }
  if (by_key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "allreduce needs OK results of family allreduce with a DataParallelStep (",
        selected->records.size(), " results selected",
        left_out.families.empty()
            ? ""
            : absl::StrCat(", of family ", absl::StrJoin(left_out.families, ", ")),
        "); run a sweep of family allreduce: params.bytes over several sizes, params.hosts "
        "and/or params.devices for the ranks"));
  }
  v1::AllreduceResponse response;
  for (const auto& [key, runs] : by_key) {
    absl::StatusOr<v1::AllreduceSeries> series = SeriesOf(*context.database, key, runs);
    if (!series.ok()) return series.status();
    *response.add_series() = *std::move(series);
  }
  // Unique keys: a total order, so an unstable sort is deterministic.
  std::sort(response.mutable_series()->begin(), response.mutable_series()->end(),
            [](const v1::AllreduceSeries& a, const v1::AllreduceSeries& b) {
              return std::make_tuple(a.platform(), a.fingerprint(), a.platform_id(), a.backend(),
                                     a.ranks()) < std::make_tuple(b.platform(), b.fingerprint(),
                                                                  b.platform_id(), b.backend(),
                                                                  b.ranks());
            });
  response.set_left_out(left_out.count);
  response.set_note(LeftOutNote(left_out));
  return response;
}

}  // namespace paradnn::server::analysis
