// paradnn-bench-analysis: how long each analysis takes through the Analyze
// RPC on a database of a million results.
//
// Fills --db (once; reused when it already holds the results) with
// synthetic FC sweeps shaped like the paper's (9,720 configurations each:
// layer 6 × node 9 × batch 9 × input 4 × output 5), alternating CPU / CUDA
// platforms and 1 / 2 intra-op threads, until --results rows exist; starts
// the real paradnn-coordinator on it (Unix socket) and times every analysis
// over one paper-sized sweep (or two, for speedup and scaling) and over
// every stored result. Prints each median beside its target:
// heat map and sensitivity ≤ 300 ms, every analysis ≤ 2 s.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/commands.h"
#include "common/subprocess.h"
#include "db/config_intern.h"
#include "db/database.h"
#include "db/platform_store.h"
#include "paradnn/v1/coordinator.pb.h"

namespace {

using namespace paradnn;  // NOLINT(build/namespaces): main only

constexpr int64_t kSweepSize = 6 * 9 * 9 * 4 * 5;

// One FC configuration of a synthetic sweep.
struct FcPoint {
  int64_t layer, node, batch, input, output;
};

// The job, its hyper-parameters, one attempt and an OK result with the
// synthetic speed model's figures.
absl::Status WriteJob(sqlite3* conn, int64_t sweep_id, int ordinal, const std::string& device,
                      bool gpu, int threads, int64_t platform_id, const FcPoint& point) {
  const auto [layer, node, batch, input, output] = point;
  v1::ModelConfig config;
  config.set_family("fc");
  const std::pair<const char*, int64_t> params[] = {
      {"layer", layer}, {"node", node}, {"batch", batch}, {"input", input}, {"output", output}};
  for (const auto& [key, value] : params) (*config.mutable_params())[key] = value;
  config.set_precision("float32");
  config.set_optimizer("rmsprop");
  absl::StatusOr<int64_t> config_id = db::InternConfig(conn, config);
  if (!config_id.ok()) return config_id.status();
  db::Statement job(conn,
                    "INSERT INTO jobs (sweep_id, ordinal, device, state, config, "
                    "settings, precision, optimizer, attempts, updated_unix_ms, "
                    "config_id) "
                    "VALUES (?, ?, ?, 3, ?, x'', 'float32', 'rmsprop', 1, 0, ?)");
  job.Bind(1, sweep_id)
      .Bind(2, ordinal)
      .Bind(3, device)
      .BindBlob(4, config.SerializeAsString())
      .Bind(5, *config_id);
  if (absl::Status s = job.Run(); !s.ok()) return s;
  const int64_t job_id = sqlite3_last_insert_rowid(conn);
  for (const auto& [key, value] : params) {
    db::Statement param(conn,
                        "INSERT INTO job_params (job_id, key, int_value) "
                        "VALUES (?, ?, ?)");
    param.Bind(1, job_id).Bind(2, std::string(key)).Bind(3, value);
    if (absl::Status s = param.Run(); !s.ok()) return s;
  }
  db::Statement attempt(conn,
                        "INSERT INTO attempts (job_id, worker_id, started_unix_ms, "
                        "lease_deadline_unix_ms, finished_unix_ms, outcome) "
                        "VALUES (?, 'w', 0, 0, 1, 'OK')");
  attempt.Bind(1, job_id);
  if (absl::Status s = attempt.Run(); !s.ok()) return s;
  const int64_t attempt_id = sqlite3_last_insert_rowid(conn);
  const double flops = 6.0 * batch * (input * node + (layer - 1) * node * node + node * output);
  const double speed =
      (gpu ? 40.0 : 1.0) * threads * 1e9 * (10 + std::log2(node) * std::log2(batch));
  const double step = flops / speed;
  const double bytes = 4.0 * (layer * node * node + batch * (input + layer * node));
  db::Statement result(
      conn,
      "INSERT INTO results (job_id, attempt_id, worker_id, platform_id, outcome, "
      "error, examples_per_sec, step_median_s, step_cv, params, model_flops, "
      "executed_flops, bytes_per_step, model_flops_per_sec, executed_flops_per_sec, "
      "intra_op_threads, inter_op_threads, mfu, hfu, measurement, created_unix_ms) "
      "VALUES (?, ?, 'w', ?, 1, '', ?, ?, 0.01, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, x'', 0)");
  result.Bind(1, job_id)
      .Bind(2, attempt_id)
      .Bind(3, platform_id)
      .Bind(4, batch / step)
      .Bind(5, step)
      .Bind(6, input * node + (layer - 1) * node * node + node * output)
      .Bind(7, flops)
      .Bind(8, flops * 1.05)
      .Bind(9, bytes)
      .Bind(10, speed)
      .Bind(11, speed * 1.05)
      .Bind(12, threads)
      .Bind(13, speed / (gpu ? 400e12 : 250e9) / threads)
      .Bind(14, speed * 1.05 / (gpu ? 400e12 : 250e9) / threads);
  if (absl::Status s = result.Run(); !s.ok()) return s;
  return absl::OkStatus();
}

// Writes sweep `index` (jobs, hyper-parameters, attempts, results) in one
// transaction, straight into the tables: the stores would lease and store
// one job at a time.
absl::Status WriteSweep(db::Database* database, int index, int64_t platform_id) {
  const bool gpu = index % 2 == 1;
  const int threads = index % 4 < 2 ? 1 : 2;
  return database->WriteSync([&](sqlite3* conn) -> absl::Status {
    v1::SweepSpec spec;
    spec.set_name(absl::StrCat("synthetic-", index));
    spec.set_family("fc");
    spec.set_device(gpu ? "cuda" : "cpu");
    db::Statement sweep(conn,
                        "INSERT INTO sweeps (name, family, device, state, spec, created_unix_ms, "
                        "finished_unix_ms) VALUES (?, 'fc', ?, 2, ?, 0, 0)");
    sweep.Bind(1, spec.name()).Bind(2, spec.device()).BindBlob(3, spec.SerializeAsString());
    if (absl::Status s = sweep.Run(); !s.ok()) return s;
    const int64_t sweep_id = sqlite3_last_insert_rowid(conn);
    int ordinal = 0;
    for (int64_t layer = 4; layer <= 128; layer *= 2) {
      for (int64_t node = 32; node <= 8192; node *= 2) {
        for (int64_t batch = 64; batch <= 16384; batch *= 2) {
          for (int64_t input = 2000; input <= 8000; input += 2000) {
            for (int64_t output = 200; output <= 1000; output += 200) {
              if (absl::Status s = WriteJob(conn, sweep_id, ordinal++, spec.device(), gpu, threads,
                                            platform_id, {layer, node, batch, input, output});
                  !s.ok()) {
                return s;
              }
            }
          }
        }
      }
    }
    return absl::OkStatus();
  });
}

int64_t CountResults(const db::Database& database) {
  int64_t count = 0;
  absl::Status status = database.Read([&](sqlite3* conn) -> absl::Status {
    db::Statement stmt(conn, "SELECT COUNT(*) FROM results");
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    count = stmt.ColumnInt(0);
    return absl::OkStatus();
  });
  return status.ok() ? count : -1;
}

absl::Status Fill(const std::string& path, int64_t wanted) {
  absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(path);
  if (!database.ok()) return database.status();
  int64_t have = CountResults(**database);
  if (have >= wanted) {
    std::cout << "database " << path << " already holds " << have << " results\n";
    return absl::OkStatus();
  }
  db::PlatformStore platforms(database->get());
  int64_t platform_ids[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    v1::Platform platform;
    platform.set_fingerprint(gpu ? "synthetic-gpu" : "synthetic-cpu");
    platform.set_device_kind(gpu ? "cuda" : "cpu");
    platform.set_device_name(gpu ? "Synthetic GPU" : "Synthetic CPU");
    v1::MatmulRoof* roof = platform.add_matmul_roofs();
    roof->set_dtype("float32");
    roof->set_flops_per_sec(gpu ? 400e12 : 250e9);
    absl::StatusOr<int64_t> id = platforms.UpsertSync(platform);
    if (!id.ok()) return id.status();
    platform_ids[gpu] = *id;
  }
  const auto start = std::chrono::steady_clock::now();
  for (int index = static_cast<int>(have / kSweepSize); have < wanted; ++index) {
    if (absl::Status s = WriteSweep(database->get(), index, platform_ids[index % 2]); !s.ok()) {
      return s;
    }
    have += kSweepSize;
    std::cerr << "\rfilled " << have << " results" << std::flush;
  }
  std::cerr << absl::StrFormat(
      " in %.0f s\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return absl::OkStatus();
}

struct Case {
  std::string name;
  std::string scope;
  double target_ms;
  v1::AnalyzeRequest request;
};

v1::ResultSelection Sweeps(const std::vector<int64_t>& ids) {
  v1::ResultSelection selection;
  for (int64_t id : ids) selection.add_sweep_ids(id);
  return selection;
}

std::vector<Case> Cases(int64_t sweeps) {
  std::vector<int64_t> all;
  for (int64_t id = 1; id <= sweeps; ++id) all.push_back(id);
  std::vector<Case> cases;
  for (const auto& [scope, ids, pair] :
       {std::make_tuple(std::string("1 sweep"), std::vector<int64_t>{1},
                        std::vector<int64_t>{1, 2}),
        std::make_tuple(std::string("all"), all, all)}) {
    const double heavy = scope == "all" ? 2000 : 300;
    Case heatmap{"heatmap", scope, heavy, {}};
    *heatmap.request.mutable_selection() = Sweeps(ids);
    heatmap.request.mutable_heatmap()->set_metric("gflops");
    heatmap.request.mutable_heatmap()->set_x("node");
    heatmap.request.mutable_heatmap()->set_y("batch");
    cases.push_back(heatmap);
    Case sensitivity{"sensitivity", scope, heavy, {}};
    *sensitivity.request.mutable_selection() = Sweeps(ids);
    sensitivity.request.mutable_sensitivity()->set_metric("gflops");
    sensitivity.request.mutable_sensitivity()->set_log2_features(true);
    cases.push_back(sensitivity);
    Case boxplot{"boxplot", scope, 2000, {}};
    *boxplot.request.mutable_selection() = Sweeps(ids);
    boxplot.request.mutable_boxplot()->set_metric("mfu");
    cases.push_back(boxplot);
    if (scope != "all") {  // a million points is not a figure
      Case roofline{"roofline", scope, 2000, {}};
      *roofline.request.mutable_selection() = Sweeps(ids);
      roofline.request.mutable_roofline();  // every option defaulted
      cases.push_back(roofline);
    }
    Case speedup{"speedup", scope == "all" ? "all" : "2 sweeps", 2000, {}};
    *speedup.request.mutable_selection() = Sweeps(pair);
    speedup.request.mutable_speedup()->set_field("device_kind");
    speedup.request.mutable_speedup()->set_color_by("batch");
    cases.push_back(speedup);
    Case scaling{"scaling", scope == "all" ? "all" : "2 sweeps", 2000, {}};
    *scaling.request.mutable_selection() =
        Sweeps(scope == "all" ? all : std::vector<int64_t>{1, 3});
    scaling.request.mutable_scaling();  // every option defaulted
    cases.push_back(scaling);
  }
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  std::string db_path = "/tmp/paradnn-bench-analysis.db";
  int64_t results = 1'000'000;
  int repeats = 5;
  std::string bin_dir;
  CLI::App app("Times every analysis through the Analyze RPC on a database of synthetic results",
               "paradnn-bench-analysis");
  app.add_option("--db", db_path, "SQLite file (filled once, then reused)")->capture_default_str();
  app.add_option("--results", results, "Results to store")->capture_default_str();
  app.add_option("--repeats", repeats, "Timed calls per analysis")->capture_default_str();
  app.add_option("--bin-dir", bin_dir, "Folder of paradnn-coordinator (default: this program's)");
  CLI11_PARSE(app, argc, argv);
  if (bin_dir.empty()) bin_dir = std::filesystem::canonical("/proc/self/exe").parent_path();

  if (absl::Status s = Fill(db_path, results); !s.ok()) {
    std::cerr << "fill: " << s << "\n";
    return 1;
  }
  const std::string socket = absl::StrCat("/tmp/paradnn-bench-analysis-", getpid(), ".sock");
  common::SpawnOptions spawn;
  spawn.stdin_fd = STDIN_FILENO;
  spawn.stdout_fd = STDOUT_FILENO;
  spawn.stderr_fd = STDERR_FILENO;
  absl::StatusOr<common::SpawnedChild> spawned =
      common::SpawnChild({bin_dir + "/paradnn-coordinator", "--db", db_path, "--listen",
                          "unix:" + socket, "--log-level", "warn"},
                         spawn);
  if (!spawned.ok()) {
    std::cerr << spawned.status() << "\n";
    return 1;
  }
  const pid_t coordinator = spawned->pid;
  client::CoordinatorClient client("unix:" + socket, 120);
  for (int i = 0; i < 100 && !std::filesystem::exists(socket); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  absl::StatusOr<std::vector<v1::SweepStatus>> sweeps = client.ListSweeps();
  if (!sweeps.ok()) {
    std::cerr << "coordinator: " << sweeps.status() << "\n";
    kill(coordinator, SIGKILL);
    return 1;
  }
  std::cout << absl::StrFormat("%-12s %-9s %10s %10s %10s %10s %7s\n", "analysis", "scope", "rows",
                               "first ms", "median ms", "target ms", "ratio");
  int failures = 0;
  for (const Case& c : Cases(static_cast<int64_t>(sweeps->size()))) {
    std::vector<double> ms;
    int64_t rows = 0;
    for (int i = 0; i <= repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<v1::AnalyzeResponse> response = client.Analyze(c.request);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      if (!response.ok()) {
        std::cerr << c.name << ": " << response.status() << "\n";
        ++failures;
        break;
      }
      rows = response->results();
    }
    const double first = ms.front();
    std::vector<double> warm(ms.begin() + 1, ms.end());
    std::sort(warm.begin(), warm.end());
    const double median = warm.empty() ? first : warm[warm.size() / 2];
    std::cout << absl::StrFormat("%-12s %-9s %10d %10.0f %10.0f %10.0f %6.2fx%s\n", c.name, c.scope,
                                 rows, first, median, c.target_ms, median / c.target_ms,
                                 median <= c.target_ms ? "" : "  over")
              << std::flush;
  }
  kill(coordinator, SIGTERM);
  waitpid(coordinator, nullptr, 0);
  return failures == 0 ? 0 : 1;
}
