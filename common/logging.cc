#include "common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"

namespace paradnn::common {

absl::Status ConfigureLogging(const std::string& program, const std::string& level) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  // from_str maps unknown names to "off"; only "off" itself may mean off.
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level: '", level, "' is not one of ", kLogLevels));
  }
  auto logger = spdlog::stderr_color_mt(program);
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
  spdlog::flush_on(spdlog::level::info);
  return absl::OkStatus();
}

}  // namespace paradnn::common
