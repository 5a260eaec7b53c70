#include "worker/unacked_results.h"

#include <algorithm>
#include <utility>

namespace paradnn::worker {

void UnackedResults::Add(v1::JobResult result) {
  for (v1::JobResult& held : results_) {
    if (held.job_id() == result.job_id() && held.attempt_id() == result.attempt_id()) {
      held = std::move(result);
      return;
    }
  }
  results_.push_back(std::move(result));
}

bool UnackedResults::Acknowledge(int64_t job_id, int64_t attempt_id) {
  auto it = std::find_if(results_.begin(), results_.end(), [&](const v1::JobResult& r) {
    return r.job_id() == job_id && r.attempt_id() == attempt_id;
  });
  if (it == results_.end()) return false;
  results_.erase(it);
  return true;
}

}  // namespace paradnn::worker
