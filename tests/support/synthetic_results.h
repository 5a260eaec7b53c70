// Stored results with known values, written through the real stores (a
// sweep, a lease per job, one result each), for the analysis tests and the
// analysis benchmark.
#ifndef PARADNN_TESTS_SUPPORT_SYNTHETIC_RESULTS_H_
#define PARADNN_TESTS_SUPPORT_SYNTHETIC_RESULTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "db/database.h"
#include "db/job_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"

namespace paradnn::testing {

// One job and what its result says.
struct SyntheticResult {
  std::string family = "fc";
  std::map<std::string, int64_t> params;
  std::map<std::string, std::string> stack;  // ModelConfig.stack, as expansion writes it
  std::string precision = "float32";
  std::string optimizer = "rmsprop";
  int32_t repeat = 0;
  v1::Outcome outcome = v1::OK;
  double examples_per_sec = 0;
  double model_flops_per_sec = 0;
  double executed_flops_per_sec = 0;
  double executed_flops = 0;  // per step
  double bytes_per_step = 0;
  double mfu = 0;
  int64_t param_count = 0;
  int32_t intra_op_threads = 2;
  double step_median_s = 0.01;
  std::vector<v1::OpProfile> ops;
};

// A platform with a float32 roof and a copy-bandwidth curve.
inline v1::Platform SyntheticPlatform(const std::string& fingerprint,
                                      const std::string& device_kind, double fp32_roof) {
  v1::Platform platform;
  platform.set_fingerprint(fingerprint);
  platform.set_device_kind(device_kind);
  platform.set_device_name(absl::StrCat("Synthetic ", device_kind, " ", fingerprint));
  platform.set_hostname("host-" + fingerprint);
  platform.set_libtorch_version("2.1.2");
  platform.set_blas_backend("OpenBLAS 0.3.21 (pthread)");
  platform.set_cache_sizes("L1d 48 KiB, L2 1 MiB, L3 32 MiB");
  v1::MatmulRoof* roof = platform.add_matmul_roofs();
  roof->set_dtype("float32");
  roof->set_flops_per_sec(fp32_roof);
  v1::MatmulRoof* bf16 = platform.add_matmul_roofs();
  bf16->set_dtype("bfloat16");
  bf16->set_flops_per_sec(4 * fp32_roof);
  const std::pair<int64_t, double> copy[] = {
      {32 << 10, 100e9}, {512 << 10, 300e9}, {16 << 20, 200e9}, {256 << 20, 45e9}};
  for (const auto& [bytes, rate] : copy) {
    v1::BandwidthPoint* point = platform.add_bandwidth();
    point->set_kernel("copy");
    point->set_bytes(bytes);
    point->set_bytes_per_sec(rate);
  }
  return platform;
}

// Creates sweep `name` on `device` with one job per result (in order) and
// stores each result as measured by `worker` on `platform_id`. Returns the
// sweep id.
inline absl::StatusOr<int64_t> StoreSyntheticSweep(db::Database* database, const std::string& name,
                                                   const std::string& device,
                                                   const std::vector<SyntheticResult>& results,
                                                   int64_t platform_id, const std::string& worker,
                                                   int64_t now_unix_ms = 1'700'000'000'000) {
  v1::SweepSpec spec;
  spec.set_name(name);
  spec.set_family(results.empty() ? "fc" : results.front().family);
  spec.set_device(device);
  // The spec lists every value the results take, as a sweep file would.
  std::map<std::string, std::set<int64_t>> values;
  std::set<std::string> precisions;
  for (const SyntheticResult& result : results) {
    for (const auto& [key, value] : result.params) values[key].insert(value);
    if (precisions.insert(result.precision).second) spec.add_precision(result.precision);
  }
  for (const auto& [key, set] : values) {
    v1::ParamSpec& param = (*spec.mutable_params())[key];
    if (set.size() == 1) {
      param.set_value(*set.begin());
    } else {
      for (int64_t value : set) param.mutable_values()->add_values(value);
    }
  }
  std::vector<db::NewJob> jobs;
  for (size_t i = 0; i < results.size(); ++i) {
    const SyntheticResult& result = results[i];
    db::NewJob job;
    job.config.set_family(result.family);
    for (const auto& [key, value] : result.params) (*job.config.mutable_params())[key] = value;
    for (const auto& [key, value] : result.stack) (*job.config.mutable_stack())[key] = value;
    job.config.set_precision(result.precision);
    job.config.set_optimizer(result.optimizer);
    job.device = device;
    job.ordinal = static_cast<int32_t>(i);
    job.repeat = result.repeat;
    job.params = result.param_count;
    jobs.push_back(std::move(job));
  }
  db::SweepStore sweeps(database);
  absl::StatusOr<int64_t> sweep_id = sweeps.CreateSync(spec, std::move(jobs), now_unix_ms);
  if (!sweep_id.ok()) return sweep_id.status();

  db::JobStore job_store(database);
  db::ResultStore result_store(database);
  for (const SyntheticResult& result : results) {
    absl::StatusOr<std::optional<db::Lease>> lease =
        job_store.LeaseNextSync(device, worker, now_unix_ms, now_unix_ms + 60'000);
    if (!lease.ok()) return lease.status();
    if (!lease->has_value()) return absl::InternalError("synthetic sweep: no job to lease");
    v1::Measurement m;
    m.set_outcome(result.outcome);
    if (result.outcome == v1::OK) {
      m.set_examples_per_sec(result.examples_per_sec);
      m.set_model_flops_per_sec(result.model_flops_per_sec);
      m.set_executed_flops_per_sec(result.executed_flops_per_sec);
      m.mutable_counts()->set_executed_flops(result.executed_flops);
      m.mutable_counts()->set_bytes_per_step(result.bytes_per_step);
      m.mutable_counts()->set_params(result.param_count);
      m.mutable_stats()->set_median_s(result.step_median_s);
      m.mutable_stats()->set_steps(10);
      m.set_mfu(result.mfu);
      m.set_intra_op_threads(result.intra_op_threads);
      m.set_inter_op_threads(1);
      for (const v1::OpProfile& op : result.ops) *m.add_op_profile() = op;
    }
    absl::StatusOr<db::StoreOutcome> stored = result_store.StoreSync(
        (*lease)->job_id, (*lease)->attempt_id, worker, platform_id, m, now_unix_ms + 1);
    if (!stored.ok()) return stored.status();
  }
  return sweep_id;
}

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_SUPPORT_SYNTHETIC_RESULTS_H_
