// Family noop: a harness family for load-testing the coordinator and the
// worker protocol. Nothing is built and nothing is timed: a noop job's
// result is OK at once, with zero counts, zero timed steps (stop_reason
// "noop") and no throughput (examples_per_sec 0), so that it can never be
// mistaken for a measurement of anything.
//
// Parameters: batch (required, as for every family; unused) and index
// (required, 0..2^40; unused, it tells otherwise identical jobs apart so a
// sweep can hold many).
#ifndef PARADNN_MODEL_FAMILIES_NOOP_H_
#define PARADNN_MODEL_FAMILIES_NOOP_H_

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::model {

inline constexpr const char* kNoopFamilyName = "noop";
// StepStats.stop_reason of every noop result.
inline constexpr const char* kNoopStopReason = "noop";

// Turns `m` (config and counts already filled) into the OK result of a noop
// job: no steps, no rates, stop_reason kNoopStopReason. Torch-free.
void FinishNoopMeasurement(v1::Measurement* m);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_NOOP_H_
