// The findings of Wang et al. (ACM TACO 2021, docs/tuning.md) as checks of
// one host's measurements (the tuning analysis, analysis_kinds.h): per
// configuration its thread settings' medians, its best setting, the best
// with one inter-op pool and the best with several, and their difference
// judged as `paradnn compare` judges (comparison_stats.h); per family,
// whether narrow models train fastest with one pool and every core, wide
// models with several pools, and small batches gain more from pools than
// large ones. Pure: reads no database; thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_TUNING_FINDINGS_H_
#define PARADNN_SERVER_ANALYSIS_TUNING_FINDINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "paradnn/v1/analysis.pb.h"

namespace paradnn::server::analysis {

// Below this average operator width the guideline (model/thread_guideline.h)
// uses one inter-op pool: the paper's "narrow" models.
inline constexpr double kNarrowWidth = 1.5;

// One run of one setting: its repeat round (runs of one round ran close in
// time) and its metric value.
struct TuningRun {
  std::string round;
  double value = 0;
};

// One thread setting of one configuration and the counts it ran with.
struct TuningSettingRuns {
  std::string setting;
  int32_t intra_op_threads = 0;
  int32_t inter_op_threads = 0;
  std::vector<TuningRun> runs;
};

// One configuration, its thread settings aside.
struct TuningConfigRuns {
  std::string config;  // its label
  std::string family;
  std::string platform;
  // The label without its batch size: the configurations of one group (on
  // one platform) differ in batch only.
  std::string batch_group;
  std::optional<int64_t> batch;
  std::optional<double> width;  // average operator width; unset: unknown
  std::vector<TuningSettingRuns> settings;
};

// The tuning response for `configs` (their settings with at least one run
// each): medians, bests, pool gains and verdicts (false discovery rate
// `fdr` across configurations) per configuration, then the findings per
// family. `lower_is_better` for the metric (step_time); a rate's gains and
// verdicts are taken on its inverse.
v1::TuningResponse SummarizeTuning(const std::vector<TuningConfigRuns>& configs,
                                   const std::string& metric, bool lower_is_better, double fdr);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_TUNING_FINDINGS_H_
