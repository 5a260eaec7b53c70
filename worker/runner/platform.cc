#include "worker/runner/platform.h"

#include <dlfcn.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/cpu_places.h"
#include "common/fnv1a.h"
#include "common/state_dir.h"
#include "hostfacts/host_facts.h"
#include "platform/silicon_peak.h"

namespace paradnn::runner {
namespace {

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return path;
  return resolved;
}

// Paths of every shared object in the process, in load order.
std::vector<std::string> LoadedLibraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  return paths;
}

std::string NameBlasFamily(const std::string& path) {
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::StrContains(lower, "openblas")) return "OpenBLAS";
  if (absl::StrContains(lower, "blis")) return "BLIS";
  if (absl::StrContains(lower, "mkl")) return "MKL";
  if (absl::StrContains(lower, "atlas")) return "ATLAS";
  if (absl::StrContains(lower, "/blas/") || absl::StrContains(lower, "libblas.so")) {
    return "reference BLAS";
  }
  return "unknown BLAS";
}

std::string FieldText(const google::protobuf::Message& message,
                      const google::protobuf::FieldDescriptor* field) {
  const auto* reflection = message.GetReflection();
  using FD = google::protobuf::FieldDescriptor;
  switch (field->cpp_type()) {
    case FD::CPPTYPE_STRING:
      return reflection->GetString(message, field);
    case FD::CPPTYPE_INT32:
      return absl::StrCat(reflection->GetInt32(message, field));
    case FD::CPPTYPE_INT64:
      return absl::StrCat(reflection->GetInt64(message, field));
    case FD::CPPTYPE_UINT32:
      return absl::StrCat(reflection->GetUInt32(message, field));
    case FD::CPPTYPE_UINT64:
      return absl::StrCat(reflection->GetUInt64(message, field));
    case FD::CPPTYPE_BOOL:
      return reflection->GetBool(message, field) ? "true" : "false";
    case FD::CPPTYPE_DOUBLE:
      return absl::StrCat(reflection->GetDouble(message, field));
    case FD::CPPTYPE_FLOAT:
      return absl::StrCat(reflection->GetFloat(message, field));
    case FD::CPPTYPE_ENUM:
      return absl::StrCat(reflection->GetEnumValue(message, field));
    case FD::CPPTYPE_MESSAGE:
      return reflection->GetMessage(message, field).ShortDebugString();
  }
  return "";
}

// The host's CPU topology narrowed to the CPUs this process may run on
// (sched_getaffinity: the worker's --cpus, taskset, a cgroup cpuset):
// logical_cpus counts them, cores their distinct (package, core) pairs and
// sockets their packages, so that a worker confined to one CPU reports one
// CPU, its silicon peaks count its own cores and its fingerprint differs
// from a 2-CPU worker's. The CPU ids themselves are kept out: two
// equal-sized sets of one host (the ranks of a gang) describe one
// platform. Unconfined, the host's figures as /proc/cpuinfo gives them.
hostfacts::CpuTopology UsableCpuTopology() {
  hostfacts::CpuTopology topo = hostfacts::ReadCpuTopology();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return topo;
  const int usable = CPU_COUNT(&set);
  if (usable <= 0 || usable >= topo.logical_cpus) return topo;
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  std::set<std::pair<int, int>> cores;
  std::set<int> packages;
  bool known = true;
  for (const common::CpuPlace& place : common::ReadCpuPlaces(cpus)) {
    known = known && place.topology_known;
    cores.emplace(place.package, place.core);
    packages.insert(place.package);
  }
  if (known) {
    topo.cores = static_cast<int>(cores.size());
    topo.sockets = static_cast<int>(packages.size());
  } else {
    // No sysfs topology: the host's cores per logical CPU, rounded up.
    const int per_host = std::max(1, topo.cores);
    topo.cores =
        std::clamp((usable * per_host + topo.logical_cpus - 1) / topo.logical_cpus, 1, usable);
    topo.sockets = std::clamp(topo.sockets, 1, topo.cores);
  }
  topo.logical_cpus = usable;
  return topo;
}

}  // namespace

std::string PlatformFingerprint(const v1::Platform& platform) {
  const google::protobuf::Descriptor* descriptor = platform.GetDescriptor();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  fields.reserve(static_cast<size_t>(descriptor->field_count()));
  for (int i = 0; i < descriptor->field_count(); ++i) fields.push_back(descriptor->field(i));
  std::sort(fields.begin(), fields.end(),
            [](const auto* a, const auto* b) { return a->number() < b->number(); });
  std::string canonical;
  for (const auto* field : fields) {
    // The clocks are facts of the moment, not of the stack (cpu MHz, the
    // base clock's last resort, moves on hosts without intel_pstate; a
    // measured clock varies from run to run), and so is the probe at start.
    // A field added to Platform must be named here unless it describes the
    // stack: every field is hashed, so a new one, even at 0, changes every
    // fingerprint (and splits each platform's history in two).
    if (field->name() == "hostname" || field->name() == "fingerprint" ||
        field->name() == "calibrated_unix_ms" || field->name() == "base_clock_hz" ||
        field->name() == "max_clock_hz" || field->name() == "measured_clock_hz" ||
        field->name() == "measured_clock_method" || field->name() == "start_probe_flops_per_sec" ||
        field->is_repeated()) {
      continue;
    }
    absl::StrAppend(&canonical, field->name(), "=", FieldText(platform, field), "\n");
  }
  return absl::StrFormat("%016x", common::Fnv1a64(canonical));
}

LoadedBlas DescribeLoadedBlas() {
  LoadedBlas blas;
  if (void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_"); sgemm != nullptr) {
    Dl_info info{};
    if (dladdr(sgemm, &info) != 0 && info.dli_fname != nullptr) {
      blas.path = RealPath(info.dli_fname);
    }
  }
  if (blas.path.empty()) {
    for (const std::string& lib : LoadedLibraries()) {
      const std::string base = lib.substr(lib.find_last_of('/') + 1);
      if (absl::StartsWith(base, "libblas.so") || absl::StartsWith(base, "libopenblas") ||
          absl::StartsWith(base, "libmkl_rt") || absl::StartsWith(base, "libblis")) {
        blas.path = RealPath(lib);
        break;
      }
    }
  }
  if (blas.path.empty()) {
    blas.description = "none found (no sgemm_ in the process)";
    return blas;
  }
  const std::string family = NameBlasFamily(blas.path);
  using ConfigFn = const char* (*)();
  auto config = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  if (family == "OpenBLAS" && config != nullptr) {
    std::string text = absl::StrCat(absl::StripAsciiWhitespace(config()));
    if (!absl::StartsWith(text, "OpenBLAS")) text = absl::StrCat("OpenBLAS ", text);
    blas.description = absl::StrCat(text, " (", blas.path, ")");
  } else {
    blas.description = absl::StrCat(family, " (", blas.path, ")");
  }
  return blas;
}

OpenBlasCore DescribeOpenBlasCore() {
  OpenBlasCore core;
  using CoreNameFn = const char* (*)();
  if (auto name = reinterpret_cast<CoreNameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) {
    if (const char* text = name(); text != nullptr) core.name = text;
  }
  const char* choice = std::getenv("PARADNN_BLAS_CORE_CHOICE");
  if (choice != nullptr && *choice != '\0') {
    core.choice = choice;
  } else if (const char* forced = std::getenv("OPENBLAS_CORETYPE");
             forced != nullptr && *forced != '\0') {
    core.choice = "environment";
  } else {
    core.choice = "as-installed";
  }
  return core;
}

std::string FlushDenormalState() {
#if defined(__x86_64__) || defined(__i386__)
  const unsigned csr = _mm_getcsr();
  const bool ftz = (csr & 0x8000) != 0;
  const bool daz = (csr & 0x40) != 0;
  if (ftz && daz) return "on";
  if (ftz) return "ftz only";
  if (daz) return "daz only";
  return "off";
#else
  return "";
#endif
}

int SetBlasThreads(int threads) {
  using SetFn = void (*)(int);
  if (auto set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set(threads);
    return GetBlasThreads();
  }
  using BlisSetFn = void (*)(long);  // NOLINT(runtime/int): BLIS's dim_t
  if (auto set = reinterpret_cast<BlisSetFn>(dlsym(RTLD_DEFAULT, "bli_thread_set_num_threads"))) {
    set(threads);
    return GetBlasThreads();
  }
  return -1;
}

int GetBlasThreads() {
  using GetFn = int (*)();
  if (auto get = reinterpret_cast<GetFn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))) {
    return get();
  }
  using BlisGetFn = long (*)();  // NOLINT(runtime/int)
  if (auto get = reinterpret_cast<BlisGetFn>(dlsym(RTLD_DEFAULT, "bli_thread_get_num_threads"))) {
    return static_cast<int>(get());
  }
  return -1;
}

std::string SummarizeParallelBackend(absl::string_view parallel_info, absl::string_view show_config,
                                     const std::vector<std::pair<std::string, std::string>>& env) {
  std::string backend, openmp, mkl, dnn, capability;
  for (absl::string_view raw : absl::StrSplit(parallel_info, '\n')) {
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(line, "ATen parallel backend:")) {
      backend = std::string(absl::StripAsciiWhitespace(line.substr(22)));
    } else if (absl::StartsWith(line, "OpenMP") && !absl::StrContains(line, "not found")) {
      openmp = std::string(line);
    } else if (absl::StrContains(line, "MKL-DNN") || absl::StrContains(line, "oneDNN")) {
      dnn = std::string(line.substr(0, line.find(" (Git Hash")));
    } else if (absl::StrContains(line, "Math Kernel Library")) {
      mkl = std::string(line);
    }
  }
  capability = ParseAtenCpuCapability(show_config);
  std::vector<std::string> parts;
  if (!backend.empty() || !openmp.empty()) {
    parts.push_back(backend.empty()  ? openmp
                    : openmp.empty() ? backend
                                     : absl::StrCat(backend, " [", openmp, "]"));
  }
  for (const std::string* part : {&mkl, &dnn}) {
    if (!part->empty()) parts.push_back(*part);
  }
  if (!capability.empty()) parts.push_back(absl::StrCat("CPU capability ", capability));
  for (const auto& [name, value] : env) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrJoin(parts, "; ");
}

std::vector<std::pair<std::string, std::string>> ParallelEnvironment() {
  std::vector<std::pair<std::string, std::string>> env;
  for (const char* name : kParallelEnvVars) {
    if (const char* value = std::getenv(name); value != nullptr) env.emplace_back(name, value);
  }
  return env;
}

std::string CompilerDescription() {
#if defined(__clang__)
  return __VERSION__;  // "Clang 14.0.6 ..." or "Debian Clang ..."
#elif defined(__GNUC__)
  return absl::StrCat("GCC ", __VERSION__);
#else
  return "unknown";
#endif
}

double SecondsSinceProcessStart() {
  // Field 22 of /proc/self/stat is the start time in clock ticks since boot;
  // the command name (field 2) may contain spaces, so count after its ')'.
  const std::string stat = hostfacts::ReadTextFile("/proc/self/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(paren + 1), ' ', absl::SkipEmpty());
  // After ')' the first field is field 3 (state); field 22 is index 19.
  double start_ticks = 0, uptime = 0;
  if (fields.size() < 20 || !absl::SimpleAtod(fields[19], &start_ticks)) return -1;
  const std::string uptime_text = hostfacts::ReadTextFile("/proc/uptime");
  std::vector<absl::string_view> parts = absl::StrSplit(uptime_text, ' ', absl::SkipEmpty());
  if (parts.empty() || !absl::SimpleAtod(parts[0], &uptime)) return -1;
  const long ticks = sysconf(_SC_CLK_TCK);  // NOLINT(runtime/int)
  if (ticks <= 0) return -1;
  return uptime - start_ticks / static_cast<double>(ticks);
}

std::string OneDnnIsaName(unsigned value) {
  // dnnl_cpu_isa_t (dnnl_types.h): each value is a bit set of the ISA and
  // everything below it.
  static constexpr std::pair<unsigned, const char*> kIsas[] = {
      {0x0, "ALL"},
      {0x1, "SSE41"},
      {0x3, "AVX"},
      {0x7, "AVX2"},
      {0x407, "AVX2_VNNI"},
      {0x1407, "AVX2_VNNI_2"},
      {0xf, "AVX512_MIC"},
      {0x1f, "AVX512_MIC_4OPS"},
      {0x27, "AVX512_CORE"},
      {0x67, "AVX512_CORE_VNNI"},
      {0xe7, "AVX512_CORE_BF16"},
      {0x1ef, "AVX512_CORE_FP16"},
      {0x3e7, "AVX512_CORE_AMX"},
      {0x7ef, "AVX512_CORE_AMX_FP16"},
  };
  for (const auto& [isa, name] : kIsas) {
    if (isa == value) return name;
  }
  return absl::StrFormat("0x%x", value);
}

LoadedOneDnn DescribeLoadedOneDnn() {
  // dnnl_version_t of oneDNN 2.x and 3.x begins with these fields.
  struct DnnlVersion {
    int major;
    int minor;
    int patch;
    const char* hash;
  };
  LoadedOneDnn dnn;
  using VersionFn = const DnnlVersion* (*)();
  if (auto version = reinterpret_cast<VersionFn>(dlsym(RTLD_DEFAULT, "dnnl_version"))) {
    if (const DnnlVersion* v = version(); v != nullptr) {
      dnn.version = absl::StrCat(v->major, ".", v->minor, ".", v->patch);
    }
  }
  using IsaFn = unsigned (*)();  // dnnl_cpu_isa_t, a C enum
  if (auto isa = reinterpret_cast<IsaFn>(dlsym(RTLD_DEFAULT, "dnnl_get_effective_cpu_isa"))) {
    dnn.max_isa = OneDnnIsaName(isa());
  }
  return dnn;
}

std::string ParseOneDnnVersion(absl::string_view mkldnn_version) {
  for (absl::string_view word : absl::StrSplit(mkldnn_version, ' ', absl::SkipEmpty())) {
    if (word.size() > 1 && (word[0] == 'v' || word[0] == 'V') && absl::ascii_isdigit(word[1])) {
      return std::string(word.substr(1));
    }
  }
  return "";
}

std::string ParseAtenCpuCapability(absl::string_view show_config) {
  for (absl::string_view raw : absl::StrSplit(show_config, '\n')) {
    const size_t at = raw.find("CPU capability usage:");
    if (at != absl::string_view::npos) {
      return std::string(absl::StripAsciiWhitespace(raw.substr(at + 21)));
    }
  }
  return "";
}

std::string DescribeIsaPaths(absl::string_view aten_capability, absl::string_view onednn_isa,
                             const std::vector<std::string>& cpu_flags) {
  const std::set<std::string> flags(cpu_flags.begin(), cpu_flags.end());
  const bool bf16 = flags.count("avx512_bf16") > 0;
  const bool amx =
      flags.count("amx_tile") > 0 && (flags.count("amx_bf16") > 0 || flags.count("amx_int8") > 0);
  std::vector<std::string> parts;
  if (!aten_capability.empty()) parts.push_back(absl::StrCat("ATen ", aten_capability));
  if (!onednn_isa.empty()) parts.push_back(absl::StrCat("oneDNN ", onednn_isa));
  parts.push_back(absl::StrCat("AVX-512 BF16: ", bf16 ? "yes" : "no"));
  parts.push_back(absl::StrCat("AMX: ", amx ? "yes" : "no"));
  return absl::StrJoin(parts, "; ");
}

int ConfiguredFmaUnits() {
  int units = 0;
  const char* text = std::getenv("PARADNN_FMA_UNITS");
  if (text == nullptr || !absl::SimpleAtoi(text, &units) || units < 1 || units > 8) return 0;
  return units;
}

std::string DefaultRunnerStateDir() {
  if (const char* dir = std::getenv("PARADNN_STATE_DIR"); dir != nullptr && dir[0] != '\0') {
    return dir;
  }
  return common::DefaultStateDir();
}

platform::CpuPeakFacts HostCpuPeakFacts(double measured_clock_hz) {
  // The cores this process may use: a confined worker's peak is its share.
  const hostfacts::CpuTopology topo = UsableCpuTopology();
  const hostfacts::CpuClocks clocks = hostfacts::ReadCpuClocks(topo);
  platform::CpuPeakFacts facts;
  facts.vendor = topo.vendor;
  facts.family = topo.family;
  facts.model = topo.model;
  facts.flags = topo.flags;
  // Distinct (socket, core) pairs among the CPUs this process may use.
  facts.cores = topo.cores;
  facts.base_clock_hz = clocks.base_hz;
  facts.max_clock_hz = clocks.max_hz;
  facts.base_clock_label = clocks.base_label;
  facts.measured_clock_hz = measured_clock_hz;
  facts.fma_units = ConfiguredFmaUnits();
  return facts;
}

void RecordMeasuredClock(const CoreClock& clock, v1::Platform* platform) {
  if (!(clock.hz > 0)) return;
  platform->set_measured_clock_hz(clock.hz);
  platform->set_measured_clock_method(clock.method);
  // A CUDA platform's peaks are the GPU's; only the CPU's follow its clock.
  if (platform->device_kind() != "cpu") return;
  platform->clear_silicon_peaks();
  for (v1::SiliconPeak& peak : platform::CpuSiliconPeaks(HostCpuPeakFacts(clock.hz))) {
    *platform->add_silicon_peaks() = std::move(peak);
  }
}

void FillHostPlatform(v1::Platform* platform) {
  // sockets, cores and logical_cpus of this process's affinity (and so the
  // fingerprint); the rest describes the host.
  const hostfacts::CpuTopology topo = UsableCpuTopology();
  platform->set_device_kind("cpu");
  platform->set_device_name(topo.model_name.empty() ? "unknown CPU" : topo.model_name);
  platform->set_hostname(hostfacts::HostName());
  platform->set_sockets(topo.sockets);
  platform->set_cores(topo.cores);
  platform->set_logical_cpus(topo.logical_cpus);
  platform->set_memory_bytes(hostfacts::HostMemoryBytes());
  platform->set_os(hostfacts::KernelRelease());
  platform->set_blas_backend(DescribeLoadedBlas().description);
  platform->set_compiler(CompilerDescription());
  platform->set_cpu_flags(hostfacts::RelevantCpuFlags(topo.flags));
  platform->set_cpu_vendor(topo.vendor);
  platform->set_cpu_family(topo.family);
  platform->set_cpu_model(topo.model);
  // No measured clock here: measuring takes some 50 ms of every core, which
  // calibration spends (RecordMeasuredClock) and a job must not.
  const platform::CpuPeakFacts facts = HostCpuPeakFacts(/*measured_clock_hz=*/0);
  platform->set_base_clock_hz(facts.base_clock_hz);
  platform->set_max_clock_hz(facts.max_clock_hz);
  for (v1::SiliconPeak& peak : platform::CpuSiliconPeaks(facts)) {
    *platform->add_silicon_peaks() = std::move(peak);
  }
  platform->set_cache_sizes(FormatCacheSizes(ReadCpuCaches()));
  platform->set_frequency_governor(hostfacts::ReadFrequencyGovernor());
  platform->set_boost(hostfacts::ReadBoostState());
}

}  // namespace paradnn::runner
