// The CUDA driver API entry points worker/runner/cuda_driver.cc calls, as a
// driver with one H200 answers them (attribute values as an H200 reports
// them). FAKE_CUDA_INIT_ERROR=N makes cuInit fail with N.
#include <cstddef>
#include <cstdlib>
#include <cstring>

extern "C" {

int cuInit(unsigned int) {
  const char* error = std::getenv("FAKE_CUDA_INIT_ERROR");
  return error != nullptr ? std::atoi(error) : 0;
}
int cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0;
}
int cuDeviceGetCount(int* count) {
  *count = 1;
  return 0;
}
int cuDeviceGet(int* device, int ordinal) {
  if (ordinal != 0) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = 0;
  return 0;
}
int cuDeviceGetName(char* name, int length, int) {
  std::strncpy(name, "NVIDIA H200", static_cast<size_t>(length));
  return 0;
}
int cuDeviceGetAttribute(int* value, int attribute, int) {
  switch (attribute) {
    case 13:
      *value = 1980000;
      return 0;  // SM clock, kHz
    case 16:
      *value = 132;
      return 0;  // SMs
    case 36:
      *value = 3201000;
      return 0;  // memory clock, kHz
    case 37:
      *value = 6144;
      return 0;  // bus width, bits
    case 75:
      *value = 9;
      return 0;  // compute capability
    case 76:
      *value = 0;
      return 0;
    default:
      return 1;  // CUDA_ERROR_INVALID_VALUE
  }
}
int cuDeviceTotalMem_v2(size_t* bytes, int) {
  *bytes = size_t{150754820096};
  return 0;
}
int cuGetErrorString(int error, const char** text) {
  *text = error == 100 ? "no CUDA-capable device is detected" : "unknown error";
  return 0;
}
}
