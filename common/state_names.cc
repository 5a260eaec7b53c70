#include "common/state_names.h"

#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::common {

std::string SweepStateName(int state) {
  switch (state) {
    case v1::SWEEP_STATE_UNSPECIFIED:
      return "unspecified";
    case v1::SWEEP_RUNNING:
      return "running";
    case v1::SWEEP_DONE:
      return "done";
    case v1::SWEEP_CANCELLED:
      return "cancelled";
    case v1::SWEEP_INTERRUPTED:
      return "interrupted";
    default:
      return kUnknownStateName;
  }
}

std::string JobStateName(int state) {
  switch (state) {
    case v1::JOB_STATE_UNSPECIFIED:
      return "unspecified";
    case v1::JOB_PENDING:
      return "pending";
    case v1::JOB_LEASED:
      return "leased";
    case v1::JOB_DONE:
      return "done";
    case v1::JOB_FAILED:
      return "failed";
    case v1::JOB_CANCELLED:
      return "cancelled";
    case v1::JOB_HELD:
      return "held";
    case v1::JOB_PREDICTED:
      return "predicted";
    default:
      return kUnknownStateName;
  }
}

std::string WorkerStateName(int state) {
  switch (state) {
    case v1::WORKER_STATE_UNSPECIFIED:
      return "unspecified";
    case v1::WORKER_IDLE:
      return "idle";
    case v1::WORKER_BUSY:
      return "busy";
    case v1::WORKER_DRAINING:
      return "draining";
    case v1::WORKER_SILENT:
      return "silent";
    case v1::WORKER_DISCONNECTED:
      return "disconnected";
    default:
      return kUnknownStateName;
  }
}

}  // namespace paradnn::common
