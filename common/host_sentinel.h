// The host's speed around a job, from the host-speed sentinel stored with
// its result (v1::HostSentinel). A job holds up to two readings: "before"
// (its own, or the worker's newest from an earlier job, reused to keep the
// sentinel's cost down) and "after" (read when the "before" had grown old).
#ifndef PARADNN_COMMON_HOST_SENTINEL_H_
#define PARADNN_COMMON_HOST_SENTINEL_H_

#include <optional>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::common {

// The compute probe's speed against its calibration around the job (1 =
// as at calibration): the geometric mean of the readings it holds, a
// reused one included; nullopt when it holds none.
std::optional<double> HostSpeedAround(const v1::HostSentinel& sentinel);

// The same from the readings this job took itself: a statistic over the
// sentinel's readings (its spread on a host) must count a reused reading
// once, with the job that took it.
std::optional<double> OwnHostSpeed(const v1::HostSentinel& sentinel);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_HOST_SENTINEL_H_
