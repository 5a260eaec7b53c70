// Local workers before and while a sweep starts (paradnn local).
#ifndef PARADNN_CLIENT_LOCAL_STARTUP_H_
#define PARADNN_CLIENT_LOCAL_STARTUP_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/commands.h"
#include "client/local_runner.h"

namespace paradnn::client {

// How many of `listed` (ListWorkers) are connected.
int ConnectedWorkers(const std::vector<v1::WorkerInfo>& listed);

// Starts the workers LocalOptions.first_worker_alone held back once one of
// `listed` has connected (its calibration is then cached for them).
absl::Status StartHeldBackWorkers(LocalCluster& cluster, const std::vector<v1::WorkerInfo>& listed);

// The message of a worker log's last warning or error line, without its
// time stamp and logger name ("" when the tail holds none).
std::string LastWarningOfLog(const std::string& log_tail);

// Says, at most every `every`, how many of the local workers have connected
// and, for each one still out, the last warning its log holds when it is a
// new one (a failed calibration, a coordinator it cannot reach): such a
// worker retries for ever, and paradnn local would otherwise sit silent.
class WorkerStartReport {
 public:
  explicit WorkerStartReport(std::chrono::seconds every);
  bool due() const { return SteadyClock::now() >= next_; }
  void MaybeSay(const CommandContext& ctx, const LocalCluster& cluster,
                const std::vector<v1::WorkerInfo>& listed, int workers);

 private:
  using SteadyClock = std::chrono::steady_clock;
  std::chrono::seconds every_;
  SteadyClock::time_point start_;
  SteadyClock::time_point next_;
  std::map<std::string, std::string> said_;  // worker id -> last warning said
};

// Every one of `workers` local workers connected (its host probed and, the
// first time, calibrated) before the sweep is submitted, so that no job is
// timed beside a worker's start. Starts the held-back workers once the
// first has connected, as the sweep's watch does. OK at once when
// interrupted; the cluster's failure, or DeadlineExceeded after 10 minutes.
absl::Status AwaitAllLocalWorkers(const CommandContext& ctx, CoordinatorClient& client,
                                  LocalCluster& cluster, int workers);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_LOCAL_STARTUP_H_
