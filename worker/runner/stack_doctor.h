// The stack doctor's BLAS part: which OpenBLAS kernel set ("core") float32
// matmuls should run on. Debian's OpenBLAS 0.3.21 does not know some CPUs
// (Intel family 6 model 207) and falls back to its Prescott (SSE3) kernels,
// 4x slower than the AVX-512 ones the CPU runs correctly. The doctor tries
// the cores the CPU's flags allow, each in a fresh `paradnn-runner
// --blas-trial` (OpenBLAS reads OPENBLAS_CORETYPE once, when it loads),
// checks each one's float32 GEMM against a float64 reference, and keeps the
// fastest correct one. Torch-free: the trial itself is blas_trial.cc.
#ifndef PARADNN_WORKER_RUNNER_STACK_DOCTOR_H_
#define PARADNN_WORKER_RUNNER_STACK_DOCTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/stack_findings.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// A core is correct when no sampled element of its float32 GEMM is further
// from the float64 reference than this, relative to sum |a_ik b_kj| (float32
// rounding gives ~1e-7 at the trial's k).
inline constexpr double kMaxGemmRelativeError = 1e-4;
// Another core replaces the installed one only when faster by this factor
// (measurement noise must not flip the choice). How results are flagged
// from the findings is common/stack_findings.h (the coordinator's side).
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

// One `--blas-trial` run: the core asked for ("" = as installed), the core
// OpenBLAS reported using, its float32 GEMM rate and its error; `error` says
// why the trial gave no figures.
struct BlasTrial {
  std::string requested;
  std::string core;
  double flops_per_sec = 0;
  double max_relative_error = -1;
  std::string error;
};

// What the doctor decided: the core to run with ("" = leave the installed
// one), one finding per trial, and the speedup of the best correct core over
// the installed one (1 when none is faster).
struct BlasDecision {
  std::string chosen;
  std::string as_installed_core;
  double speedup_over_installed = 1;
  std::vector<v1::StackFinding> findings;
};

// The decision as a pure function of the trials (the first is the
// as-installed run). A trial is correct when it ran, OpenBLAS used the core
// asked for (an unknown name falls back to the installed core, which is then
// no candidate of its own) and its error is at most kMaxGemmRelativeError.
// The fastest correct core is chosen over the installed one only when faster
// by kCoreSwitchFactor; an installed core that is itself wrong is never kept
// when a correct one exists.
BlasDecision DecideBlasCore(const BlasTrial& as_installed, const std::vector<BlasTrial>& others);

// Runs `runner_path --blas-trial` with OPENBLAS_CORETYPE=`core` (unset for
// "") and PARADNN_BLAS_CORE_CHOICE=trial in its environment, for at most
// `timeout_s`; parses its one JSON line.
BlasTrial RunBlasTrial(const std::string& runner_path, const std::string& core, double timeout_s);

// The trial's JSON line, and its parser.
std::string BlasTrialJson(const BlasTrial& trial);
absl::StatusOr<BlasTrial> ParseBlasTrialJson(absl::string_view line);

// Trials of the as-installed core and of BlasCoresToTry(flags), decided.
BlasDecision RunBlasDoctor(const std::string& runner_path, const std::vector<std::string>& flags);

// The doctor's cache: <state_dir>/blas-core-<key>.binpb, a Platform holding
// blas_core (the choice) and stack_findings. `key` names the CPU and the BLAS
// build (BlasDoctorCacheKey) so that a new OpenBLAS is tried again.
std::string BlasDoctorCacheKey(absl::string_view cpu_model, absl::string_view blas_backend,
                               absl::string_view openblas_coretype_env);
absl::StatusOr<BlasDecision> ReadCachedBlasDecision(const std::string& state_dir,
                                                    const std::string& key);
absl::Status WriteCachedBlasDecision(const std::string& state_dir, const std::string& key,
                                     const BlasDecision& decision);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_STACK_DOCTOR_H_
