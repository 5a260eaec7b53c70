// The runner's v1::Platform: the host facts (hostfacts/host_facts.h) and
// the process's libraries made into its fields and fingerprint, and control
// of the BLAS library LibTorch calls for float32 matmuls. Torch-free; the
// LibTorch facts (version, thread defaults, parallel backend) are added by
// CollectPlatform() in platform_torch.h.
#ifndef PARADNN_WORKER_RUNNER_PLATFORM_H_
#define PARADNN_WORKER_RUNNER_PLATFORM_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "paradnn/v1/metrics.pb.h"
#include "platform/silicon_peak.h"
#include "worker/runner/core_clock.h"
#include "worker/runner/cpu_caches.h"

namespace paradnn::runner {

// Hex FNV-1a over "name=value\n" for every Platform field except hostname,
// fingerprint, the calibration (repeated roofs, calibrated_unix_ms) and the
// clocks (reported and measured: facts of the moment), in field-number
// order: stable across protobuf versions and independent of serialization
// order.
std::string PlatformFingerprint(const v1::Platform& platform);

// The BLAS that float32 matmuls go to: the library that provides `sgemm_`
// in the process's global symbol scope (what LibTorch's own sgemm_ call
// binds to), resolved through symlinks and alternatives.
struct LoadedBlas {
  std::string path;         // realpath of the providing library; "" if none
  std::string description;  // e.g. "OpenBLAS 0.3.21 ... (/usr/lib/.../libblas.so.3)"
};

// Describes the loaded BLAS. Call after LibTorch is loaded (any process
// linking it); OpenBLAS reports its build via openblas_get_config.
LoadedBlas DescribeLoadedBlas();

// Sets the BLAS library's own thread pool size (OpenBLAS and BLIS keep one
// apart from LibTorch's OpenMP threads). Returns the thread count in effect
// afterwards, or -1 when the loaded BLAS offers no such control.
int SetBlasThreads(int threads);

// The OpenBLAS kernel set in use and how it came to be: `name` from
// openblas_get_corename ("" when the BLAS is not OpenBLAS); `choice` from
// $PARADNN_BLAS_CORE_CHOICE ("auto" or "forced", set with OPENBLAS_CORETYPE
// by the worker or the runner's --blas-core), else "environment" when
// OPENBLAS_CORETYPE is set by someone else, else "as-installed".
struct OpenBlasCore {
  std::string name;
  std::string choice;
};
OpenBlasCore DescribeOpenBlasCore();

// "on" when MXCSR flushes denormals (FTZ and DAZ; denormal_env.cc), "off"
// when neither, "ftz only" / "daz only"; "" off x86.
std::string FlushDenormalState();

// The BLAS thread pool size, or -1 when unknown.
int GetBlasThreads();

// Environment variables that change how LibTorch's OpenMP and oneDNN
// threads behave; the ones set are part of Platform.parallel_backend.
inline constexpr const char* kParallelEnvVars[] = {
    "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",      "OMP_PROC_BIND",      "OMP_PLACES",
    "KMP_BLOCKTIME",   "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"};

// Platform.parallel_backend from the text of at::get_parallel_info() and
// at::show_config() and the kParallelEnvVars that are set (`env`, name and
// value), e.g. "OpenMP [OpenMP 201511 (a.k.a. OpenMP 4.5)]; Intel(R) MKL-DNN
// v2.6.3; CPU capability AVX2; GOMP_SPINCOUNT=3000". Thread counts are left
// out: they are in default_intra_op_threads and in each Measurement.
std::string SummarizeParallelBackend(absl::string_view parallel_info, absl::string_view show_config,
                                     const std::vector<std::pair<std::string, std::string>>& env);

// The kParallelEnvVars set in this process's environment.
std::vector<std::pair<std::string, std::string>> ParallelEnvironment();

// Compiler of this binary, e.g. "GCC 12.2.0".
std::string CompilerDescription();

// The oneDNN library loaded in this process (LibTorch's mkldnn backend),
// found through its C API symbols in the global scope.
struct LoadedOneDnn {
  std::string version;  // "2.6.3"; "" when no oneDNN is loaded
  std::string max_isa;  // dnnl_get_effective_cpu_isa, e.g. "AVX512_CORE_BF16"; "" if unknown
};

// Describes the loaded oneDNN. Call in a process that links LibTorch.
LoadedOneDnn DescribeLoadedOneDnn();

// The name of a dnnl_cpu_isa_t value (oneDNN 2.x/3.x numbering), e.g.
// 0xe7 -> "AVX512_CORE_BF16"; unknown values as hex, "0x1234".
std::string OneDnnIsaName(unsigned value);

// "2.6.3" from at::get_mkldnn_version() text such as
// "Intel(R) MKL-DNN v2.6.3 (Git Hash ...)"; "" when none is named.
std::string ParseOneDnnVersion(absl::string_view mkldnn_version);

// ATen's CPU capability ("AVX2", "AVX512", "DEFAULT") from the
// "CPU capability usage:" line of at::show_config(); "" if absent.
std::string ParseAtenCpuCapability(absl::string_view show_config);

// Platform.isa_paths: the kernels ATen and oneDNN dispatch to and whether the
// CPU offers AVX-512 BF16 and AMX, e.g.
// "ATen AVX512; oneDNN AVX512_CORE_AMX; AVX-512 BF16: yes; AMX: yes".
// Empty `aten_capability` / `onednn_isa` are left out; `cpu_flags` are the
// flags of /proc/cpuinfo (AMX means amx_tile with amx_bf16 or amx_int8).
std::string DescribeIsaPaths(absl::string_view aten_capability, absl::string_view onednn_isa,
                             const std::vector<std::string>& cpu_flags);

// Where the runner caches what it learns about the host (the stack doctor's
// decision): $PARADNN_STATE_DIR (the worker's --state-dir), else
// $XDG_STATE_HOME/paradnn, else $HOME/.local/state/paradnn, else
// ./.paradnn-state, as the worker's DefaultStateDir.
std::string DefaultRunnerStateDir();

// FMA units per core for the float32 peak, from $PARADNN_FMA_UNITS (the
// worker's --fma-units); 0 = the default assumption (platform/silicon_peak.h).
int ConfiguredFmaUnits();

// The facts of this host's CPU silicon peaks (platform::CpuSiliconPeaks) from
// /proc/cpuinfo, cpufreq and $PARADNN_FMA_UNITS, with `measured_clock_hz`
// (core_clock.h; 0 = not measured) beside the clocks the OS reports.
platform::CpuPeakFacts HostCpuPeakFacts(double measured_clock_hz);

// Records `clock` in `platform`: measured_clock_hz and measured_clock_method
// (both left unset when it was not measured) and, on a CPU platform, the
// silicon peaks computed again with the measured clock. The fingerprint
// stays as it is: PlatformFingerprint leaves the measured clock out, because
// it varies from run to run.
void RecordMeasuredClock(const CoreClock& clock, v1::Platform* platform);

// Fills the host fields of `platform`: device_kind "cpu", device_name,
// hostname, sockets, cores, logical_cpus, memory_bytes, os, blas_backend,
// compiler, cpu_flags, cache_sizes, frequency_governor, boost, the CPUID
// vendor/family/model, clocks and the silicon peaks computed from them. Leaves the
// LibTorch fields (onednn_version, isa_paths among them) and the fingerprint.
void FillHostPlatform(v1::Platform* platform);

// Seconds since this process started (exec-preserving, so a re-exec does not
// reset it), from /proc/self/stat and /proc/uptime at clock-tick resolution
// (usually 10 ms); -1 if unavailable.
double SecondsSinceProcessStart();

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_PLATFORM_H_
