// Sizes as people read them, shared by the CLI and the coordinator's messages.
#ifndef PARADNN_COMMON_HUMAN_UNITS_H_
#define PARADNN_COMMON_HUMAN_UNITS_H_

#include <string>

namespace paradnn::common {

// "900 bytes", "1.5 KiB", "31.2 GiB": binary units, one decimal.
std::string HumanBytes(double bytes);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_HUMAN_UNITS_H_
