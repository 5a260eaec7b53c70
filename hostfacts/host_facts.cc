#include "hostfacts/host_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paradnn::hostfacts {
namespace {

// Splits "key<TAB>: value" lines of /proc/cpuinfo and /proc/meminfo.
std::pair<absl::string_view, absl::string_view> SplitKeyValue(absl::string_view line) {
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return {absl::StripAsciiWhitespace(line), {}};
  return {absl::StripAsciiWhitespace(line.substr(0, colon)),
          absl::StripAsciiWhitespace(line.substr(colon + 1))};
}

}  // namespace

CpuTopology ParseCpuInfo(absl::string_view cpuinfo, const std::vector<int>& only_cpus) {
  CpuTopology topo;
  std::set<std::string> sockets;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id;
  bool have_core_ids = false;
  bool counted = true;  // whether the current processor is among only_cpus
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    auto [key, value] = SplitKeyValue(line);
    if (key == "processor") {
      int number = -1;
      counted = only_cpus.empty() ||
                (absl::SimpleAtoi(value, &number) &&
                 std::find(only_cpus.begin(), only_cpus.end(), number) != only_cpus.end());
      if (counted) ++topo.logical_cpus;
      physical_id.clear();
    } else if (!counted) {
      continue;
    } else if (key == "model name" && topo.model_name.empty()) {
      topo.model_name = std::string(value);
    } else if (key == "physical id") {
      physical_id = std::string(value);
      sockets.insert(physical_id);
    } else if (key == "core id") {
      have_core_ids = true;
      cores.emplace(physical_id, std::string(value));
    } else if (key == "vendor_id" && topo.vendor.empty()) {
      topo.vendor = std::string(value);
    } else if (key == "cpu family" && topo.family == 0) {
      (void)absl::SimpleAtoi(value, &topo.family);
    } else if (key == "model" && topo.model == 0) {
      (void)absl::SimpleAtoi(value, &topo.model);
    } else if (key == "cpu MHz" && topo.mhz == 0) {
      (void)absl::SimpleAtod(value, &topo.mhz);
    } else if ((key == "flags" || key == "Features") && topo.flags.empty()) {
      for (absl::string_view flag : absl::StrSplit(value, ' ', absl::SkipEmpty())) {
        topo.flags.emplace_back(flag);
      }
    }
  }
  topo.sockets = sockets.empty() ? 1 : static_cast<int>(sockets.size());
  topo.cores = have_core_ids ? static_cast<int>(cores.size()) : topo.logical_cpus;
  return topo;
}

int64_t ParseMemTotalBytes(absl::string_view meminfo) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    auto [key, value] = SplitKeyValue(line);
    if (key != "MemTotal") continue;
    std::vector<absl::string_view> parts = absl::StrSplit(value, ' ', absl::SkipEmpty());
    int64_t amount = 0;
    if (parts.empty() || !absl::SimpleAtoi(parts[0], &amount)) return -1;
    const bool kib = parts.size() > 1 && absl::AsciiStrToLower(parts[1]) == "kb";
    return kib ? amount * 1024 : amount;
  }
  return -1;
}

std::string RelevantCpuFlags(const std::vector<std::string>& flags) {
  const std::set<std::string> present(flags.begin(), flags.end());
  std::string out;
  for (const char* flag : kRelevantCpuFlags) {
    if (present.count(flag) > 0) absl::StrAppend(&out, out.empty() ? "" : " ", flag);
  }
  return out;
}

CpuClocks ParseCpuClocks(absl::string_view base_frequency_khz, absl::string_view max_frequency_khz,
                         const CpuTopology& topology) {
  CpuClocks clocks;
  double khz = 0;
  if (absl::SimpleAtod(absl::StripAsciiWhitespace(max_frequency_khz), &khz) && khz > 0) {
    clocks.max_hz = khz * 1e3;
  }
  if (absl::SimpleAtod(absl::StripAsciiWhitespace(base_frequency_khz), &khz) && khz > 0) {
    clocks.base_hz = khz * 1e3;
    clocks.base_label = "base clock";
    return clocks;
  }
  // "Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz"
  const size_t at = topology.model_name.rfind('@');
  double ghz = 0;
  if (at != std::string::npos) {
    absl::string_view rest =
        absl::StripAsciiWhitespace(absl::string_view(topology.model_name).substr(at + 1));
    if (absl::ConsumeSuffix(&rest, "GHz") && absl::SimpleAtod(rest, &ghz) && ghz > 0) {
      clocks.base_hz = ghz * 1e9;
      clocks.base_label = "model name clock";
      return clocks;
    }
  }
  if (topology.mhz > 0) {
    clocks.base_hz = topology.mhz * 1e6;
    clocks.base_label = "cpu MHz of /proc/cpuinfo";
  }
  return clocks;
}

std::string BoostState(absl::string_view cpufreq_boost, absl::string_view intel_no_turbo) {
  const absl::string_view boost = absl::StripAsciiWhitespace(cpufreq_boost);
  if (boost == "1") return "on";
  if (boost == "0") return "off";
  const absl::string_view no_turbo = absl::StripAsciiWhitespace(intel_no_turbo);
  if (no_turbo == "1") return "off";
  if (no_turbo == "0") return "on";
  return "";
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

CpuTopology ReadCpuTopology(const std::vector<int>& only_cpus) {
  CpuTopology topo = ParseCpuInfo(ReadTextFile("/proc/cpuinfo"), only_cpus);
  if (topo.logical_cpus == 0) {
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);  // NOLINT(runtime/int): sysconf's
    topo.logical_cpus = !only_cpus.empty() ? static_cast<int>(only_cpus.size())
                        : online > 0       ? static_cast<int>(online)
                                           : 0;
    topo.cores = topo.logical_cpus;
  }
  return topo;
}

CpuClocks ReadCpuClocks(const CpuTopology& topology) {
  return ParseCpuClocks(ReadTextFile("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency"),
                        ReadTextFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
                        topology);
}

int64_t HostMemoryBytes() { return ParseMemTotalBytes(ReadTextFile("/proc/meminfo")); }

int64_t UsableMemoryBytes() {
  int64_t memory = HostMemoryBytes();
  int64_t limit = 0;
  if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadTextFile("/sys/fs/cgroup/memory.max")),
                       &limit) &&
      limit > 0 && (memory <= 0 || limit < memory)) {
    memory = limit;
  }
  return memory;
}

std::string ReadFrequencyGovernor() {
  return std::string(absl::StripAsciiWhitespace(
      ReadTextFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")));
}

std::string ReadBoostState() {
  return BoostState(ReadTextFile("/sys/devices/system/cpu/cpufreq/boost"),
                    ReadTextFile("/sys/devices/system/cpu/intel_pstate/no_turbo"));
}

std::string KernelRelease() {
  struct utsname uts {};
  return ::uname(&uts) == 0 ? std::string(uts.release) : "";
}

std::string HostName() {
  char host[256] = {};
  return ::gethostname(host, sizeof(host) - 1) == 0 ? std::string(host) : "";
}

}  // namespace paradnn::hostfacts
