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
  std::vector<PredictorInput> inputs;
  inputs.reserve(open.size());
  for (size_t index : open) inputs.push_back(candidates[index]);
  // Each pick conditions the rest on it (StepTimeModel::Batch: what
  // WithPending(picked) gives, updated in O(n) per candidate).
  StepTimeModel::Batch batch = model.Candidates(inputs, count);
  std::vector<bool> taken(open.size(), false);
  std::vector<size_t> picked;
  while (picked.size() < count && picked.size() < open.size()) {
    size_t best = open.size();
    double best_score = -1;
    for (size_t k = 0; k < open.size(); ++k) {
      if (taken[k]) continue;
      const double sd = batch.log_sd(k);
      double score = sd * sd;
      if (cost_aware) score /= options.fixed_seconds + options.timed_steps * batch.seconds(k);
      if (score > best_score) {
        best_score = score;
        best = k;
      }
    }
    if (best == open.size()) break;
    taken[best] = true;
    picked.push_back(open[best]);
    if (picked.size() < count) batch.Add(best);
  }
  return picked;
}

}  // namespace paradnn::server::prediction
