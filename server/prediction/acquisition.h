// Which configurations a budgeted sweep measures next: those whose step time
// the model is least sure of. A batch is chosen one point at a time, each
// conditioned on the ones before it (StepTimeModel::WithPending), so a batch
// spreads out instead of crowding where the variance is highest. With a
// cost, the score is the variance per second of measuring: on a time
// budget, ten small configurations can teach more than one huge one.
#ifndef PARADNN_SERVER_PREDICTION_ACQUISITION_H_
#define PARADNN_SERVER_PREDICTION_ACQUISITION_H_

#include <cstddef>
#include <vector>

#include "server/prediction/step_time_model.h"

namespace paradnn::server::prediction {

struct AcquisitionOptions {
  // Seconds a measurement costs besides its timed steps (runner start,
  // model build, warm-up); with `timed_steps`, the cost of a candidate is
  // fixed_seconds + timed_steps x its predicted step time. Zero both: the
  // score is the variance alone.
  double fixed_seconds = 0;
  double timed_steps = 0;
  // Candidates scored per pick at most (an even stride over the
  // unmeasured ones, every one when fewer): keeps a 10,000-point grid cheap.
  size_t max_scored = 4000;
};

// Indices into `candidates` of up to `count` not yet `measured`
// (measured.size() == candidates.size()), best first. Ties go to the lower
// index.
std::vector<size_t> NextToMeasure(const StepTimeModel& model,
                                  const std::vector<PredictorInput>& candidates,
                                  const std::vector<bool>& measured, size_t count,
                                  const AcquisitionOptions& options = {});

}  // namespace paradnn::server::prediction

#endif  // PARADNN_SERVER_PREDICTION_ACQUISITION_H_
