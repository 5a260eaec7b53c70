// The libgomp spin count paradnn-runner runs with unless its environment
// names one (worker/runner/openmp_env.cc, docs/measurement.md "Threads"): set by the runner
// itself before libgomp starts, and by paradnn-worker for every runner it
// starts. A macro so that the pre-initializer can splice it into a string
// literal; torch-free.
#ifndef PARADNN_COMMON_OPENMP_ENV_H_
#define PARADNN_COMMON_OPENMP_ENV_H_

#define PARADNN_RUNNER_GOMP_SPINCOUNT "1000"

#endif  // PARADNN_COMMON_OPENMP_ENV_H_
