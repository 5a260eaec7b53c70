#ifndef PARADNN_COMMON_VERSION_H_
#define PARADNN_COMMON_VERSION_H_

namespace paradnn::common {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace paradnn::common

#endif  // PARADNN_COMMON_VERSION_H_
