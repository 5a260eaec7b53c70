// The stack doctor: which kernel sets the libraries under LibTorch run. Its
// first setting is the OpenBLAS kernel set ("core") float32 matmuls run on. Debian's OpenBLAS
// 0.3.21 does not know some CPUs (Intel family 6 model 207) and falls back to its Prescott (SSE3)
// kernels, 4x slower than the AVX-512 ones the CPU runs correctly. The doctor tries the cores the
// CPU's flags allow, each in a fresh `paradnn-runner
// --blas-trial` (OpenBLAS reads OPENBLAS_CORETYPE once, when it loads),
// checks each one's float32 GEMM against a float64 reference, and keeps the
// fastest correct one. ATen's CPU capability is decided the same way, on
// elementwise kernels. Torch-free: the trials themselves are in
// calibration.cc.
#ifndef PARADNN_WORKER_RUNNER_STACK_DOCTOR_H_
#define PARADNN_WORKER_RUNNER_STACK_DOCTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/metrics.pb.h"
#include "platform/stack_findings.h"

namespace paradnn::runner {

// A core is correct when no sampled element of its float32 GEMM is further
// from the float64 reference than this, relative to sum |a_ik b_kj| (float32
// rounding gives ~1e-7 at the trial's k).
inline constexpr double kMaxGemmRelativeError = 1e-4;
// The ATen trial's elementwise results (sigmoid, tanh, GELU, softmax, an
// RMSprop update) against float64, relative to max(|reference|, 1):
// vectorized float32 transcendentals are within a few ulp (~1e-6).
inline constexpr double kMaxElementwiseRelativeError = 1e-4;
// Another core replaces the installed one only when faster by this factor
// (measurement noise must not flip the choice). How results are flagged
// from the findings is platform/stack_findings.h (the coordinator's side).
inline constexpr double kCoreSwitchFactor = 1.03;

// The largest error of the (m x k) * (k x n) product `c` (row-major, float32)
// against float64 dot products, over `samples` elements spread over c (all
// when samples >= m*n): max |c_ij - ref_ij| / sum_k |a_ik b_kj|. A NaN or
// infinite element counts as error 1.
double MaxGemmRelativeError(const float* a, const float* b, const float* c, int64_t m, int64_t n,
                            int64_t k, int64_t samples);

// The OpenBLAS cores (OPENBLAS_CORETYPE names) an x86 CPU with `flags` runs
// correctly, fastest kernels last: Prescott always; Nehalem with sse4_2;
// Sandybridge with avx; Haswell with avx2 and fma; SkylakeX with avx512f/bw/
// cd/dq/vl; Cooperlake with avx512_bf16 besides; SapphireRapids with
// amx_bf16 and avx512_fp16 besides. Empty off x86 (no "sse3" flag, spelled
// "pni" in /proc/cpuinfo).
std::vector<std::string> BlasCoreCandidates(const std::vector<std::string>& flags);

// The candidates worth a trial: the kernels from Haswell up (older ones are
// never faster on a CPU that has those), plus Prescott and Sandybridge only
// when the CPU has nothing newer.
std::vector<std::string> BlasCoresToTry(const std::vector<std::string>& flags);

// One stack setting the doctor chooses: which process-start variable
// selects it, how a runner measures one value of it, and what a correct
// result is. The BLAS core (OPENBLAS_CORETYPE, float32 GEMM) and ATen's CPU
// capability (ATEN_CPU_CAPABILITY, float32 elementwise kernels: LibTorch
// 1.13 runs AVX2 ones on AVX-512 CPUs unless told otherwise).
struct StackSetting {
  const platform::StackSettingInfo* info;  // names, variables, workload
  std::string trial_flag;                  // the runner mode that measures the value in effect
  std::string unknown_note;                // a requested name the library ran something else for
  double max_relative_error = 0;
  // Interleaved rounds of trials, each value keeping its fastest: the BLAS
  // cores differ by up to 4x, ATen's capabilities by tens of percent, about
  // what a shared host drifts between processes.
  int rounds = 2;
  // Values the CPU's flags allow, fastest kernels last, and those worth a
  // trial.
  std::vector<std::string> (*candidates)(const std::vector<std::string>& flags) = nullptr;
  std::vector<std::string> (*to_try)(const std::vector<std::string>& flags) = nullptr;
};
const StackSetting& BlasCoreSetting();
const StackSetting& AtenCapabilitySetting();
// The settings the doctor decides, in order; nullptr for an unknown name.
const std::vector<const StackSetting*>& StackSettings();
const StackSetting* FindStackSetting(absl::string_view component);

// ATen's capabilities (ATEN_CPU_CAPABILITY values) an x86 CPU with `flags`
// runs: default always; avx2 with avx2 and fma; avx512 with avx512f/bw/dq/
// vl. Empty off x86. To try: avx2 and avx512 where the CPU has them.
std::vector<std::string> AtenCapabilityCandidates(const std::vector<std::string>& flags);
std::vector<std::string> AtenCapabilitiesToTry(const std::vector<std::string>& flags);
// at::show_config()'s "CPU capability usage" ("NO AVX", "AVX2", "AVX512")
// as the ATEN_CPU_CAPABILITY name ("default", "avx2", "avx512").
std::string AtenCapabilityName(absl::string_view show_config_usage);

// One trial run: the value asked for ("" = as installed), the value the
// library reported using, the workload's speed and its error; `error` says
// why the trial gave no figures.
struct StackTrial {
  std::string requested;
  std::string used;
  double rate = 0;
  double max_relative_error = -1;
  std::string error;
};

// What the doctor decided for one setting: the value to run with ("" =
// leave the installed one), one finding per trial, and the speedup of the
// best correct value over the installed one (1 when none is faster).
struct StackDecision {
  std::string chosen;
  std::string as_installed;
  double speedup_over_installed = 1;
  std::vector<v1::StackFinding> findings;
};

// The decision as a pure function of the trials (the first is the
// as-installed run). A trial is correct when it ran, the library used the
// value asked for (an unknown name falls back to the installed value, which
// is then no candidate of its own) and its error is at most the setting's
// max_relative_error. The fastest correct value is chosen over the
// installed one only when faster by kCoreSwitchFactor; an installed value
// that is itself wrong is never kept when a correct one exists.
StackDecision DecideStackSetting(const StackSetting& setting, const StackTrial& as_installed,
                                 const std::vector<StackTrial>& others);

// Runs `runner_path <setting.trial_flag>` with setting.env_var=`value`
// (unset for "") and <choice_env>=trial in its environment, for at most
// `timeout_s`; parses its one JSON line.
StackTrial RunStackTrial(const std::string& runner_path, const StackSetting& setting,
                         const std::string& value, double timeout_s);

// The trial's JSON line, and its parser.
std::string StackTrialJson(const StackTrial& trial);
absl::StatusOr<StackTrial> ParseStackTrialJson(absl::string_view line);

// Trials of the as-installed value and of setting.to_try(flags), in
// setting.rounds interleaved rounds, decided.
StackDecision RunStackDoctor(const std::string& runner_path, const StackSetting& setting,
                             const std::vector<std::string>& flags);

// The doctor's cache: <state_dir>/<component>-<key>.binpb, a Platform
// holding the setting's stack_findings (the chosen one marked). `key` names
// the CPU, the library build and the variable as the user set it
// (StackDoctorCacheKey) so that a new library is tried again.
std::string StackDoctorCacheKey(absl::string_view cpu_model, absl::string_view library,
                                absl::string_view env_value);
absl::StatusOr<StackDecision> ReadCachedStackDecision(const std::string& state_dir,
                                                      const StackSetting& setting,
                                                      const std::string& key);
absl::Status WriteCachedStackDecision(const std::string& state_dir, const StackSetting& setting,
                                      const std::string& key, const StackDecision& decision);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_STACK_DOCTOR_H_
