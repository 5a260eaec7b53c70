// Local workers before a sweep starts (paradnn local --one-at-a-time).
#ifndef PARADNN_CLIENT_LOCAL_STARTUP_H_
#define PARADNN_CLIENT_LOCAL_STARTUP_H_

#include "absl/status/status.h"
#include "client/commands.h"
#include "client/local_runner.h"

namespace paradnn::client {

// Every one of `workers` local workers connected (its host probed and, the
// first time, calibrated) before the sweep is submitted, so that no job is
// timed beside a worker's start. Starts the held-back workers once the
// first has connected, as the sweep's watch does. OK at once when
// interrupted; the cluster's failure, or DeadlineExceeded after 10 minutes.
absl::Status AwaitAllLocalWorkers(const CommandContext& ctx, CoordinatorClient& client,
                                  LocalCluster& cluster, int workers);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_LOCAL_STARTUP_H_
