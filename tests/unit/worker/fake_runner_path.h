// The fake_runner executable (tests/unit/worker/fake_runner.cc) that the
// worker tests start as their runner: tests/unit/worker/CMakeLists.txt
// passes its path as PARADNN_FAKE_RUNNER. A test built without it fails to
// compile here rather than starting some other binary at run time.
#ifndef PARADNN_TESTS_UNIT_WORKER_FAKE_RUNNER_PATH_H_
#define PARADNN_TESTS_UNIT_WORKER_FAKE_RUNNER_PATH_H_

#ifndef PARADNN_FAKE_RUNNER
#error "PARADNN_FAKE_RUNNER must name the fake_runner executable"
#endif

#endif  // PARADNN_TESTS_UNIT_WORKER_FAKE_RUNNER_PATH_H_
