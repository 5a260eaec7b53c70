// The libgomp spin count paradnn-runner runs with unless its environment
// names one (openmp_env.cc, docs/measurement.md "Threads"): set by the runner
// itself before libgomp starts, and by paradnn-worker for every runner it
// starts. A macro so that the pre-initializer can splice it into a string
// literal; torch-free.
#ifndef PARADNN_WORKER_RUNNER_OPENMP_ENV_H_
#define PARADNN_WORKER_RUNNER_OPENMP_ENV_H_

#define PARADNN_RUNNER_GOMP_SPINCOUNT "1000"

#endif  // PARADNN_WORKER_RUNNER_OPENMP_ENV_H_
