// Results the coordinator has not yet acknowledged.
#ifndef PARADNN_WORKER_UNACKED_RESULTS_H_
#define PARADNN_WORKER_UNACKED_RESULTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::worker {

// Finished job results kept until the coordinator acknowledges them (after
// it has committed them), so that they survive a broken stream and are
// re-sent after every reconnect. Keyed by (job_id, attempt_id); iteration
// is in the order the results were added. Not thread-safe.
class UnackedResults {
 public:
  // Adds `result`; one for the same job and attempt is replaced in place.
  void Add(v1::JobResult result);
  // Forgets the result of (job_id, attempt_id). Returns false if none was
  // held (a duplicate or stale ack).
  bool Acknowledge(int64_t job_id, int64_t attempt_id);

  const std::vector<v1::JobResult>& results() const { return results_; }
  size_t size() const { return results_.size(); }
  bool empty() const { return results_.empty(); }

 private:
  std::vector<v1::JobResult> results_;
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_UNACKED_RESULTS_H_
