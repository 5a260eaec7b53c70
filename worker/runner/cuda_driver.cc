#include "worker/runner/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paradnn::runner {
namespace {

// The driver API's types as its ABI has them (cuda.h): CUresult and
// CUdevice are ints, CUdevice_attribute an enum of int values.
using CuResult = int;
using CuInit = CuResult (*)(unsigned int);
using CuDriverGetVersion = CuResult (*)(int*);
using CuDeviceGetCount = CuResult (*)(int*);
using CuDeviceGet = CuResult (*)(int*, int);
using CuDeviceGetName = CuResult (*)(char*, int, int);
using CuDeviceGetAttribute = CuResult (*)(int*, int, int);
using CuDeviceTotalMem = CuResult (*)(size_t*, int);
using CuGetErrorString = CuResult (*)(CuResult, const char**);

constexpr int kAttributeClockRate = 13;  // kHz
constexpr int kAttributeMultiprocessorCount = 16;
constexpr int kAttributeMemoryClockRate = 36;  // kHz
constexpr int kAttributeGlobalMemoryBusWidth = 37;
constexpr int kAttributeComputeCapabilityMajor = 75;
constexpr int kAttributeComputeCapabilityMinor = 76;

class DriverLibrary {
 public:
  explicit DriverLibrary(const std::string& path)
      : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~DriverLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  DriverLibrary(const DriverLibrary&) = delete;
  DriverLibrary& operator=(const DriverLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  template <typename Fn>
  Fn Find(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }

 private:
  void* handle_;
};

struct DriverCalls {
  CuInit init = nullptr;
  CuDriverGetVersion driver_version = nullptr;
  CuDeviceGetCount device_count = nullptr;
  CuDeviceGet device = nullptr;
  CuDeviceGetName name = nullptr;
  CuDeviceGetAttribute attribute = nullptr;
  CuDeviceTotalMem total_memory = nullptr;
  CuGetErrorString error_string = nullptr;  // optional
};

absl::StatusOr<DriverCalls> FindCalls(const DriverLibrary& library, const std::string& path) {
  DriverCalls calls;
  calls.init = library.Find<CuInit>("cuInit");
  calls.driver_version = library.Find<CuDriverGetVersion>("cuDriverGetVersion");
  calls.device_count = library.Find<CuDeviceGetCount>("cuDeviceGetCount");
  calls.device = library.Find<CuDeviceGet>("cuDeviceGet");
  calls.name = library.Find<CuDeviceGetName>("cuDeviceGetName");
  calls.attribute = library.Find<CuDeviceGetAttribute>("cuDeviceGetAttribute");
  calls.total_memory = library.Find<CuDeviceTotalMem>("cuDeviceTotalMem_v2");
  calls.error_string = library.Find<CuGetErrorString>("cuGetErrorString");
  if (calls.init == nullptr || calls.driver_version == nullptr || calls.device_count == nullptr ||
      calls.device == nullptr || calls.name == nullptr || calls.attribute == nullptr ||
      calls.total_memory == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(path,
                     " lacks a CUDA driver API entry point (cuInit, cuDeviceGet, "
                     "cuDeviceGetAttribute, cuDeviceTotalMem_v2, ...): not an NVIDIA "
                     "driver library"));
  }
  return calls;
}

}  // namespace

absl::StatusOr<CudaDeviceFacts> QueryCudaDevice(int index, const std::string& library) {
  const DriverLibrary driver(library);
  if (!driver.loaded()) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("no NVIDIA driver: cannot load ", library, " (", why ? why : "unknown", ")"));
  }
  absl::StatusOr<DriverCalls> calls = FindCalls(driver, library);
  if (!calls.ok()) return calls.status();
  const auto check = [&](CuResult result, const char* call) -> absl::Status {
    if (result == 0) return absl::OkStatus();
    const char* text = nullptr;
    if (calls->error_string != nullptr) calls->error_string(result, &text);
    return absl::UnavailableError(absl::StrCat("CUDA driver: ", call, " failed with error ", result,
                                               text ? absl::StrCat(" (", text, ")") : ""));
  };
  CudaDeviceFacts facts;
  facts.index = index;
  if (absl::Status s = check(calls->init(0), "cuInit"); !s.ok()) return s;
  if (absl::Status s = check(calls->driver_version(&facts.driver_version), "cuDriverGetVersion");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = check(calls->device_count(&facts.device_count), "cuDeviceGetCount");
      !s.ok()) {
    return s;
  }
  if (index < 0 || index >= facts.device_count) {
    return absl::UnavailableError(
        absl::StrCat("CUDA device ", index, ": the driver sees ", facts.device_count, " GPU(s)"));
  }
  int device = 0;
  if (absl::Status s = check(calls->device(&device, index), "cuDeviceGet"); !s.ok()) return s;
  std::array<char, 256> name{};
  if (absl::Status s = check(calls->name(name.data(), name.size() - 1, device), "cuDeviceGetName");
      !s.ok()) {
    return s;
  }
  facts.name = name.data();
  struct Attribute {
    int id;
    int* value;
  };
  int clock_khz = 0, memory_clock_khz = 0;
  for (const Attribute& a : {Attribute{kAttributeComputeCapabilityMajor, &facts.major},
                             Attribute{kAttributeComputeCapabilityMinor, &facts.minor},
                             Attribute{kAttributeMultiprocessorCount, &facts.sm_count},
                             Attribute{kAttributeClockRate, &clock_khz},
                             Attribute{kAttributeMemoryClockRate, &memory_clock_khz},
                             Attribute{kAttributeGlobalMemoryBusWidth, &facts.memory_bus_bits}}) {
    // An attribute a newer driver no longer reports stays 0 (unknown).
    if (calls->attribute(a.value, a.id, device) != 0) *a.value = 0;
  }
  facts.max_clock_hz = clock_khz * 1e3;
  facts.memory_clock_hz = memory_clock_khz * 1e3;
  size_t bytes = 0;
  if (absl::Status s = check(calls->total_memory(&bytes, device), "cuDeviceTotalMem_v2"); !s.ok()) {
    return s;
  }
  facts.memory_bytes = static_cast<int64_t>(bytes);
  return facts;
}

std::string CudaVersionText(int version) {
  if (version <= 0) return "";
  return absl::StrCat(version / 1000, ".", version % 1000 / 10);
}

double TheoreticalMemoryBandwidth(const CudaDeviceFacts& facts) {
  return 2.0 * facts.memory_clock_hz * facts.memory_bus_bits / 8.0;
}

absl::StatusOr<int> CudaDeviceIndex(const std::string& device) {
  int index = 0;
  if (device == "cuda") return 0;
  if (absl::StartsWith(device, "cuda:") && absl::SimpleAtoi(device.substr(5), &index) &&
      index >= 0) {
    return index;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device '", device, "' is not cuda or cuda:N (N the GPU's index, from 0)"));
}

int DataParallelDeviceCount(const std::string& device, int visible) {
  return device == "cuda" ? std::max(visible, 1) : 1;
}

namespace {

// The first word after `label` on a line of `text` that starts (after its
// indentation and "- ") with `label`; "" if none.
std::string WordAfter(const std::string& text, absl::string_view label) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "- ") || !absl::ConsumePrefix(&line, label)) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    return std::string(line.substr(0, line.find_first_of(" \t")));
  }
  return "";
}

}  // namespace

CudaBuildVersions ParseCudaBuildVersions(const std::string& show_config) {
  return {WordAfter(show_config, "CUDA Runtime"), WordAfter(show_config, "CuDNN")};
}

}  // namespace paradnn::runner
