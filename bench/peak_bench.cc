// The clock the cores run at and the float32 silicon peak from it, side by
// side with the clock the OS reports: each CPU alone and all CPUs at once
// (worker/runner/core_clock.h), the float32 peak from the nominal and from
// the measured clock (platform/silicon_peak.h), and the calibrated float32
// matmul roof (`paradnn-runner --calibrate`) as a share of each. Target: the
// roof at 0.8-1.0 of the peak from the measured clock.
// Usage: paradnn-bench-peak [--runs N] [--runner PATH | --platform-json FILE | --no-roof]
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "hostfacts/host_facts.h"
#include "platform/silicon_peak.h"
#include "worker/runner/core_clock.h"
#include "worker/runner/platform.h"

namespace {

using paradnn::platform::CpuPeakFacts;
using paradnn::runner::AffinityCpus;
using paradnn::runner::CoreClock;
using paradnn::runner::CoreClockOptions;
using paradnn::runner::MeasureCoreClock;

std::string SelfDir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
}

std::string Ghz(double hz) { return absl::StrFormat("%.3f GHz", hz / 1e9); }

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void PrintHost(const CpuPeakFacts& facts) {
  const paradnn::hostfacts::CpuTopology topo = paradnn::hostfacts::ReadCpuTopology();
  std::printf("host: %s (%s family %d model %d), %d cores / %d logical CPUs, flags: %s\n",
              topo.model_name.c_str(), facts.vendor.c_str(), facts.family, facts.model, facts.cores,
              topo.logical_cpus, paradnn::hostfacts::RelevantCpuFlags(facts.flags).c_str());
  std::printf("reported clock: base %s (%s), max %s\n",
              facts.base_clock_hz > 0 ? Ghz(facts.base_clock_hz).c_str() : "-",
              facts.base_clock_label.c_str(),
              facts.max_clock_hz > 0 ? Ghz(facts.max_clock_hz).c_str() : "- (no cpufreq)");
}

std::string PerCpu(const CoreClock& clock) {
  std::vector<std::string> parts;
  for (const paradnn::runner::CpuClock& cpu : clock.cpus) {
    parts.push_back(absl::StrFormat("cpu%d %.3f (first 0.1 ms %.2f, %d clean)", cpu.cpu,
                                    cpu.hz / 1e9, cpu.first_chunk_hz / 1e9, cpu.clean_repetitions));
  }
  return absl::StrJoin(parts, ", ");
}

// Each CPU alone, then `runs` measurements of all CPUs at once; returns the
// median of the all-CPU figures.
double MeasureClocks(int runs, const CoreClockOptions& base) {
  std::printf("\none CPU at a time (the others idle):\n");
  for (int cpu : AffinityCpus()) {
    CoreClockOptions options = base;
    options.cpus = {cpu};
    const CoreClock clock = MeasureCoreClock(options);
    std::printf("  %s\n", PerCpu(clock).c_str());
  }
  std::printf("\nall CPUs at once, %d runs (GHz per CPU; median, max over CPUs):\n", runs);
  std::vector<double> medians;
  std::string method;
  for (int run = 0; run < runs; ++run) {
    const CoreClock clock = MeasureCoreClock(base);
    if (!(clock.hz > 0)) {
      std::printf("  %s\n", clock.method.c_str());
      return 0;
    }
    medians.push_back(clock.hz);
    method = clock.method;
    std::printf("  run %d: %s; median %.3f, max %.3f, %.0f ms\n", run + 1, PerCpu(clock).c_str(),
                clock.hz / 1e9, clock.max_hz / 1e9, clock.seconds * 1e3);
  }
  std::sort(medians.begin(), medians.end());
  std::printf("  method: %s\n  across runs: %s .. %s, median %s\n", method.c_str(),
              Ghz(medians.front()).c_str(), Ghz(medians.back()).c_str(),
              Ghz(medians[medians.size() / 2]).c_str());
  return medians[medians.size() / 2];
}

// The calibrated platform: from a saved `--calibrate` JSON, or the runner.
absl::StatusOr<paradnn::v1::Platform> CalibratedPlatform(const std::string& runner,
                                                         const std::string& json_file) {
  std::string json;
  if (!json_file.empty()) {
    json = ReadText(json_file);
  } else {
    std::printf("\ncalibrating: %s --calibrate (about a minute)\n", runner.c_str());
    std::fflush(stdout);
    FILE* pipe = popen(absl::StrCat("'", runner, "' --calibrate 2>/dev/null").c_str(), "r");
    if (pipe == nullptr) return absl::UnavailableError(absl::StrCat("cannot run ", runner));
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) json.append(buffer, n);
    if (const int status = pclose(pipe); status != 0) {
      return absl::UnavailableError(absl::StrCat(runner, " --calibrate failed: ", status));
    }
  }
  paradnn::v1::Platform platform;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(json, &platform, options).ok()) {
    return absl::DataLossError("the calibration is not a Platform in JSON");
  }
  return platform;
}

double Float32Roof(const paradnn::v1::Platform& platform) {
  double roof = 0;
  for (const paradnn::v1::MatmulRoof& r : platform.matmul_roofs()) {
    if (r.dtype() == "float32" && paradnn::platform::RoofKernel(r) == "matmul") {
      roof = std::max(roof, r.flops_per_sec());
    }
  }
  return roof;
}

// Peaks from the nominal and the measured clock, and the roof's share.
void PrintPeaks(CpuPeakFacts facts, double measured_hz, double roof) {
  const auto float32 = [](const CpuPeakFacts& f) {
    const std::vector<paradnn::v1::SiliconPeak> peaks = paradnn::platform::CpuSiliconPeaks(f);
    const paradnn::v1::SiliconPeak* peak = paradnn::platform::FindSiliconPeak(peaks, "float32");
    return peak == nullptr ? paradnn::v1::SiliconPeak() : *peak;
  };
  facts.measured_clock_hz = 0;
  const paradnn::v1::SiliconPeak nominal = float32(facts);
  facts.measured_clock_hz = measured_hz;
  const paradnn::v1::SiliconPeak measured = float32(facts);
  std::printf(
      "\nfloat32 silicon peak\n  from the reported clock: %s\n  from the measured clock: %s\n",
      nominal.basis().c_str(), measured_hz > 0 ? measured.basis().c_str() : "-");
  if (!(roof > 0)) return;
  std::printf("\ncalibrated float32 matmul roof: %s\n", paradnn::platform::FlopRate(roof).c_str());
  std::printf("  share of the peak from the reported clock: %.2f\n",
              roof / nominal.flops_per_sec());
  if (measured_hz > 0) {
    const double share = roof / measured.flops_per_sec();
    std::printf("  share of the peak from the measured clock: %.2f (target 0.80-1.00: %s)\n", share,
                share >= 0.8 && share <= 1.0 ? "met" : "MISSED");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string runner = SelfDir() + "/paradnn-runner";
  std::string platform_json;
  bool no_roof = false;
  CoreClockOptions options;
  double repetition_ms = options.repetition_seconds * 1e3;
  CLI::App app{
      "The core clock measured under load beside the reported one, the float32 peak "
      "from each and the calibrated matmul roof's share of it"};
  app.add_option("--runs", runs, "Measurements of all CPUs at once")->capture_default_str();
  app.add_option("--repetitions", options.repetitions, "Repetitions per CPU (best of)")
      ->capture_default_str();
  app.add_option("--repetition-ms", repetition_ms, "Length of one repetition")
      ->capture_default_str();
  app.add_option("--runner", runner, "paradnn-runner to calibrate with")->capture_default_str();
  app.add_option("--platform-json", platform_json, "A saved `paradnn-runner --calibrate` output");
  app.add_flag("--no-roof", no_roof, "Skip the calibration");
  CLI11_PARSE(app, argc, argv);
  options.repetition_seconds = repetition_ms / 1e3;

  const CpuPeakFacts facts = paradnn::runner::HostCpuPeakFacts(0);
  PrintHost(facts);
  const double measured = MeasureClocks(std::max(1, runs), options);
  double roof = 0;
  if (!no_roof) {
    absl::StatusOr<paradnn::v1::Platform> platform = CalibratedPlatform(runner, platform_json);
    if (!platform.ok()) {
      std::fprintf(stderr, "%s\n", platform.status().ToString().c_str());
      return 1;
    }
    roof = Float32Roof(*platform);
    std::printf("the calibration's own clock: %s (%s)\n",
                paradnn::platform::PlatformClockText(*platform).c_str(),
                platform->measured_clock_method().c_str());
  }
  PrintPeaks(facts, measured, roof);
  return 0;
}
