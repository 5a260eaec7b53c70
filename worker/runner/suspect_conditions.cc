#include "worker/runner/suspect_conditions.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace paradnn::runner {

bool IsReferenceBlas(absl::string_view blas_backend) {
  const std::string lower = absl::AsciiStrToLower(blas_backend);
  for (const char* optimized : {"openblas", "mkl", "blis", "atlas", "accelerate"}) {
    if (absl::StrContains(lower, optimized)) return false;
  }
  // Debian installs the Netlib library as .../blas/libblas.so.3;
  // DescribeLoadedBlas names it "reference BLAS (path)".
  return absl::StartsWith(lower, "reference blas") || absl::StrContains(lower, "/blas/libblas.so");
}

std::optional<std::string> ReferenceBlasCondition(absl::string_view blas_backend) {
  if (!IsReferenceBlas(blas_backend)) return std::nullopt;
  return "reference BLAS in use: matmul throughput is ~13x below OpenBLAS on this class of CPU";
}

std::optional<double> ParseLoadAverage1(absl::string_view loadavg) {
  std::vector<absl::string_view> fields = absl::StrSplit(loadavg, ' ', absl::SkipWhitespace());
  double load = 0;
  if (fields.empty() || !absl::SimpleAtod(absl::StripAsciiWhitespace(fields[0]), &load) ||
      !std::isfinite(load) || load < 0) {
    return std::nullopt;
  }
  return load;
}

std::optional<std::string> HostLoadCondition(std::optional<double> load_at_start,
                                             std::optional<double> load_at_end, int runner_threads,
                                             int logical_cpus) {
  if (logical_cpus <= 0 || (!load_at_start && !load_at_end)) return std::nullopt;
  const double load = std::max(load_at_start.value_or(0), load_at_end.value_or(0));
  const double others = load - std::max(runner_threads, 0);
  if (others <= kBusyLoadPerCpu * logical_cpus) return std::nullopt;
  return absl::StrFormat("host busy: load average %.2f on %d CPUs", load, logical_cpus);
}

std::optional<std::string> GovernorCondition(absl::string_view governor) {
  const absl::string_view name = absl::StripAsciiWhitespace(governor);
  if (name.empty() || name == "performance") return std::nullopt;
  return absl::StrCat("cpu frequency scaling: governor ", name);
}

std::optional<std::string> NoisyStepsCondition(double cv) {
  if (!(cv > kNoisyStepsCv)) return std::nullopt;
  return absl::StrFormat("noisy steps: CV %.0f %%", cv * 100);
}

std::optional<std::string> HostSpeedCondition(std::optional<double> ratio_before,
                                              std::optional<double> ratio_after) {
  const bool slow = (ratio_before && *ratio_before < kSlowHostProbeRatio) ||
                    (ratio_after && *ratio_after < kSlowHostProbeRatio);
  if (!slow) return std::nullopt;
  auto percent = [](std::optional<double> ratio) {
    return ratio ? absl::StrFormat("%.0f %%", *ratio * 100) : std::string("not measured");
  };
  return absl::StrCat("host slower than at calibration: matmul probe at ", percent(ratio_before),
                      " of its calibrated speed before timing, ", percent(ratio_after), " after");
}

std::optional<std::string> SubnormalCondition(std::optional<double> fraction,
                                              absl::string_view flush_denormal) {
  if (!fraction || !(*fraction > kSubnormalGradientFraction)) return std::nullopt;
  return absl::StrFormat(
      "denormals: %.1f %% of gradient values are subnormal (denormal arithmetic is 10-100x slower "
      "on x86); flush-to-zero is %s%s",
      *fraction * 100, flush_denormal.empty() ? "unknown" : std::string(flush_denormal),
      flush_denormal == "on" ? ""
                             : " (the runner's default is on; PARADNN_FLUSH_DENORMAL=off "
                               "turned it off)");
}

std::optional<std::string> NonFiniteLossCondition(double first_loss, double last_loss) {
  if (std::isfinite(last_loss)) return std::nullopt;
  return absl::StrFormat(
      "loss not finite: %g at the last timed step (%g at the first warm-up step): the model "
      "diverged or a kernel computed wrong values; the step times stand, the training does not",
      last_loss, first_loss);
}

std::vector<std::string> SuspectConditions(const SuspectFacts& facts) {
  std::vector<std::string> out;
  for (std::optional<std::string> condition :
       {ReferenceBlasCondition(facts.blas_backend),
        HostLoadCondition(facts.load_at_start, facts.load_at_end, facts.runner_threads,
                          facts.logical_cpus),
        GovernorCondition(facts.governor), NoisyStepsCondition(facts.steps_cv),
        HostSpeedCondition(facts.probe_ratio_before, facts.probe_ratio_after),
        SubnormalCondition(facts.subnormal_gradient_fraction, facts.flush_denormal),
        NonFiniteLossCondition(facts.first_loss, facts.last_loss)}) {
    if (condition) out.push_back(*std::move(condition));
  }
  return out;
}

std::optional<double> HostLoadAverage1() {
  std::ifstream in("/proc/loadavg");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return ParseLoadAverage1(text.str());
}

}  // namespace paradnn::runner
