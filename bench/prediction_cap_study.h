// What bounding the step-time model's fit costs (FitOptions.max_points):
// `paradnn-bench-predict --cap-study N` fits N noisy measurements of a known
// roofline world with each cap and prints the errors against the truth, the
// intervals' coverage of a re-measurement and the fit's time.
#ifndef PARADNN_BENCH_PREDICTION_CAP_STUDY_H_
#define PARADNN_BENCH_PREDICTION_CAP_STUDY_H_

#include <cstdint>

namespace paradnn::bench {

// Prints the study of `measurements` points (seeded); the exit status.
int RunCapStudy(int measurements, uint64_t seed);

}  // namespace paradnn::bench

#endif  // PARADNN_BENCH_PREDICTION_CAP_STUDY_H_
