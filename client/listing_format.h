// What `paradnn status` and `paradnn workers` print: sweeps, their
// parameters, workers and their roofs. Pure functions of their inputs;
// thread-safe. Results tables are client/output_format.h.
#ifndef PARADNN_CLIENT_LISTING_FORMAT_H_
#define PARADNN_CLIENT_LISTING_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/metrics.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

// Short description of a parameter's values: 4, [64, 256], 32..512 x2.
std::string DescribeParam(const v1::ParamSpec& spec);

// `paradnn status`: one line per sweep (id, name, family, device, state,
// done/total, ok, elapsed).
std::string FormatSweepList(const std::vector<v1::SweepStatus>& sweeps);

// `paradnn status SWEEP`: one sweep in detail.
std::string FormatSweepDetail(const v1::SweepStatus& sweep);

// "float32 247GFLOP/s, bfloat16 954GFLOP/s (datasheet 1.2T)"; "" without roofs.
std::string FormatRoofs(const v1::Platform& platform);

// `paradnn workers`: id, device, state, host, jobs done, BLAS, LibTorch,
// last seen (relative to `now_unix_ms`).
std::string FormatWorkers(const std::vector<v1::WorkerInfo>& workers, int64_t now_unix_ms);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_LISTING_FORMAT_H_
