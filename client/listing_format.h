// What `paradnn status` and `paradnn workers` print: sweeps, their
// parameters, workers and their roofs. Pure functions of their inputs;
// thread-safe. Results tables are client/output_format.h.
#ifndef PARADNN_CLIENT_LISTING_FORMAT_H_
#define PARADNN_CLIENT_LISTING_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "client/output_format.h"
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

// `paradnn status --format csv|json`: csv = one row per sweep with raw
// numbers (sweep_id, name, family, device, state, total_jobs, done_jobs,
// leased_jobs, pending_jobs, failed_jobs, cancelled_jobs, ok_results,
// elapsed_seconds, created_unix_ms, finished_unix_ms); json = an array of
// SweepStatus objects (proto field names, defaults included, 64-bit
// integers as strings). `format` is kCsv or kJson.
std::string FormatSweeps(const std::vector<v1::SweepStatus>& sweeps, OutputFormat format);

// `paradnn workers --format csv|json`: csv = worker_id, device_kind, state,
// hostname, jobs_done, blas_backend, libtorch_version, fingerprint,
// last_seen_unix_ms; json = an array of WorkerInfo objects, as above.
std::string FormatWorkerList(const std::vector<v1::WorkerInfo>& workers, OutputFormat format);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_LISTING_FORMAT_H_
