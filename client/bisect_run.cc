// `paradnn bisect`'s measurements: the search's requests run as sweeps, one
// after another, on a running coordinator or a private one with one local
// worker (client/bisect_command.h).
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/bisect_command.h"
#include "client/local_runner.h"
#include "client/sweep_file.h"
#include "common/state_names.h"
#include "model/sweep.h"

namespace paradnn::client {
namespace {

// Where the measurements run.
struct BisectSite {
  std::unique_ptr<LocalCluster> cluster;  // null on a running coordinator
  std::unique_ptr<CoordinatorClient> client;
};

absl::StatusOr<BisectSite> OpenBisectSite(const CommandContext& ctx, const BisectFlags& flags,
                                          bool running_coordinator, const std::string& device) {
  BisectSite site;
  if (running_coordinator) {
    site.client = std::make_unique<CoordinatorClient>(ctx.address, ctx.timeout_seconds);
    return site;
  }
  LocalOptions options;
  options.db_path = flags.db;
  options.workers = 1;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(options, device, ctx.interrupts);
  if (!cluster.ok()) return cluster.status();
  site.cluster = *std::move(cluster);
  // The private coordinator needs no token or TLS, whatever the CLI was given.
  site.client = std::make_unique<CoordinatorClient>(site.cluster->address(), ctx.timeout_seconds,
                                                    common::ClientSecurity());
  *ctx.err << "bisect: a private coordinator (database " << flags.db
           << ") and one local worker; a worker new to this platform probes and calibrates it "
              "first (about 20 s to 2 min, once)\n"
           << std::flush;
  return site;
}

// The step times of the sweep's one job, where it ran, or why it failed.
void ReadMeasured(const std::vector<v1::ResultRow>& rows, BisectMeasured* measured) {
  if (rows.empty()) {
    measured->error = "no job";
    return;
  }
  const v1::ResultRow& row = rows.front();
  measured->worker = row.worker_id();
  if (!row.has_measurement()) {
    measured->error = common::JobStateName(row.state());
    return;
  }
  const v1::Measurement& m = row.measurement();
  if (m.outcome() != v1::OK || m.step_seconds().empty()) {
    measured->error = m.error().empty() ? v1::Outcome_Name(m.outcome()) : m.error();
    return;
  }
  measured->step_seconds.assign(m.step_seconds().begin(), m.step_seconds().end());
}

// Runs `mix` as a sweep of its own and waits for it. An error only when the
// coordinator refused the sweep or was lost, or on interrupt (Cancelled);
// a failed job is a measurement with no step times.
absl::StatusOr<BisectMeasured> MeasureMix(const CommandContext& ctx, BisectSite& site,
                                          const BisectPlan& plan, const v1::BisectMix& mix) {
  BisectMeasured measured;
  measured.mix = mix;
  CoordinatorClient& client = *site.client;
  absl::StatusOr<v1::SubmitSweepResponse> submitted =
      client.SubmitSweep(BisectMixSweep(plan.base, mix), model::kDefaultMaxJobs);
  if (!submitted.ok()) return submitted.status();
  measured.sweep_id = submitted->sweep_id();
  std::function<absl::Status()> health;
  if (site.cluster != nullptr) health = [&site] { return site.cluster->CheckAlive(); };
  absl::StatusOr<v1::SweepStatus> finished = client.Watch(
      measured.sweep_id, ctx.interrupts, [](const v1::SweepStatus&, double) {}, health);
  if (!finished.ok()) {
    if (finished.status().code() == absl::StatusCode::kCancelled) {
      client.CancelSweep(measured.sweep_id).IgnoreError();  // leave no job running
    }
    return finished.status();
  }
  absl::StatusOr<std::vector<v1::ResultRow>> rows =
      client.QueryResults(measured.sweep_id, /*samples=*/true, ctx.interrupts);
  if (!rows.ok()) return rows.status();
  ReadMeasured(*rows, &measured);
  return measured;
}

std::string ProgressLine(const BisectMeasured& m, size_t differing) {
  const std::string head =
      absl::StrCat("bisect: measurement ", m.mix.index() + 1, " (round ", m.mix.round(), ", ",
                   BisectMixLabel(m.mix, differing), "): ");
  if (m.step_seconds.empty()) {
    return absl::StrCat(head, "failed (", m.error, "), sweep ", m.sweep_id, "\n");
  }
  std::vector<double> sorted = m.step_seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2;
  return absl::StrCat(
      head, absl::StrFormat("median step %.3f ms of %d", 1e3 * median, static_cast<int>(n)), " on ",
      m.worker, ", sweep ", m.sweep_id, "\n");
}

// The search to its end: asks the coordinator what to measure, measures
// it, and asks again with the results. The final response, or an error.
absl::StatusOr<v1::BisectResponse> DriveBisect(const CommandContext& ctx, BisectSite& site,
                                               const BisectPlan& plan,
                                               std::vector<BisectMeasured>* measured) {
  v1::AnalyzeRequest request;
  *request.mutable_bisect() = plan.request;
  while (true) {
    absl::StatusOr<v1::AnalyzeResponse> step = site.client->Analyze(request);
    if (!step.ok()) return step.status();
    const v1::BisectResponse& response = step->bisect();
    if (response.done() || response.pending().empty()) return response;
    for (const v1::BisectMix& mix : response.pending()) {
      if (ctx.interrupts != nullptr && ctx.interrupts->interrupted()) {
        return absl::CancelledError("interrupted");
      }
      absl::StatusOr<BisectMeasured> one = MeasureMix(ctx, site, plan, mix);
      if (!one.ok()) return one.status();
      *ctx.err << ProgressLine(*one, static_cast<size_t>(response.differing_size())) << std::flush;
      v1::BisectMeasurement* recorded = request.mutable_bisect()->add_measurements();
      *recorded->mutable_from_bad() = mix.from_bad();
      recorded->mutable_step_seconds()->Add(one->step_seconds.begin(), one->step_seconds.end());
      measured->push_back(*std::move(one));
    }
  }
}

}  // namespace

int RunBisect(const CommandContext& ctx, const BisectFlags& flags, bool running_coordinator,
              OutputFormat format) {
  absl::StatusOr<v1::SweepSpec> base = ReadSweepFile(flags.file, model::kDefaultMaxJobs);
  if (!base.ok()) return ReportError(ctx, base.status());
  absl::StatusOr<BisectPlan> plan = PlanBisect(flags, *std::move(base));
  if (!plan.ok()) return ReportError(ctx, plan.status());
  // From here a signal only sets the flag (and cancels the call in flight),
  // so that a running job is cancelled and local children stopped first.
  ScopedInterruptHandler note_only(ctx.interrupts, [] {});
  const std::string device = plan->base.device().empty() ? "cpu" : plan->base.device();
  absl::StatusOr<BisectSite> site = OpenBisectSite(ctx, flags, running_coordinator, device);
  if (!site.ok()) return ReportError(ctx, site.status());
  std::vector<BisectMeasured> measured;
  absl::StatusOr<v1::BisectResponse> result = DriveBisect(ctx, *site, *plan, &measured);
  int code = kExitOk;
  if (!result.ok()) {
    code = ReportError(ctx, result.status());
  } else {
    *ctx.out << FormatBisectReport(*result, measured, plan->request, format) << std::flush;
    if (!result->done()) code = kExitFailed;
    if (result->outcome() == "measurement budget exhausted") code = kExitFailed;
  }
  if (site->cluster != nullptr) {
    if (absl::Status stopped = site->cluster->Stop(); !stopped.ok()) {
      *ctx.err << "paradnn: warning: " << stopped.message() << "\n" << std::flush;
    }
  }
  if (ctx.interrupts != nullptr && ctx.interrupts->interrupted()) return kExitInterrupted;
  return code;
}

}  // namespace paradnn::client
