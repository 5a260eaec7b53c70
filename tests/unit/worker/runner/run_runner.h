// Runs the built paradnn-runner (from $PARADNN_BIN_DIR) through a shell
// command line, for the families' binary tests.
#ifndef PARADNN_TESTS_UNIT_WORKER_RUNNER_RUN_RUNNER_H_
#define PARADNN_TESTS_UNIT_WORKER_RUNNER_RUN_RUNNER_H_

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <nlohmann/json.hpp>
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

// Measures the model `model_args` name (family and parameters) for about a
// second with --json, and expects exit 0 and an OK result with a positive
// throughput and its step times.
inline void ExpectShortMeasurementOk(const std::string& model_args) {
  const RunnerRun r = RunRunner(model_args + " --max_seconds 1 --json --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("outcome").get<std::string>(), "OK") << r.out;
  EXPECT_GT(j.at("examples_per_sec").get<double>(), 0);
  EXPECT_FALSE(j.at("step_seconds").empty());
}

// Runs `args` and expects the usage error's exit status 2 and a message
// (stdout and stderr) with every one of `message_parts`: the flag at fault
// and what it allows.
inline void ExpectUsageErrorNaming(const std::string& args,
                                   std::initializer_list<const char*> message_parts) {
  const RunnerRun r = RunRunner(args, /*merge_stderr=*/true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  for (const char* part : message_parts) {
    EXPECT_NE(r.out.find(part), std::string::npos) << "no '" << part << "' in: " << r.out;
  }
}

}  // namespace paradnn::runner

#endif  // PARADNN_TESTS_UNIT_WORKER_RUNNER_RUN_RUNNER_H_
