#include "client/tune_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/compare_command.h"
#include "client/local_runner.h"
#include "common/openmp_env.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "model/sweep.h"
#include "platform/thread_profile.h"

namespace paradnn::client {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr auto kWorkerDeadline = std::chrono::minutes(10);
constexpr auto kCalibrationNotice = std::chrono::seconds(5);
constexpr auto kWorkerPoll = std::chrono::milliseconds(200);
constexpr size_t kRankingShown = 4;  // the search's fastest settings shown per configuration

// The local worker's platform once it has connected (it probes the host and,
// the first time, calibrates it).
absl::StatusOr<v1::Platform> WaitForWorker(const CommandContext& ctx, CoordinatorClient& client,
                                           LocalCluster& cluster) {
  const SteadyClock::time_point start = SteadyClock::now();
  bool told = false;
  while (SteadyClock::now() - start < kWorkerDeadline) {
    if (ctx.interrupts != nullptr && ctx.interrupts->interrupted()) {
      return absl::CancelledError("interrupted");
    }
    if (absl::Status alive = cluster.CheckAlive(); !alive.ok()) return alive;
    absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers();
    if (workers.ok()) {
      for (const v1::WorkerInfo& w : *workers) {
        if (w.connected() && w.platform().logical_cpus() > 0) return w.platform();
      }
    }
    if (!told && SteadyClock::now() - start > kCalibrationNotice) {
      told = true;
      *ctx.err << "paradnn: the local worker is probing this host and calibrating its roofs "
                  "(about 20 s to 2 min, once per platform fingerprint)\n"
               << std::flush;
    }
    std::this_thread::sleep_for(kWorkerPoll);
  }
  return absl::DeadlineExceededError("the local worker did not connect within 10 minutes");
}

// The widest average operator width among the sweep's configurations.
double WidestWidth(const v1::SweepSpec& spec, int64_t max_jobs) {
  double widest = 0;
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = model::ExpandSweep(spec, max_jobs);
  if (!configs.ok()) return widest;
  for (const v1::ModelConfig& config : *configs) {
    absl::StatusOr<model::ModelSpec> parsed =
        model::ParseModelSpec(config, model::FieldStyle::kProto);
    if (parsed.ok()) widest = std::max(widest, model::CountWork(*parsed).width.average());
  }
  return widest;
}

// Submits `spec`, follows it to its end and returns its id and results.
absl::StatusOr<std::pair<int64_t, std::vector<v1::ResultRow>>> RunSweep(const CommandContext& ctx,
                                                                        CoordinatorClient& client,
                                                                        LocalCluster& cluster,
                                                                        const v1::SweepSpec& spec,
                                                                        int64_t max_jobs) {
  absl::StatusOr<v1::SubmitSweepResponse> submitted = client.SubmitSweep(spec, max_jobs);
  if (!submitted.ok()) return submitted.status();
  const int64_t id = submitted->sweep_id();
  *ctx.err << "paradnn: sweep " << id << " (" << spec.name() << "): " << submitted->jobs()
           << " jobs\n"
           << std::flush;
  const int code = WatchWithProgress(ctx, client, id, [&] { return cluster.CheckAlive(); });
  if (code != kExitOk && code != kExitFailed) {
    return absl::AbortedError(absl::StrCat("sweep ", id, " did not finish"));
  }
  absl::StatusOr<std::vector<v1::ResultRow>> rows = client.QueryResults(id, false, ctx.interrupts);
  if (!rows.ok()) return rows.status();
  return std::make_pair(id, *std::move(rows));
}

// The baseline -> best comparison of the confirmation sweep, per
// configuration whose best is `best`.
absl::Status AddVerdicts(CoordinatorClient& client, int64_t confirm_sweep, double fdr,
                         const std::string& best, std::vector<TunedConfig>* configs) {
  for (const char* baseline : kTuneBaselines) {
    if (best == baseline) {
      for (TunedConfig& c : *configs) {
        if (c.best.settings == best) c.vs[baseline] = {1.0, 1.0, 1.0, "is the best"};
      }
      continue;
    }
    CompareFlags compare;
    compare.sides = {baseline, best};
    compare.field = absl::StrCat("stack.", platform::kThreadsStackKey);
    compare.sweeps = {confirm_sweep};
    compare.fdr = fdr;
    absl::StatusOr<v1::AnalyzeRequest> request = BuildCompareRequest(compare);
    if (!request.ok()) return request.status();
    absl::StatusOr<v1::AnalyzeResponse> response = client.Analyze(*request);
    if (!response.ok()) return response.status();
    for (TunedConfig& c : *configs) {
      if (c.best.settings != best) continue;
      for (const v1::SpeedupPoint& p : response->speedup().points()) {
        if (!PointIsConfig(p.config(), c.best.config)) continue;
        c.vs[baseline] = {p.speedup(), p.speedup_low(), p.speedup_high(), p.verdict()};
        c.confirmed_step_seconds = p.candidate_value();
      }
    }
  }
  return absl::OkStatus();
}

// Each baseline's geometric mean speedup over the configurations and how
// many verdicts say faster or slower. No interval: each configuration's
// best is its own, so the points are not one comparison's.
std::map<std::string, TuneVerdict> Geomeans(const std::vector<TunedConfig>& configs) {
  std::map<std::string, TuneVerdict> out;
  for (const char* baseline : kTuneBaselines) {
    double log_sum = 0;
    int n = 0, faster = 0, slower = 0;
    for (const TunedConfig& c : configs) {
      const auto it = c.vs.find(baseline);
      if (it == c.vs.end() || !(it->second.speedup > 0)) continue;
      log_sum += std::log(it->second.speedup);
      ++n;
      faster += it->second.verdict == "faster";
      slower += it->second.verdict == "slower";
    }
    if (n == 0) continue;
    out[baseline] = {std::exp(log_sum / n), 0, 0,
                     absl::StrFormat("faster in %d, slower in %d of %d", faster, slower, n)};
  }
  return out;
}

// What each baseline ran as, from the confirmation's results: "intra-op 2,
// inter-op 1, not pinned" (the counts of its first OK result; the runner
// resolved them on the worker's CPUs).
std::map<std::string, std::string> BaselinesRan(const std::vector<v1::ResultRow>& rows) {
  std::map<std::string, std::string> out;
  for (const v1::ResultRow& row : rows) {
    const auto it = row.config().stack().find(platform::kThreadsStackKey);
    if (it == row.config().stack().end() || out.count(it->second) > 0) continue;
    const v1::Measurement& m = row.measurement();
    if (m.outcome() != v1::OK) continue;
    const bool pinned = m.thread_pinning().find("pinned one per CPU") != std::string::npos;
    std::string ran =
        absl::StrCat("intra-op ", m.intra_op_threads(), ", inter-op ", m.inter_op_threads(),
                     pinned ? ", pinned by paradnn" : ", not pinned by paradnn");
    absl::StatusOr<platform::ThreadProfile> profile =
        platform::ParseThreadProfile(it->second, "stack.threads");
    if (profile.ok()) {
      for (const auto& [name, value] : model::ThreadProfileEnvironment(*profile)) {
        if (name.rfind("PARADNN_", 0) != 0) absl::StrAppend(&ran, ", ", name, "=", value);
      }
    }
    out[it->second] = ran;
  }
  return out;
}

// SettingsToCopy for `best` on `config`.
std::string LinesToCopy(const ConfigBest& best, const model::CpuCores& cores,
                        const std::vector<v1::ResultRow>& rows) {
  absl::StatusOr<platform::ThreadProfile> profile =
      platform::ParseThreadProfile(best.settings, "stack.threads");
  absl::StatusOr<model::ModelSpec> spec =
      model::ParseModelSpec(best.config, model::FieldStyle::kProto);
  if (!profile.ok() || !spec.ok()) return "";
  const model::ThreadSettings settings =
      model::ResolveThreadProfile(*profile, model::CountWork(*spec).width, cores);
  model::RanWith ran;
  ran.hyper_threads = cores.logical_cpus > cores.physical_cores && cores.physical_cores > 0;
  for (const v1::ResultRow& row : rows) {
    const auto it = row.config().stack().find(platform::kThreadsStackKey);
    if (it == row.config().stack().end() || it->second != best.settings) continue;
    if (row.measurement().thread_pinning().find("pinned one per CPU") != std::string::npos) {
      ran.threads_pinned = true;
    }
    ran.intra_op_threads = row.measurement().intra_op_threads();
    ran.inter_op_threads = row.measurement().inter_op_threads();
  }
  if (settings.env.empty()) ran.runner_spincount = PARADNN_RUNNER_GOMP_SPINCOUNT;
  return model::SettingsToCopy(settings, ran);
}

}  // namespace

std::string FormatTuneReport(const TuneReport& report) {
  std::string out =
      absl::StrCat("paradnn tune on ", report.host, "\nsearch: ", report.candidates.size(),
                   " thread settings (sweep ", report.search_sweep,
                   "); confirmation: each configuration's best beside the baselines in fresh "
                   "interleaved rounds (sweep ",
                   report.confirm_sweep, ")\nthe baselines on this host:\n");
  for (const char* baseline : kTuneBaselines) {
    const auto it = report.baselines.find(baseline);
    absl::StrAppendFormat(&out, "  %-11s %s\n", baseline,
                          it == report.baselines.end() ? "no result" : it->second);
  }
  for (const TunedConfig& c : report.configs) {
    absl::StrAppend(&out, "\n", model::ConfigName(c.best.config), "\n");
    absl::StrAppendFormat(&out, "  best: %s at %.3f ms per step (confirmation median)\n",
                          c.best.settings, c.confirmed_step_seconds * 1e3);
    std::vector<std::string> ranking;
    for (size_t i = 0; i < c.best.by_settings.size() && i < kRankingShown; ++i) {
      ranking.push_back(absl::StrFormat("%s %.3f", c.best.by_settings[i].first,
                                        c.best.by_settings[i].second * 1e3));
    }
    absl::StrAppend(&out, "  search (ms): ", absl::StrJoin(ranking, ", "),
                    c.best.by_settings.size() > kRankingShown ? ", ..." : "", "\n");
    for (const char* baseline : kTuneBaselines) {
      const auto it = c.vs.find(baseline);
      if (it == c.vs.end()) {
        absl::StrAppendFormat(&out, "  vs %-11s not compared (no result on one side)\n", baseline);
      } else if (it->second.verdict == "is the best") {
        absl::StrAppendFormat(&out, "  vs %-11s is the best\n", baseline);
      } else {
        absl::StrAppendFormat(&out, "  vs %-11s %5.2fx  [%.2f, %.2f]  %s\n", baseline,
                              it->second.speedup, it->second.low, it->second.high,
                              it->second.verdict);
      }
    }
    for (const auto& [baseline, v] : c.vs) {
      if (v.verdict != "slower") continue;
      absl::StrAppend(&out, "  note: ", baseline,
                      " beat the search's best in the confirmation rounds; run with it\n");
    }
    absl::StrAppend(&out, "  to copy into a training script:\n");
    for (absl::string_view line : absl::StrSplit(c.lines_to_copy, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&out, "    ", line, "\n");
    }
  }
  if (!report.geomeans.empty()) {
    absl::StrAppend(&out, "\ngeometric mean over ", report.configs.size(), " configuration",
                    report.configs.size() == 1 ? "" : "s", ":\n");
    for (const char* baseline : kTuneBaselines) {
      const auto g = report.geomeans.find(baseline);
      if (g == report.geomeans.end()) continue;
      absl::StrAppendFormat(&out, "  vs %-11s %5.2fx  (%s)\n", baseline, g->second.speedup,
                            g->second.verdict);
    }
  }
  absl::StrAppend(&out,
                  "\nspeedup: the baseline's median step / the best's, with its 95 % interval "
                  "and verdict as `paradnn compare --field stack.threads BASELINE BEST --sweep ",
                  report.confirm_sweep, "` gives them\n");
  return out;
}

std::string FormatTuneJson(const TuneReport& report) {
  nlohmann::ordered_json j;
  j["host"] = report.host;
  j["search_sweep"] = report.search_sweep;
  j["confirm_sweep"] = report.confirm_sweep;
  j["candidates"] = report.candidates;
  j["baselines"] = report.baselines;
  auto verdict_json = [](const TuneVerdict& v) {
    return nlohmann::ordered_json{
        {"speedup", v.speedup}, {"low", v.low}, {"high", v.high}, {"verdict", v.verdict}};
  };
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const TunedConfig& c : report.configs) {
    nlohmann::ordered_json config;
    config["config"] = model::ConfigName(c.best.config);
    config["params"] = std::map<std::string, int64_t>(c.best.config.params().begin(),
                                                      c.best.config.params().end());
    config["best"] = c.best.settings;
    config["step_seconds"] = c.confirmed_step_seconds;
    config["search"] = c.best.by_settings;
    for (const auto& [baseline, v] : c.vs) config["vs"][baseline] = verdict_json(v);
    config["lines_to_copy"] = c.lines_to_copy;
    configs.push_back(config);
  }
  j["configurations"] = configs;
  for (const auto& [baseline, g] : report.geomeans) {
    j["geomeans"][baseline] = {{"speedup", g.speedup}, {"verdicts", g.verdict}};
  }
  return j.dump(2) + "\n";
}

CLI::App* AddTuneCommand(CLI::App& app, TuneFlags* flags) {
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Find the thread settings that train each configuration of a sweep fastest on this\n"
      "host: a search over intra-op and inter-op threads and pinning, then the best of each\n"
      "configuration measured again beside LibTorch's defaults, Intel's recommendation, the\n"
      "TensorFlow guide's defaults and the guideline, with verdicts and the lines to copy\n"
      "into a training script (docs/tuning.md). Runs a private coordinator and one worker\n"
      "with every CPU, as `paradnn local`.");
  CLI::Option* file = tune->add_option("FILE", flags->file, "Sweep file (- reads standard input)");
  tune->add_option("--preset", flags->preset, "A built-in sweep instead of FILE")->excludes(file);
  tune->add_option("--db", flags->db, "SQLite database file (kept)")->capture_default_str();
  tune->add_option("--search-rounds", flags->search_rounds,
                   "Interleaved rounds of every candidate in the search")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  tune->add_option("--confirm-rounds", flags->confirm_rounds,
                   "Interleaved rounds of the best and the baselines in the confirmation")
      ->check(CLI::Range(2, 20))
      ->capture_default_str();
  tune->add_option("--fdr", flags->fdr, "False discovery rate of the verdicts")
      ->capture_default_str();
  tune->add_flag("--replicas", flags->replicas,
                 "Also search P training processes at once on disjoint cores (the host's "
                 "throughput of P models, not one model's speed)");
  tune->add_option("--max-jobs", flags->max_jobs, "Refuse sweeps of more jobs (0: the default)");
  tune->add_option("--format", flags->format, "table, or json for scripts")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return tune;
}

int RunTune(const CommandContext& ctx, const TuneFlags& flags, const std::string& log_level) {
  SweepSource source;
  source.file = flags.file;
  source.preset = flags.preset;
  absl::StatusOr<v1::SweepSpec> spec = LoadSweep(source, flags.max_jobs);
  if (!spec.ok()) return ReportError(ctx, spec.status());
  if (absl::Status tunable = CheckTunable(*spec); !tunable.ok()) {
    return ReportError(ctx, tunable);
  }
  LocalOptions local;
  local.db_path = flags.db;
  local.log_level = log_level;
  ScopedInterruptHandler note_only(ctx.interrupts, [] {});
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(local, "cpu", ctx.interrupts);
  if (!cluster.ok()) return ReportError(ctx, cluster.status());
  CoordinatorClient client((*cluster)->address(), ctx.timeout_seconds, common::ClientSecurity());
  const absl::Status status = [&]() -> absl::Status {
    absl::StatusOr<v1::Platform> platform = WaitForWorker(ctx, client, **cluster);
    if (!platform.ok()) return platform.status();
    const model::CpuCores cores{platform->logical_cpus(), platform->cores(),
                                std::max(1, platform->sockets())};
    const std::vector<std::string> candidates =
        SearchCandidates(cores, WidestWidth(*spec, flags.max_jobs), flags.replicas);
    auto search =
        RunSweep(ctx, client, **cluster,
                 TuneSweep(*spec, candidates, flags.search_rounds, "-tune-search"), flags.max_jobs);
    if (!search.ok()) return search.status();
    std::vector<TunedConfig> configs;
    std::set<std::string> bests;
    for (ConfigBest& best : BestPerConfiguration(search->second)) {
      bests.insert(best.settings);
      configs.push_back({std::move(best), 0, {}, ""});
    }
    if (configs.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the search (sweep ", search->first, ") has no OK result: paradnn results --sweep ",
          search->first, " --db ", flags.db, " says why"));
    }
    std::vector<std::string> confirm_settings(std::begin(kTuneBaselines), std::end(kTuneBaselines));
    for (const std::string& b : bests) {
      if (std::find(confirm_settings.begin(), confirm_settings.end(), b) == confirm_settings.end())
        confirm_settings.push_back(b);
    }
    auto confirm = RunSweep(
        ctx, client, **cluster,
        TuneSweep(*spec, confirm_settings, flags.confirm_rounds, "-tune-confirm"), flags.max_jobs);
    if (!confirm.ok()) return confirm.status();
    for (const std::string& b : bests) {
      if (absl::Status s = AddVerdicts(client, confirm->first, flags.fdr, b, &configs); !s.ok())
        return s;
    }
    for (TunedConfig& c : configs) c.lines_to_copy = LinesToCopy(c.best, cores, confirm->second);
    TuneReport report;
    report.host = absl::StrFormat("%s: %d logical CPUs, %d physical cores, %d socket(s); %s",
                                  platform->device_name(), cores.logical_cpus, cores.physical_cores,
                                  cores.sockets, platform->blas_backend());
    report.search_sweep = search->first;
    report.confirm_sweep = confirm->first;
    report.candidates = candidates;
    report.baselines = BaselinesRan(confirm->second);
    report.geomeans = Geomeans(configs);
    report.configs = std::move(configs);
    *ctx.out << (flags.format == "json" ? FormatTuneJson(report) : FormatTuneReport(report))
             << std::flush;
    return absl::OkStatus();
  }();
  if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) {
    *ctx.err << "paradnn: warning: " << stopped.message() << "\n" << std::flush;
  }
  if (!status.ok()) return ReportError(ctx, status);
  return kExitOk;
}

}  // namespace paradnn::client
