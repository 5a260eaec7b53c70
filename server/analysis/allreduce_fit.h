// The communication roof of a platform (issue 39, item 4): the alpha-beta
// model of one all-reduce over n ranks, t(M) = alpha + busbytes(M) / beta
// with busbytes(M) = M x 2(n-1)/n (nccl-tests' bus bytes), fitted to
// measured (message size, time) runs in relative least squares with
// alpha >= 0 and beta > 0. Pure functions of their inputs; thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_ALLREDUCE_FIT_H_
#define PARADNN_SERVER_ANALYSIS_ALLREDUCE_FIT_H_

#include <cstdint>
#include <vector>

#include "paradnn/v1/analysis.pb.h"

namespace paradnn::server::analysis {

// One measured all-reduce: the message's bytes and its (median) time.
struct AllreduceSample {
  double bytes = 0;
  double time_s = 0;
};

// The bytes each rank sends and receives in a ring all-reduce of `bytes`
// over `ranks`: bytes x 2(ranks-1)/ranks; 0 for one rank (or fewer).
double BusBytes(double bytes, int32_t ranks);

// Fits the roof to `samples` (each run its own sample; runs with a
// non-positive or non-finite time or negative bytes are left out) over
// `ranks`. Minimizes sum(((t - fit) / t)^2): step times span orders of
// magnitude, so each run counts by its relative error. When the
// unconstrained fit gives alpha < 0 or beta <= 0, the best fit on the
// violated bound (alpha = 0, or no bandwidth term) replaces it and
// `constraint` says which; the roof never claims a negative latency or a
// negative bandwidth. Fills fitted, alpha_s, beta_bytes_per_sec (0: the
// time does not grow with the message, latency-only), the 95 % intervals,
// relative_residual, sizes, runs, constraint and note; fewer than two
// distinct sizes is no fit (fitted false, note says why), one rank a
// latency-only fit (no bytes cross between ranks).
v1::AllreduceRoof FitAllreduceRoof(const std::vector<AllreduceSample>& samples, int32_t ranks);

// The roof's time for `messages` all-reduces (a DDP step's buckets) of
// `bytes` in all over `ranks`: alpha x messages + busbytes(bytes) / beta
// (the bandwidth term dropped when beta is unresolved). 0 when not fitted.
double RoofSeconds(const v1::AllreduceRoof& roof, double bytes, int32_t ranks,
                   int32_t messages = 1);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_ALLREDUCE_FIT_H_
