// Runtime goodput of the quick sweep: runs `paradnn local examples/quick.yaml`
// (a private coordinator, one worker, the real paradnn-runner), then reads
// the sweep's goodput (server/fleet_goodput.h) from the database it kept and
// prints where each job's wall time went beside the target (runtime goodput
// >= 80 %). Usage: paradnn-bench-runtime-goodput [--sweep FILE] [--keep DB]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_format.h"
#include "db/database.h"
#include "server/fleet_goodput.h"

namespace {

std::string SelfDir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
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
  const double jobs = static_cast<double>(std::max<int64_t>(1, g.jobs()));
  std::printf("sweep %s: %lld jobs in %.1f s (paradnn local, start to exit)\n", sweep.c_str(),
              static_cast<long long>(g.jobs()), elapsed);
  std::printf("%-44s %9s %9s %7s\n", "", "seconds", "per job", "share");
  auto line = [&](const char* what, double s) {
    std::printf("%-44s %9.2f %9.3f %6.1f%%\n", what, s, s / jobs,
                g.job_wall_seconds() > 0 ? 100 * s / g.job_wall_seconds() : 0);
  };
  line("job wall (lease granted .. result stored)", g.job_wall_seconds());
  line("  timed steps", g.timed_seconds());
  line("  model + data build", g.build_seconds());
  line("  rest: runner start-up (LibTorch load),", other);
  std::printf("%-44s\n", "    warm-up, probes, result trip");
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
