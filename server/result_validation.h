// What the coordinator accepts as a worker's result. A worker is a peer,
// not part of the coordinator: its numbers are checked before they are
// stored, and a result that breaks a rule is stored as ERROR naming the
// field (the job is done; the worker gets its ack and is not asked to send
// it again), never retried forever or stored as a measurement.
#ifndef PARADNN_SERVER_RESULT_VALIDATION_H_
#define PARADNN_SERVER_RESULT_VALIDATION_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "common/result_limits.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::server {

// The limits are common/result_limits.h.

// OK, or InvalidArgument naming the first field that breaks a rule:
//   - every number is finite, and at least 0 except first_loss / last_loss
//     (any finite value), subnormal_gradient_fraction (-1 = not checked) and
//     stats.lag1_autocorrelation (>= -1);
//   - the outcome is a known one;
//   - samples, profile rows, suspect sentences, text and the whole message
//     are within the limits above.
// `config` is not checked: analyses read the job's configuration from the
// jobs the coordinator created, not from the result.
// e.g. "measurement.stats.median_s: nan; a result's numbers must be finite
// and >= 0".
absl::Status ValidateMeasurement(const v1::Measurement& m);

// What is stored in place of a refused result: outcome ERROR, the error
// "refused by the coordinator: <why>", the device; no figures.
v1::Measurement RefusedMeasurement(const v1::Measurement& m, const absl::Status& why);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_RESULT_VALIDATION_H_
