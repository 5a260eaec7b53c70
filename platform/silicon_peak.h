// The theoretical peak FLOP/s of a device per dtype, as the paper's Table 3
// computes it ("2 FMA x 32 single-precision x 16 cores x 2 GHz"): cores x
// clock x FLOPs per cycle of the dtype's best instruction. Pure functions of
// what the host reports (CPUID vendor/family/model, ISA flags, cores, clocks;
// for CUDA the compute capability, SM count and clock), each peak with its
// arithmetic as text a person can check. Torch-free; the runner fills the
// facts (platform.cc), the worker may override a peak with a datasheet
// figure, the coordinator measures results against it.
#ifndef PARADNN_PLATFORM_SILICON_PEAK_H_
#define PARADNN_PLATFORM_SILICON_PEAK_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::platform {

// A calibrated roof may exceed the theoretical peak by measurement noise
// only; beyond this factor the basis of the peak is wrong.
inline constexpr double kPeakTolerance = 1.05;

struct CpuPeakFacts {
  std::string vendor;  // CPUID vendor: "GenuineIntel", "AuthenticAMD", ...
  int family = 0;      // CPUID family and model, as /proc/cpuinfo shows them
  int model = 0;
  std::vector<std::string> flags;  // /proc/cpuinfo flags
  int cores = 0;                   // physical cores
  double base_clock_hz = 0;        // nominal; 0 if unknown
  double max_clock_hz = 0;         // highest reachable; 0 if unknown
  // FMA units per core; 0 = the assumption (2; one per 256-bit half on AMD
  // Zen 4, whose 512-bit instructions run in two passes).
  int fma_units = 0;
  // Where base_clock_hz came from, for the basis text.
  std::string base_clock_label = "base clock";
  // The clock the cores ran at with all of them loaded, measured
  // (worker/runner/core_clock.h); 0 if not measured.
  double measured_clock_hz = 0;
};

// The clock a CPU peak is computed at: the measured clock where there is
// one (what the cores reach with all of them busy, as in a matmul; inside a
// VM the OS reports only a nominal clock, and on bare metal the max clock is
// a one-core boost), else the max clock (a roof must not sit below what the
// cores can reach), else the base clock; 0 if none is known.
double PeakClockHz(const CpuPeakFacts& facts);

// The peaks of float32, bfloat16 and float16 on a CPU at PeakClockHz; no
// clock at all (or no cores) gives no peaks. The basis names the clock and
// where it came from, e.g. "3.24 GHz (measured under load; 2.45 GHz
// reported, cpu MHz of /proc/cpuinfo)". Each dtype
// takes its best instruction the flags offer: AMX tiles (2048 FLOP/cycle/core
// for bfloat16, and for float16 with amx_fp16), AVX-512 BF16 dot products and
// AVX-512 FP16 FMAs (2 FLOP per lane pair), AVX-512 / AVX2 FMA, AVX (separate
// add and multiply), SSE; a dtype without native arithmetic is converted to
// float32 and gets the float32 peak, said so.
std::vector<v1::SiliconPeak> CpuSiliconPeaks(const CpuPeakFacts& facts);

struct CudaPeakFacts {
  int major = 0;  // compute capability
  int minor = 0;
  int sm_count = 0;
  double clock_hz = 0;  // max SM clock
  std::string name;     // e.g. "NVIDIA H200"
};

// The dense (no sparsity) peaks of float32 (CUDA cores), tf32, bfloat16 and
// float16 (tensor cores, float32 accumulate) of an NVIDIA GPU: SMs x clock
// x FLOP per cycle per SM of the architecture (Volta 7.0 through Hopper
// 9.0). Unknown architectures give no peaks. Coded from NVIDIA's
// whitepapers and datasheets; not yet checked on a GPU, and not yet called:
// the runner's CUDA platform record (the GPU issue) fills these facts.
std::vector<v1::SiliconPeak> CudaSiliconPeaks(const CudaPeakFacts& facts);

// The peak of `dtype` in `peaks`, or nullptr.
const v1::SiliconPeak* FindSiliconPeak(const std::vector<v1::SiliconPeak>& peaks,
                                       absl::string_view dtype);

// Replaces (or adds) the peak of `dtype` with an operator's datasheet figure.
void SetDatasheetPeak(absl::string_view dtype, double flops_per_sec,
                      google::protobuf::RepeatedPtrField<v1::SiliconPeak>* peaks);

// Marks `peak` inconsistent when `calibrated_flops_per_sec` exceeds it by
// more than kPeakTolerance, with a sentence naming both figures and what may
// be wrong; clears the mark otherwise. Returns whether it is consistent.
bool CheckPeakAgainstRoof(double calibrated_flops_per_sec, absl::string_view roof_name,
                          v1::SiliconPeak* peak);

// Sets each calibrated roof's theoretical_flops_per_sec from the silicon
// peak of its dtype and checks every peak against the fastest roof of its
// dtype (CheckPeakAgainstRoof). Call after calibration and after any
// datasheet override.
void ReconcilePeaksWithRoofs(v1::Platform* platform);

// A platform's clocks for people, the reported beside the measured, e.g.
// "2.45 GHz nominal, 3.24 GHz measured" or "2.10 GHz nominal, 3.70 GHz
// max"; "" when none is known.
std::string PlatformClockText(const v1::Platform& platform);

// "269 GFLOP/s", "8.60 TFLOP/s": three significant digits.
std::string FlopRate(double flops_per_sec);

// The kernel path a calibrated roof is of: its `kernel`, or "matmul" where
// older workers left it empty. Roofs of one dtype on different paths are
// different quantities (bfloat16 conv can sit 4x below bfloat16 GEMM).
std::string RoofKernel(const v1::MatmulRoof& roof);

// The index in platform.matmul_roofs of the calibrated roof (positive
// flops_per_sec) of the `kernel` path (RoofKernel) at `dtype`; -1 when none
// was calibrated. CalibratedRoof: that roof, or null.
int CalibratedRoofIndex(const v1::Platform& platform, absl::string_view kernel,
                        absl::string_view dtype);
const v1::MatmulRoof* CalibratedRoof(const v1::Platform& platform, absl::string_view kernel,
                                     absl::string_view dtype);

// The CPU's datapath facts the arithmetic rests on, for the basis text:
// the widest vector (bits) one FMA unit executes in one pass.
int FmaDatapathBits(const CpuPeakFacts& facts);

}  // namespace paradnn::platform

#endif  // PARADNN_PLATFORM_SILICON_PEAK_H_
