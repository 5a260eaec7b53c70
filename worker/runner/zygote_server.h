// The runner side of the zygote protocol (zygote_protocol.h), free of
// LibTorch so that test stand-ins can serve it too.
#ifndef PARADNN_WORKER_RUNNER_ZYGOTE_SERVER_H_
#define PARADNN_WORKER_RUNNER_ZYGOTE_SERVER_H_

#include <functional>

namespace paradnn::worker {

// Serves spawn requests on `control_fd` until the worker closes it, then
// returns 0 (1 on a channel error). Must be called while the process has a
// single thread: each request forks. In each job process `run_job` runs
// with the request's descriptors on 0/1/2, every other descriptor closed,
// the request's address-space limit set and its own process group; the job
// process then exits with what `run_job` returns.
int ServeZygote(int control_fd, const std::function<int()>& run_job);

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_RUNNER_ZYGOTE_SERVER_H_
