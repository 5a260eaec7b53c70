// Runs the built paradnn-runner (from $PARADNN_BIN_DIR) through a shell
// command line, for the families' binary tests.
#ifndef PARADNN_TESTS_UNIT_WORKER_RUNNER_RUN_RUNNER_H_
#define PARADNN_TESTS_UNIT_WORKER_RUNNER_RUN_RUNNER_H_

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace paradnn::runner {

struct RunnerRun {
  int exit_code = -1;
  std::string out;  // stdout, or stdout and stderr with `merge_stderr`
};

// Runs paradnn-runner with `args` (no shell metacharacters in them).
inline RunnerRun RunRunner(const std::string& args, bool merge_stderr = false) {
  const char* dir = std::getenv("PARADNN_BIN_DIR");
  const std::string command = std::string(dir != nullptr ? dir : "bin") + "/paradnn-runner " +
                              args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  RunnerRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

}  // namespace paradnn::runner

#endif  // PARADNN_TESTS_UNIT_WORKER_RUNNER_RUN_RUNNER_H_
