#include "fleet/job_goodput.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fleet/event_line.h"

namespace paradnn::fleet {
namespace {

// The causes of holding time, in the format's order of precedence.
enum Cause { kDataLoading, kCheckpointing, kCompilation, kInitialization, kKept, kLost, kCauses };

struct Interval {
  double from = 0, to = 0;
};

// Equal times: released before granted (a hand-over is not held twice),
// then as they came.
bool Earlier(const v1::TrainingEvent& a, const v1::TrainingEvent& b) {
  const double ta = EventTime(a), tb = EventTime(b);
  if (ta != tb) return ta < tb;
  return a.event() == "released" && b.event() != "released";
}

// Where the job held at least the devices requested at that moment, within
// [begin, end]. `events` sorted.
std::vector<Interval> HoldingIntervals(const std::vector<v1::TrainingEvent>& events, double begin,
                                       double end) {
  std::vector<Interval> holding;
  int64_t held = 0, required = 0;
  std::optional<double> since;
  for (const v1::TrainingEvent& e : events) {
    if (e.event() == "granted") held += e.devices();
    if (e.event() == "released") held -= e.devices();
    if (e.event() == "requested") required = e.devices();
    if (e.event() != "granted" && e.event() != "released" && e.event() != "requested") continue;
    const bool holds = required > 0 && held >= required;
    if (holds && !since) since = e.time();
    if (!holds && since) {
      holding.push_back({*since, e.time()});
      since.reset();
    }
  }
  if (since) holding.push_back({*since, end});
  std::vector<Interval> clipped;
  for (const Interval& i : holding) {
    const Interval c{std::max(i.from, begin), std::min(i.to, end)};
    if (c.to > c.from) clipped.push_back(c);
  }
  return clipped;
}

// Whether each step (in `steps` order) was lost: a restore starting at or
// after its end returned below it, or the job ended other than completed
// and no save of it or beyond started at or after its end.
std::vector<bool> LostSteps(const std::vector<const v1::TrainingEvent*>& steps,
                            const std::vector<const v1::TrainingEvent*>& restores,
                            const std::vector<const v1::TrainingEvent*>& saves,
                            bool ended_incomplete) {
  // Suffix minima (restores) and maxima (saves) by start time.
  auto by_start = [](const v1::TrainingEvent* a, const v1::TrainingEvent* b) {
    return a->start() < b->start();
  };
  std::vector<const v1::TrainingEvent*> r = restores, s = saves;
  std::sort(r.begin(), r.end(), by_start);
  std::sort(s.begin(), s.end(), by_start);
  std::vector<int64_t> min_restore(r.size() + 1, std::numeric_limits<int64_t>::max());
  for (size_t i = r.size(); i-- > 0;) min_restore[i] = std::min(min_restore[i + 1], r[i]->step());
  std::vector<int64_t> max_save(s.size() + 1, -1);
  for (size_t i = s.size(); i-- > 0;) max_save[i] = std::max(max_save[i + 1], s[i]->step());
  std::vector<bool> lost;
  for (const v1::TrainingEvent* step : steps) {
    auto first_at_or_after = [&](const std::vector<const v1::TrainingEvent*>& v) {
      return static_cast<size_t>(
          std::lower_bound(v.begin(), v.end(), step->end(),
                           [](const v1::TrainingEvent* e, double t) { return e->start() < t; }) -
          v.begin());
    };
    const bool restored_below = min_restore[first_at_or_after(r)] < step->step();
    const bool unsaved = ended_incomplete && max_save[first_at_or_after(s)] < step->step();
    lost.push_back(restored_below || unsaved);
  }
  return lost;
}

struct Boundary {
  double time;
  int cause;  // kCauses: a holding edge
  int delta;  // +1 opens, -1 closes
};

// Seconds of holding time by cause (kCauses: other): every instant gets the
// first cause whose span covers it.
std::array<double, kCauses + 1> ClassifyHolding(
    const std::vector<Interval>& holding, const std::vector<std::pair<Interval, int>>& spans) {
  std::vector<Boundary> boundaries;
  for (const Interval& h : holding) {
    boundaries.push_back({h.from, kCauses, +1});
    boundaries.push_back({h.to, kCauses, -1});
  }
  for (const auto& [span, cause] : spans) {
    if (span.to <= span.from) continue;
    boundaries.push_back({span.from, cause, +1});
    boundaries.push_back({span.to, cause, -1});
  }
  std::sort(boundaries.begin(), boundaries.end(),
            [](const Boundary& a, const Boundary& b) { return a.time < b.time; });
  std::array<double, kCauses + 1> seconds{};
  std::array<int, kCauses + 1> open{};
  for (size_t i = 0; i < boundaries.size(); ++i) {
    open[static_cast<size_t>(boundaries[i].cause)] += boundaries[i].delta;
    if (i + 1 == boundaries.size()) break;
    const double width = boundaries[i + 1].time - boundaries[i].time;
    if (width <= 0 || open[kCauses] <= 0) continue;
    int cause = kCauses;
    for (int c = 0; c < kCauses; ++c) {
      if (open[static_cast<size_t>(c)] > 0) {
        cause = c;
        break;
      }
    }
    seconds[static_cast<size_t>(cause)] += width;
  }
  return seconds;
}

int SpanCause(const std::string& kind) {
  if (kind == "data_wait") return kDataLoading;
  if (kind == "checkpoint_save" || kind == "checkpoint_restore") return kCheckpointing;
  if (kind == "compile") return kCompilation;
  if (kind == "init") return kInitialization;
  return -1;
}

// Σ ideal seconds of the kept steps into `job`, or why program is blank.
std::string IdealSeconds(const std::vector<const v1::TrainingEvent*>& kept,
                         const v1::TrainingEvent& submitted, const RoofLookup& roofs,
                         const ModelCostLookup& model_cost, v1::JobGoodput* job) {
  if (kept.empty()) return "no kept steps";
  const auto precision = submitted.attributes().find("precision");
  const std::string dtype =
      precision == submitted.attributes().end() ? "float32" : precision->second;
  const std::optional<DeviceRoof> roof = roofs ? roofs(job->device_kind(), dtype) : std::nullopt;
  if (!roof || !(roof->flops_per_sec > 0)) {
    return absl::StrCat("no ", dtype, " roof for device kind ", job->device_kind());
  }
  const std::optional<StepCost> counted = model_cost ? model_cost(submitted) : std::nullopt;
  job->set_flops_source(counted ? counted->source : "the job's");
  const double devices = job->devices();
  double ideal = 0;
  for (const v1::TrainingEvent* step : kept) {
    if (!counted && !step->has_flops()) return "kept steps without flops";
    const double flops = counted ? counted->flops : step->flops();
    const double bytes = counted ? counted->bytes : (step->has_bytes() ? step->bytes() : 0.0);
    double seconds = flops / (devices * roof->flops_per_sec);
    if (roof->bytes_per_sec > 0)
      seconds = std::max(seconds, bytes / (devices * roof->bytes_per_sec));
    ideal += seconds;
  }
  job->set_ideal_s(ideal);
  return "";
}

void SetShares(v1::JobGoodput* job) {
  if (job->elapsed_s() > 0) job->set_scheduling(job->holding_s() / job->elapsed_s());
  if (job->holding_s() > 0) job->set_runtime(job->parts().productive_s() / job->holding_s());
  if (job->program_blank().empty() && job->kept_span_s() > 0) {
    job->set_program(job->ideal_s() / job->kept_span_s());
  } else if (job->program_blank().empty()) {
    job->set_program_blank("no kept step time");
  }
  if (job->has_scheduling() && job->has_runtime() && job->has_program()) {
    job->set_mpg(job->scheduling() * job->runtime() * job->program());
  }
}

}  // namespace

DecomposedJob DecomposeJob(std::vector<v1::TrainingEvent> events, const RoofLookup& roofs,
                           const ModelCostLookup& model_cost) {
  std::stable_sort(events.begin(), events.end(), Earlier);
  DecomposedJob out;
  v1::JobGoodput& job = out.goodput;
  const v1::TrainingEvent *submitted = nullptr, *ended = nullptr;
  double last = 0;
  std::vector<const v1::TrainingEvent*> steps, restores, saves;
  std::vector<std::pair<Interval, int>> spans;
  for (const v1::TrainingEvent& e : events) {
    if (job.job().empty()) job.set_job(e.job());
    last = std::max(last, IsSpanEvent(e.event()) ? e.end() : e.time());
    if (e.event() == "submitted" && submitted == nullptr) submitted = &e;
    if (e.event() == "ended" && ended == nullptr) ended = &e;
    if (e.event() == "requested") {
      if (job.device_kind().empty()) job.set_device_kind(e.device_kind());
      job.set_devices(std::max(job.devices(), e.devices()));
    }
    if (e.event() == "step") steps.push_back(&e);
    if (e.event() == "checkpoint_restore") restores.push_back(&e);
    if (e.event() == "checkpoint_save") saves.push_back(&e);
    if (const int cause = SpanCause(e.event()); cause >= 0) {
      spans.push_back({{e.start(), e.end()}, cause});
    }
  }
  if (submitted == nullptr) out.incomplete = "no submitted event";
  if (submitted != nullptr && job.devices() == 0) out.incomplete = "no requested event";
  if (!out.incomplete.empty()) return out;

  *job.mutable_attributes() = submitted->attributes();
  *job.mutable_model_params() = submitted->model_params();
  job.set_submitted(submitted->time());
  job.set_ended(ended != nullptr ? ended->time() : last);
  job.set_status(ended != nullptr ? ended->status() : "");
  job.set_elapsed_s(std::max(0.0, job.ended() - job.submitted()));
  const std::vector<Interval> holding = HoldingIntervals(events, job.submitted(), job.ended());
  for (const Interval& h : holding) job.set_holding_s(job.holding_s() + (h.to - h.from));

  const std::vector<bool> lost =
      LostSteps(steps, restores, saves, ended != nullptr && ended->status() != "completed");
  std::vector<const v1::TrainingEvent*> kept;
  for (size_t i = 0; i < steps.size(); ++i) {
    spans.push_back({{steps[i]->start(), steps[i]->end()}, lost[i] ? kLost : kKept});
    if (lost[i]) continue;
    kept.push_back(steps[i]);
    job.set_kept_span_s(job.kept_span_s() + (steps[i]->end() - steps[i]->start()));
  }
  job.set_kept_steps(static_cast<int64_t>(kept.size()));
  job.set_lost_steps(static_cast<int64_t>(steps.size() - kept.size()));

  const std::array<double, kCauses + 1> seconds = ClassifyHolding(holding, spans);
  v1::GoodputParts& parts = *job.mutable_parts();
  parts.set_productive_s(seconds[kKept]);
  parts.set_initialization_s(seconds[kInitialization]);
  parts.set_compilation_s(seconds[kCompilation]);
  parts.set_data_loading_s(seconds[kDataLoading]);
  parts.set_checkpointing_s(seconds[kCheckpointing]);
  parts.set_lost_progress_s(seconds[kLost]);
  parts.set_other_s(seconds[kCauses]);

  job.set_program_blank(IdealSeconds(kept, *submitted, roofs, model_cost, &job));
  if (!job.program_blank().empty()) job.set_ideal_s(0);
  SetShares(&job);
  return out;
}

double BadputSeconds(const v1::GoodputParts& parts, const std::string& cause) {
  if (cause == "initialization") return parts.initialization_s();
  if (cause == "compilation") return parts.compilation_s();
  if (cause == "data_loading") return parts.data_loading_s();
  if (cause == "checkpointing") return parts.checkpointing_s();
  if (cause == "lost_progress") return parts.lost_progress_s();
  return parts.other_s();
}

std::string JobSizeBucket(int devices) {
  if (devices <= 1) return "1";
  if (devices <= 8) return "2-8";
  if (devices <= 64) return "9-64";
  return "65+";
}

std::string UtcDay(double unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm day{};
  gmtime_r(&t, &day);
  return absl::StrFormat("%04d-%02d-%02d", day.tm_year + 1900, day.tm_mon + 1, day.tm_mday);
}

v1::GoodputAggregate AggregateGoodput(const std::vector<const v1::JobGoodput*>& jobs,
                                      const std::string& group) {
  v1::GoodputAggregate a;
  a.set_group(group);
  double scheduled_elapsed = 0, runtime_holding = 0, productive = 0;
  v1::GoodputParts& parts = *a.mutable_device_parts();
  for (const v1::JobGoodput* job : jobs) {
    const double d = job->devices();
    a.set_jobs(a.jobs() + 1);
    a.set_device_elapsed_s(a.device_elapsed_s() + d * job->elapsed_s());
    a.set_device_holding_s(a.device_holding_s() + d * job->holding_s());
    const v1::GoodputParts& p = job->parts();
    parts.set_productive_s(parts.productive_s() + d * p.productive_s());
    parts.set_initialization_s(parts.initialization_s() + d * p.initialization_s());
    parts.set_compilation_s(parts.compilation_s() + d * p.compilation_s());
    parts.set_data_loading_s(parts.data_loading_s() + d * p.data_loading_s());
    parts.set_checkpointing_s(parts.checkpointing_s() + d * p.checkpointing_s());
    parts.set_lost_progress_s(parts.lost_progress_s() + d * p.lost_progress_s());
    parts.set_other_s(parts.other_s() + d * p.other_s());
    if (job->has_scheduling()) scheduled_elapsed += d * job->elapsed_s();
    if (job->has_runtime()) {
      runtime_holding += d * job->holding_s();
      productive += d * p.productive_s();
    }
    if (job->has_program()) {
      a.set_program_jobs(a.program_jobs() + 1);
      a.set_device_kept_span_s(a.device_kept_span_s() + d * job->kept_span_s());
      a.set_device_ideal_s(a.device_ideal_s() + d * job->ideal_s());
    }
  }
  // Jobs with a blank scheduling share have no elapsed time: the holding
  // sum over all jobs is the sum over the ones with a share.
  if (scheduled_elapsed > 0) a.set_scheduling(a.device_holding_s() / scheduled_elapsed);
  if (runtime_holding > 0) a.set_runtime(productive / runtime_holding);
  if (a.device_kept_span_s() > 0) a.set_program(a.device_ideal_s() / a.device_kept_span_s());
  if (a.has_scheduling() && a.has_runtime() && a.has_program()) {
    a.set_mpg(a.scheduling() * a.runtime() * a.program());
  }
  return a;
}

std::vector<v1::GoodputAggregate> GoodputBreakdown(
    const std::vector<v1::JobGoodput>& jobs,
    const std::function<std::string(const v1::JobGoodput&)>& key) {
  std::map<std::string, std::vector<const v1::JobGoodput*>> groups;
  for (const v1::JobGoodput& job : jobs) groups[key(job)].push_back(&job);
  std::vector<v1::GoodputAggregate> out;
  for (const auto& [group, members] : groups) out.push_back(AggregateGoodput(members, group));
  return out;
}

}  // namespace paradnn::fleet
