#include "server/prediction/acquisition.h"

#include <algorithm>

namespace paradnn::server::prediction {

std::vector<size_t> NextToMeasure(const StepTimeModel& model,
                                  const std::vector<PredictorInput>& candidates,
                                  const std::vector<bool>& measured, size_t count,
                                  const AcquisitionOptions& options) {
  std::vector<size_t> open;
  for (size_t i = 0; i < candidates.size() && i < measured.size(); ++i) {
    if (!measured[i]) open.push_back(i);
  }
  if (open.size() > options.max_scored && options.max_scored > 0) {
    std::vector<size_t> strided;
    strided.reserve(options.max_scored);
    const double stride =
        static_cast<double>(open.size()) / static_cast<double>(options.max_scored);
    for (size_t k = 0; k < options.max_scored; ++k) {
      strided.push_back(open[static_cast<size_t>(static_cast<double>(k) * stride)]);
    }
    open = std::move(strided);
  }
  const bool cost_aware = options.fixed_seconds > 0 || options.timed_steps > 0;
  std::vector<size_t> picked;
  std::vector<PredictorInput> pending;
  StepTimeModel conditioned = model;
  while (picked.size() < count && !open.empty()) {
    size_t best = 0;
    double best_score = -1;
    for (size_t k = 0; k < open.size(); ++k) {
      const StepTimePrediction p = conditioned.Predict(candidates[open[k]]);
      double score = p.log_sd * p.log_sd;
      if (cost_aware) score /= options.fixed_seconds + options.timed_steps * p.seconds;
      if (score > best_score) {
        best_score = score;
        best = k;
      }
    }
    picked.push_back(open[best]);
    pending.push_back(candidates[open[best]]);
    open.erase(open.begin() + static_cast<std::ptrdiff_t>(best));
    if (picked.size() < count) conditioned = model.WithPending(pending);
  }
  return picked;
}

}  // namespace paradnn::server::prediction
