// Real child processes for integration and fault tests: start a binary
// with its output in a log file, signal it, wait for it with a deadline,
// and run a command to completion capturing its stdout.
#ifndef PARADNN_TESTS_INTEGRATION_TEST_PROCESSES_H_
#define PARADNN_TESTS_INTEGRATION_TEST_PROCESSES_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/wait_for.h"

namespace paradnn::testing {

// Folder of the built binaries ($PARADNN_BIN_DIR, set by ctest).
std::string BinDir();
std::string SourceDir();

// A fresh temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // SIGKILLs a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (a path) with stdout and stderr appended to `log_path`.
  void Start(const std::vector<std::string>& argv, const std::string& log_path);
  void Signal(int signal_number);
  // Waits up to `timeout` for exit; returns the wait status, or nullopt.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  bool running();
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string log_path_;
};

struct CommandResult {
  int exit_code = -1;  // -1 if killed or timed out
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv to completion (killed after `timeout`).
CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::vector<std::string>& extra_env = {});

// WaitFor(condition, timeout): tests/support/wait_for.h.

std::string ReadFile(const std::string& path);

// A coordinator started in `coordinator` as `prefix` + paradnn-coordinator
// on 127.0.0.1:0 with `db`, /metrics on a port of its own, and waited for
// (both address files written). Its gRPC address and metrics port; an
// empty address when it did not come up within 30 s.
struct StartedCoordinator {
  std::string address;
  int metrics_port = 0;
};
StartedCoordinator StartCoordinatorWithMetrics(ChildProcess* coordinator, const TempDir& dir,
                                               const std::string& db,
                                               const std::vector<std::string>& prefix = {});

struct HttpReply {
  int status = 0;
  std::string body;
};

// A minimal HTTP/1.1 GET to 127.0.0.1:port (5 s to answer; the endpoint
// closes after one reply). nullopt when nothing answered.
std::optional<HttpReply> HttpGet(int port, const std::string& path);
// Its status (0 when nothing answered), the body in `body` when given.
int HttpStatus(int port, const std::string& path, std::string* body = nullptr);

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_INTEGRATION_TEST_PROCESSES_H_
