// Runtime goodput of the quick sweep: runs `paradnn local examples/quick.yaml`
// (a private coordinator, one worker, the real paradnn-runner), then reads
// the sweep's goodput (server/fleet_goodput.h) from the database it kept and
// prints where each job's wall time went beside the target (runtime goodput
// >= 80 %), and what the host-speed sentinel and the sweep's repeats cost
// (target: the sentinel at most 3 % of job wall time).
// Usage: paradnn-bench-runtime-goodput [--sweep FILE] [--keep DB]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_format.h"
#include "db/database.h"
#include "db/statement.h"
#include "paradnn/v1/metrics.pb.h"
#include "server/fleet_goodput.h"

namespace {

std::string SelfDir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
}

// What the sweep's results say about the sentinel and the repeats.
struct SentinelCost {
  double sentinel_s = 0;  // wall seconds spent reading it
  int readings = 0;       // readings taken
  int reused = 0;         // jobs that reused an earlier job's reading
  int jobs = 0;           // results
  int repeat_jobs = 0;    // results of repeats after the first
  double repeat_wall_s = 0;
};

absl::StatusOr<SentinelCost> ReadSentinelCost(const paradnn::db::Database& database,
                                              int64_t sweep_id) {
  SentinelCost cost;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    paradnn::db::Statement query(
        db,
        "SELECT r.measurement, j.repeat, a.finished_unix_ms - a.started_unix_ms "
        "FROM results r JOIN jobs j ON j.id = r.job_id JOIN attempts a ON a.id = r.attempt_id "
        "WHERE j.sweep_id = ?1");
    query.Bind(1, sweep_id);
    return query.ForEachRow([&]() -> absl::Status {
      paradnn::v1::Measurement m;
      if (!m.ParseFromString(query.ColumnBlob(0)))
        return absl::DataLossError("a result does not parse");
      const paradnn::v1::HostSentinel& sentinel = m.sentinel();
      ++cost.jobs;
      cost.sentinel_s += sentinel.seconds();
      cost.readings += (sentinel.compute_before() > 0 && sentinel.before_age_s() == 0) +
                       (sentinel.compute_after() > 0);
      cost.reused += sentinel.before_age_s() > 0;
      if (query.ColumnInt(1) > 0) {
        ++cost.repeat_jobs;
        cost.repeat_wall_s += static_cast<double>(query.ColumnInt(2)) / 1e3;
      }
      return absl::OkStatus();
    });
  });
  if (!status.ok()) return status;
  return cost;
}

// One line of the breakdown: seconds, per job, share of the job wall time.
void PrintShareLine(const paradnn::v1::Goodput& g, const char* what, double seconds) {
  const double jobs = static_cast<double>(std::max<int64_t>(1, g.jobs()));
  std::printf("%-44s %9.2f %9.3f %6.1f%%\n", what, seconds, seconds / jobs,
              g.job_wall_seconds() > 0 ? 100 * seconds / g.job_wall_seconds() : 0);
}

// The sentinel's and the repeats' lines; false (said on stderr) when the
// results cannot be read.
bool PrintSentinelCost(const paradnn::db::Database& database, const paradnn::v1::Goodput& g) {
  absl::StatusOr<SentinelCost> cost = ReadSentinelCost(database, 1);
  if (!cost.ok()) {
    std::fprintf(stderr, "%s\n", cost.status().ToString().c_str());
    return false;
  }
  PrintShareLine(g, "  host-speed sentinel (in the rest)", cost->sentinel_s);
  std::printf("    %d readings, %d of %d jobs reused one\n", cost->readings, cost->reused,
              cost->jobs);
  PrintShareLine(g, "repeats after the first (their job wall)", cost->repeat_wall_s);
  const double share = g.job_wall_seconds() > 0 ? cost->sentinel_s / g.job_wall_seconds() : 0;
  std::printf("sentinel          %6.2f %%   target <= 3 %%    ratio %.2f\n", 100 * share,
              share / 0.03);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sweep = std::string(PARADNN_SOURCE_DIR) + "/examples/quick.yaml";
  std::string db_path;
  CLI::App app{"Runtime goodput of a sweep run locally (default: examples/quick.yaml)"};
  app.add_option("--sweep", sweep, "Sweep file")->capture_default_str();
  app.add_option("--keep", db_path, "Keep the database at this path (default: a temp file)");
  CLI11_PARSE(app, argc, argv);
  const bool temp = db_path.empty();
  if (temp) db_path = absl::StrFormat("/tmp/paradnn-bench-goodput-%d.db", getpid());
  std::filesystem::remove(db_path);

  const std::string command =
      absl::StrFormat("'%s/paradnn' local '%s' --db '%s' > /dev/null", SelfDir(), sweep, db_path);
  const auto start = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    return 1;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  absl::StatusOr<std::unique_ptr<paradnn::db::Database>> database =
      paradnn::db::Database::Open(db_path);
  if (!database.ok()) {
    std::fprintf(stderr, "%s\n", database.status().ToString().c_str());
    return 1;
  }
  paradnn::v1::FleetGoodputRequest request;
  request.set_sweep_id(1);
  absl::StatusOr<paradnn::v1::FleetGoodputResponse> goodput =
      paradnn::server::ReadFleetGoodput(**database, nullptr, request, 0);
  if (!goodput.ok()) {
    std::fprintf(stderr, "%s\n", goodput.status().ToString().c_str());
    return 1;
  }
  const paradnn::v1::Goodput& g = goodput->total();
  const double other = g.job_wall_seconds() - g.timed_seconds() - g.build_seconds();
  std::printf("sweep %s: %lld jobs in %.1f s (paradnn local, start to exit)\n", sweep.c_str(),
              static_cast<long long>(g.jobs()), elapsed);
  std::printf("%-44s %9s %9s %7s\n", "", "seconds", "per job", "share");
  PrintShareLine(g, "job wall (lease granted .. result stored)", g.job_wall_seconds());
  PrintShareLine(g, "  timed steps", g.timed_seconds());
  PrintShareLine(g, "  model + data build", g.build_seconds());
  PrintShareLine(g, "  rest: runner start-up (LibTorch load),", other);
  std::printf("%-44s\n", "    warm-up, probes, result trip");
  if (!PrintSentinelCost(**database, g)) return 1;
  std::printf("runtime goodput   %6.1f %%   target >= 80 %%   ratio %.2f\n", 100 * g.runtime(),
              g.runtime() / 0.80);
  std::printf("scheduling        %6.1f %%   program (HFU) %.1f %%   goodput %.2f %%\n",
              100 * g.scheduling(), 100 * g.program(), 100 * g.goodput());
  database->reset();
  if (temp) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path + suffix);
  }
  return 0;
}
