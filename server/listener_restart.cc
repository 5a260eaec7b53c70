#include "server/listener_restart.h"

#include <grpc/support/log.h>
#include <linux/close_range.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace paradnn::server {
namespace {

// NOLINTNEXTLINE(bugprone-throwing-static-initialization): constant-initialized, no code runs
ABSL_CONST_INIT absl::Mutex failure_mutex(absl::kConstInit);
std::string listener_failure ABSL_GUARDED_BY(failure_mutex);

void LogGrpcLine(gpr_log_func_args* args) {
  const char* message = args->message != nullptr ? args->message : "";
  // tcp_server_posix.cc: "Failed accept4: Too many open files"; the
  // listener is not re-armed after it.
  if (absl::StartsWith(message, "Failed accept4")) {
    absl::MutexLock lock(&failure_mutex);
    if (listener_failure.empty()) listener_failure = message;
  }
  const spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR  ? spdlog::level::err
      : args->severity == GPR_LOG_SEVERITY_INFO ? spdlog::level::info
                                                : spdlog::level::debug;
  spdlog::log(level, "grpc {}:{}: {}", args->file != nullptr ? args->file : "?", args->line,
              message);
}

}  // namespace

void ForwardGrpcLogsToSpdlog() { gpr_set_log_function(&LogGrpcLine); }

std::string GrpcListenerFailure() {
  absl::MutexLock lock(&failure_mutex);
  return listener_failure;
}

std::vector<std::string> ArgumentsForRestart(const std::vector<std::string>& argv,
                                             const std::string& bound_listen,
                                             const std::string& bound_metrics) {
  std::vector<std::string> arguments;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (i > 0 && (arg == "--listen" || arg == "--metrics-listen")) {
      ++i;  // and its value
      continue;
    }
    if (i > 0 &&
        (absl::StartsWith(arg, "--listen=") || absl::StartsWith(arg, "--metrics-listen="))) {
      continue;
    }
    arguments.push_back(arg);
  }
  arguments.push_back("--listen=" + bound_listen);
  if (!bound_metrics.empty()) arguments.push_back("--metrics-listen=" + bound_metrics);
  return arguments;
}

std::string ExecuteInPlace(const std::vector<std::string>& arguments) {
  spdlog::default_logger()->flush();
  // gRPC's sockets are close-on-exec, not every library's descriptor is.
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    return absl::StrCat("close_range: ", std::strerror(errno));
  }
  std::vector<char*> pointers;
  pointers.reserve(arguments.size() + 1);
  for (const std::string& arg : arguments) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  ::execv("/proc/self/exe", pointers.data());
  return absl::StrCat("execv /proc/self/exe: ", std::strerror(errno));
}

}  // namespace paradnn::server
