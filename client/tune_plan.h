// What `paradnn tune` measures and how it reads the results (issue 40,
// docs/tuning.md): the settings it searches (the stack.threads values of
// platform/thread_profile.h), the two sweeps it runs (a search over every
// candidate, then a confirmation of each configuration's best against the
// baselines, in fresh interleaved rounds, so that the best is not judged
// on the rounds that chose it) and the best per configuration. Pure: no
// processes, no RPCs.
#ifndef PARADNN_CLIENT_TUNE_PLAN_H_
#define PARADNN_CLIENT_TUNE_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/thread_guideline.h"
#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

// The settings every tune measures the best against, in this order.
inline constexpr const char* kTuneBaselines[] = {"libtorch", "intel", "tensorflow", "guideline"};

// The settings the search measures on `cores` for models whose widest
// average operator width is `widest_width`: the baselines, then explicit
// intra=T,inter=I for T in 1, 2, 4, ... and the physical and logical core
// counts, I in 1, 2, 4, ... up to the guideline's pools for the widest
// model (at least 2), with T x I within the logical CPUs; where T is every
// CPU and I is 1, with pin=on and pin=off both; with hyper-threads, every
// physical core with the siblings idle (cores=physical). Exhaustive on
// small hosts (8 values on 2 CPUs); guided by the guideline's range on
// large ones. `with_replicas` adds concurrent replicas (docs/tuning.md):
// P = 2, 4, ... up to the physical cores, and the sockets, each of physical
// cores / P intra-op threads and one inter-op thread (on physical cores
// where there are hyper-threads), and on several sockets one per socket
// with its memory on its node (numa=on).
std::vector<std::string> SearchCandidates(const model::CpuCores& cores, double widest_width,
                                          bool with_replicas = false);

// OK for a sweep `paradnn tune` can take: CPU, no stack.threads axis and
// no thread-count params (the tuner chooses them). Otherwise
// InvalidArgument naming the field.
absl::Status CheckTunable(const v1::SweepSpec& spec);

// `spec` with stack.threads = `settings`, `rounds` repeats, fresh results
// (none reused from earlier sweeps: each setting is measured in these
// rounds) and its name suffixed by `suffix` ("-tune-search").
v1::SweepSpec TuneSweep(const v1::SweepSpec& spec, const std::vector<std::string>& settings,
                        int rounds, const std::string& suffix);

// One configuration's best settings in a search.
struct ConfigBest {
  v1::ModelConfig config;   // without stack.threads
  std::string settings;     // the stack.threads value with the lowest median step
  double step_seconds = 0;  // its median over rounds of the results' median steps
  std::vector<std::pair<std::string, double>> by_settings;  // every value's, ascending
};

// Groups OK results by configuration (without stack.threads) and picks the
// settings with the lowest median step per configuration. A configuration
// without any OK result is left out.
std::vector<ConfigBest> BestPerConfiguration(const std::vector<v1::ResultRow>& rows);

// Whether `point_config` (a SpeedupPoint.config: "fc layer=4 node=32 ...
// precision=float32 optimizer=rmsprop") is `config`: the family and every
// key=value the point names of its params, options, precision and
// optimizer agree.
bool PointIsConfig(const std::string& point_config, const v1::ModelConfig& config);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_TUNE_PLAN_H_
