// The channel between a worker and its runner zygote (`paradnn-runner
// --zygote`): a SOCK_SEQPACKET socket on the zygote's stdin. The zygote
// loads LibTorch once; each job process is forked from it instead of
// starting a fresh runner (about 0.5 s of library start-up per job).
//
//   zygote → worker  kZygoteReady (one byte), once, when it can serve
//   worker → zygote  ZygoteRequest with three descriptors (SCM_RIGHTS): the
//                    job process's stdin, stdout and stderr
//   zygote → worker  ZygoteReply: the job process's pid, or 0 and errno
//
// The job process is the leader of its own process group and behaves as
// `paradnn-runner --job-stdin` on those descriptors. The zygote forks it
// through a short-lived intermediate process, so that it is re-parented to
// the nearest child subreaper: the worker, which sets PR_SET_CHILD_SUBREAPER
// and then reaps it like a child it started itself. The reply comes after
// the intermediate has exited, i.e. after the re-parenting.
#ifndef PARADNN_COMMON_ZYGOTE_PROTOCOL_H_
#define PARADNN_COMMON_ZYGOTE_PROTOCOL_H_

#include <cstdint>

namespace paradnn::worker {

inline constexpr char kZygoteReady = 'R';
inline constexpr int kZygoteFds = 3;  // stdin, stdout, stderr of the job process

struct ZygoteRequest {
  int64_t address_space_limit_bytes = 0;  // > 0: RLIMIT_AS of the job process
};

struct ZygoteReply {
  int32_t pid = 0;    // > 0: the job process
  int32_t error = 0;  // errno when pid is 0
};

}  // namespace paradnn::worker

#endif  // PARADNN_COMMON_ZYGOTE_PROTOCOL_H_
