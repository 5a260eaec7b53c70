#include "platform/silicon_peak.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace paradnn::platform {
namespace {

// Two FMA units per core holds for the CPUs this project runs on, checked
// against the vendors' optimization manuals: Intel since Haswell (ports 0
// and 1; on AVX-512 Xeons ports 0+1 fuse into one 512-bit unit and port 5
// adds the second, except on Xeon Bronze/Silver, some Gold 5xxx and client
// Ice Lake, which have one: --fma-units 1), and AMD Zen 1 to 5 (of Zen 3's
// four FP pipes two do FMA and two only add; a matmul is FMAs, so the adders
// do not count: Zen 3 is 2 x 8 float32 lanes x 2 = 32 FLOP/cycle).
constexpr int kDefaultFmaUnits = 2;
// AMX: each core's TMUL does 1024 bfloat16 (or float16, with amx_fp16)
// multiply-adds per cycle (Intel's optimization manual, "Intel AMX").
constexpr int kAmxFlopsPerCycle = 2048;

std::string GigaHertz(double hz) { return absl::StrFormat("%.2f GHz", hz / 1e9); }

}  // namespace

std::string RoofKernel(const v1::MatmulRoof& roof) {
  return roof.kernel().empty() ? std::string("matmul") : roof.kernel();
}

int CalibratedRoofIndex(const v1::Platform& platform, absl::string_view kernel,
                        absl::string_view dtype) {
  for (int i = 0; i < platform.matmul_roofs_size(); ++i) {
    const v1::MatmulRoof& roof = platform.matmul_roofs(i);
    if (roof.dtype() == dtype && RoofKernel(roof) == kernel && roof.flops_per_sec() > 0) return i;
  }
  return -1;
}

const v1::MatmulRoof* CalibratedRoof(const v1::Platform& platform, absl::string_view kernel,
                                     absl::string_view dtype) {
  const int i = CalibratedRoofIndex(platform, kernel, dtype);
  return i < 0 ? nullptr : &platform.matmul_roofs(i);
}

std::string FlopRate(double flops_per_sec) {
  // Three significant digits in the largest unit that keeps one before the point.
  static constexpr std::pair<double, const char*> kUnits[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}};
  for (const auto& [scale, prefix] : kUnits) {
    if (flops_per_sec >= scale) {
      const double value = flops_per_sec / scale;
      const int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
      return absl::StrFormat("%.*f %sFLOP/s", decimals, value, prefix);
    }
  }
  return absl::StrFormat("%.0f FLOP/s", flops_per_sec);
}

namespace {

v1::SiliconPeak Peak(const std::string& dtype, double flops_per_sec, const std::string& basis) {
  v1::SiliconPeak peak;
  peak.set_dtype(dtype);
  peak.set_flops_per_sec(flops_per_sec);
  peak.set_basis(absl::StrCat(basis, " = ", FlopRate(flops_per_sec)));
  peak.set_source("computed");
  return peak;
}

}  // namespace

int FmaDatapathBits(const CpuPeakFacts& facts) {
  const std::set<std::string> flags(facts.flags.begin(), facts.flags.end());
  const bool amd = facts.vendor == "AuthenticAMD";
  if (flags.count("avx512f") > 0) {
    // Zen 4 (family 0x19) executes a 512-bit instruction in two passes of
    // its 256-bit units, so its AVX-512 peak is its AVX2 peak; Zen 5 (0x1a)
    // desktop and server parts and Intel's AVX-512 cores take one pass (Zen
    // 5 mobile parts take two, not told apart here: --fma-units 1).
    if (amd && facts.family == 0x19) return 256;
    return 512;
  }
  // Zen 1 and Zen+ (family 0x17 below model 0x30) split a 256-bit AVX
  // instruction into two 128-bit passes; Zen 2 (0x17, model 0x30 on) does not.
  if (amd && facts.family == 0x17 && facts.model < 0x30) return 128;
  if (flags.count("avx") > 0) return 256;
  return 128;
}

double PeakClockHz(const CpuPeakFacts& facts) {
  if (facts.measured_clock_hz > 0) return facts.measured_clock_hz;
  return facts.max_clock_hz > 0 ? facts.max_clock_hz : facts.base_clock_hz;
}

namespace {

// The clock of the basis text: "3.50 GHz (max clock)", "2.10 GHz (base
// clock)", or the measured one beside what the OS reports, "3.24 GHz
// (measured under load; 2.45 GHz reported, cpu MHz of /proc/cpuinfo)".
std::string PeakClockText(const CpuPeakFacts& facts) {
  const std::string reported_label = facts.max_clock_hz > 0 ? "max clock" : facts.base_clock_label;
  const double reported = facts.max_clock_hz > 0 ? facts.max_clock_hz : facts.base_clock_hz;
  if (facts.measured_clock_hz <= 0) {
    return absl::StrCat(GigaHertz(reported), " (", reported_label, ")");
  }
  return absl::StrCat(GigaHertz(facts.measured_clock_hz), " (measured under load; ",
                      reported > 0
                          ? absl::StrCat(GigaHertz(reported), " reported, ", reported_label)
                          : "no clock reported",
                      ")");
}

}  // namespace

std::vector<v1::SiliconPeak> CpuSiliconPeaks(const CpuPeakFacts& facts) {
  const double clock = PeakClockHz(facts);
  if (clock <= 0 || facts.cores <= 0) return {};
  const std::set<std::string> flags(facts.flags.begin(), facts.flags.end());
  auto has = [&](const char* flag) { return flags.count(flag) > 0; };
  const std::string clock_text = PeakClockText(facts);
  const std::string cores_text = absl::StrCat(facts.cores, facts.cores == 1 ? " core" : " cores");
  const int units = facts.fma_units > 0 ? facts.fma_units : kDefaultFmaUnits;
  const int bits = FmaDatapathBits(facts);
  const bool two_pass = has("avx512f") && bits == 256;
  const std::string width_note = two_pass ? ", AVX-512 in two 256-bit passes" : "";
  const std::string units_text = absl::StrCat(units, units == 1 ? " FMA unit" : " FMA units",
                                              facts.fma_units > 0 ? " (configured)" : " (assumed)");

  // float32: the widest FMA; without FMA, separate add and multiply units.
  std::string fp32_instruction;
  double fp32_per_cycle = 0;
  std::string fp32_basis;
  const int fp32_lanes = bits / 32;
  if (has("fma")) {
    fp32_instruction = has("avx512f") ? "AVX-512 FMA" : "AVX2 FMA";
    fp32_per_cycle = units * fp32_lanes * 2.0;
    fp32_basis =
        absl::StrCat(cores_text, " x ", units_text, " x ", fp32_lanes, " float32 lanes x 2 FLOP (",
                     fp32_instruction, width_note, ") x ", clock_text);
  } else {
    fp32_instruction = has("avx") ? "AVX add + multiply" : "SSE add + multiply";
    fp32_per_cycle = 2.0 * fp32_lanes;
    fp32_basis = absl::StrCat(cores_text, " x (1 add + 1 multiply) x ", fp32_lanes,
                              " float32 lanes (", fp32_instruction, ", no FMA) x ", clock_text);
  }
  const double fp32 = facts.cores * fp32_per_cycle * clock;
  std::vector<v1::SiliconPeak> peaks;
  peaks.push_back(Peak("float32", fp32, fp32_basis));

  auto amx = [&](const char* dtype, const char* what) {
    return Peak(dtype, facts.cores * static_cast<double>(kAmxFlopsPerCycle) * clock,
                absl::StrCat(cores_text, " x ", kAmxFlopsPerCycle, " FLOP/cycle (AMX ", what,
                             " tiles: 1024 multiply-adds per cycle per core) x ", clock_text));
  };
  auto via_float32 = [&](const char* dtype, const char* how) {
    return Peak(dtype, fp32,
                absl::StrCat("no native ", dtype, " arithmetic on this CPU (", how,
                             "): the float32 peak, ", fp32_basis));
  };

  if (has("amx_tile") && has("amx_bf16")) {
    peaks.push_back(amx("bfloat16", "bf16"));
  } else if (has("avx512_bf16")) {
    // vdpbf16ps: each float32 lane accumulates two bfloat16 products.
    const int lanes = bits / 32;
    peaks.push_back(Peak("bfloat16", facts.cores * units * lanes * 4.0 * clock,
                         absl::StrCat(cores_text, " x ", units_text, " x ", lanes,
                                      " float32 lanes x 2 products x 2 FLOP (AVX-512 BF16 "
                                      "VDPBF16PS",
                                      width_note, ") x ", clock_text)));
  } else {
    peaks.push_back(via_float32("bfloat16", "converted to float32"));
  }

  if (has("amx_tile") && has("amx_fp16")) {
    peaks.push_back(amx("float16", "fp16"));
  } else if (has("avx512_fp16")) {
    const int lanes = bits / 16;
    peaks.push_back(
        Peak("float16", facts.cores * units * lanes * 2.0 * clock,
             absl::StrCat(cores_text, " x ", units_text, " x ", lanes,
                          " float16 lanes x 2 FLOP (AVX-512 FP16 FMA) x ", clock_text)));
  } else {
    peaks.push_back(
        via_float32("float16", has("f16c") ? "F16C converts to float32" : "converted to float32"));
  }
  return peaks;
}

std::string PlatformClockText(const v1::Platform& platform) {
  std::vector<std::string> parts;
  if (platform.base_clock_hz() > 0) {
    parts.push_back(absl::StrCat(GigaHertz(platform.base_clock_hz()), " nominal"));
  }
  if (platform.max_clock_hz() > 0 && platform.max_clock_hz() != platform.base_clock_hz()) {
    parts.push_back(absl::StrCat(GigaHertz(platform.max_clock_hz()), " max"));
  }
  if (platform.measured_clock_hz() > 0) {
    parts.push_back(absl::StrCat(GigaHertz(platform.measured_clock_hz()), " measured"));
  }
  return absl::StrJoin(parts, ", ");
}

std::vector<v1::SiliconPeak> CudaSiliconPeaks(const CudaPeakFacts& facts) {
  // Dense FLOP per cycle per SM: float32 on CUDA cores, and tf32, bfloat16,
  // float16 on tensor cores with float32 accumulation (NVIDIA's V100, T4,
  // A100, A10 and H100 whitepapers, the L40 datasheet: 181 TFLOP/s float16
  // at 142 SMs x 2.49 GHz is 512; 0 = not supported).
  struct Rates {
    int major, minor;
    const char* architecture;
    double fp32, tf32, bf16, fp16;
  };
  static constexpr Rates kRates[] = {
      {7, 0, "Volta", 128, 0, 0, 1024},
      {7, 5, "Turing", 128, 0, 0, 1024},
      {8, 0, "Ampere GA100", 128, 1024, 2048, 2048},
      {8, 6, "Ampere GA10x", 256, 512, 1024, 1024},
      {8, 7, "Ampere (Orin)", 256, 512, 1024, 1024},
      {8, 9, "Ada", 256, 256, 512, 512},
      {9, 0, "Hopper", 256, 2048, 4096, 4096},
  };
  if (facts.sm_count <= 0 || facts.clock_hz <= 0) return {};
  const Rates* rates = nullptr;
  for (const Rates& r : kRates) {
    if (r.major == facts.major && r.minor == facts.minor) rates = &r;
  }
  if (rates == nullptr) return {};
  std::vector<v1::SiliconPeak> peaks;
  auto add = [&](const char* dtype, double per_sm, const char* unit) {
    if (per_sm <= 0) return;
    peaks.push_back(
        Peak(dtype, facts.sm_count * per_sm * facts.clock_hz,
             absl::StrCat(facts.sm_count, " SMs x ", per_sm, " FLOP/cycle per SM (",
                          rates->architecture, " sm_", facts.major, facts.minor, " ", unit,
                          ", dense) x ", GigaHertz(facts.clock_hz), " (max SM clock)")));
  };
  add("float32", rates->fp32, "CUDA cores, FMA");
  add("tf32", rates->tf32, "tensor cores");
  add("bfloat16", rates->bf16, "tensor cores, float32 accumulate");
  add("float16", rates->fp16, "tensor cores, float32 accumulate");
  return peaks;
}

const v1::SiliconPeak* FindSiliconPeak(const std::vector<v1::SiliconPeak>& peaks,
                                       absl::string_view dtype) {
  for (const v1::SiliconPeak& peak : peaks) {
    if (peak.dtype() == dtype) return &peak;
  }
  return nullptr;
}

void SetDatasheetPeak(absl::string_view dtype, double flops_per_sec,
                      google::protobuf::RepeatedPtrField<v1::SiliconPeak>* peaks) {
  v1::SiliconPeak* peak = nullptr;
  for (v1::SiliconPeak& candidate : *peaks) {
    if (candidate.dtype() == dtype) peak = &candidate;
  }
  if (peak == nullptr) {
    peak = peaks->Add();
    peak->set_dtype(std::string(dtype));
  }
  const std::string computed =
      peak->source() == "computed" ? absl::StrCat(" (computed: ", peak->basis(), ")") : "";
  peak->set_flops_per_sec(flops_per_sec);
  peak->set_source("datasheet");
  peak->set_basis(absl::StrCat("datasheet figure given by the operator (--datasheet-peak ", dtype,
                               "=", flops_per_sec, ") = ", FlopRate(flops_per_sec), computed));
  peak->clear_inconsistency();
}

bool CheckPeakAgainstRoof(double calibrated_flops_per_sec, absl::string_view roof_name,
                          v1::SiliconPeak* peak) {
  if (peak->flops_per_sec() <= 0 ||
      calibrated_flops_per_sec <= kPeakTolerance * peak->flops_per_sec()) {
    peak->clear_inconsistency();
    return true;
  }
  peak->set_inconsistency(absl::StrFormat(
      "the calibrated %s roof (%s) is %.0f %% of this theoretical %s peak (%s): its basis is "
      "wrong (a higher clock, more FMA units, or a hypervisor presenting another CPU model); "
      "give the datasheet figure with --datasheet-peak %s=FLOPS",
      std::string(roof_name), FlopRate(calibrated_flops_per_sec),
      100.0 * calibrated_flops_per_sec / peak->flops_per_sec(), peak->dtype(),
      FlopRate(peak->flops_per_sec()), peak->dtype()));
  return false;
}

void ReconcilePeaksWithRoofs(v1::Platform* platform) {
  for (v1::SiliconPeak& peak : *platform->mutable_silicon_peaks()) {
    const v1::MatmulRoof* fastest = nullptr;
    for (v1::MatmulRoof& roof : *platform->mutable_matmul_roofs()) {
      if (roof.dtype() != peak.dtype()) continue;
      roof.set_theoretical_flops_per_sec(peak.flops_per_sec());
      if (fastest == nullptr || roof.flops_per_sec() > fastest->flops_per_sec()) fastest = &roof;
    }
    if (fastest == nullptr) {
      peak.clear_inconsistency();
      continue;
    }
    CheckPeakAgainstRoof(fastest->flops_per_sec(),
                         absl::StrCat(RoofKernel(*fastest), " ", fastest->dtype()), &peak);
  }
}

}  // namespace paradnn::platform
