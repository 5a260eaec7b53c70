#include "client/tune_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "model/family.h"
#include "model/sweep.h"
#include "platform/thread_profile.h"

namespace paradnn::client {
namespace {

double MedianOfRounds(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// 1, 2, 4, ... up to `limit`, with `limit` and `extra` (when within it).
std::vector<int> Doublings(int limit, int extra) {
  std::set<int> values;
  for (int v = 1; v <= limit; v *= 2) values.insert(v);
  values.insert(limit);
  if (extra >= 1 && extra <= limit) values.insert(extra);
  return {values.begin(), values.end()};
}

// The key of a configuration without its stack.threads value.
std::string ConfigKey(const v1::ModelConfig& config) {
  std::string key = absl::StrCat(model::ConfigName(config), " precision=", config.precision(),
                                 " optimizer=", config.optimizer());
  const std::map<std::string, std::string> stack(config.stack().begin(), config.stack().end());
  for (const auto& [name, value] : stack) {
    if (name != platform::kThreadsStackKey) absl::StrAppend(&key, " stack.", name, "=", value);
  }
  return key;
}

}  // namespace

std::vector<std::string> SearchCandidates(const model::CpuCores& cores, double widest_width,
                                          bool with_replicas) {
  const int logical = std::max(1, cores.logical_cpus);
  const int physical = std::max(1, cores.physical_cores > 0 ? cores.physical_cores : logical);
  const int pools =
      std::clamp(static_cast<int>(std::lround(std::max(2.0, widest_width))), 1, logical);
  std::vector<std::string> candidates(std::begin(kTuneBaselines), std::end(kTuneBaselines));
  for (int inter : Doublings(pools, 0)) {
    for (int intra : Doublings(logical, physical)) {
      if (intra * inter > logical) continue;
      const std::string counts = absl::StrCat("intra=", intra, ",inter=", inter);
      if (intra == logical && inter == 1) {
        candidates.push_back(counts + ",pin=on");
        candidates.push_back(counts + ",pin=off");
      } else {
        candidates.push_back(counts);
      }
    }
  }
  // With hyper-threads: every physical core with its siblings idle, beside
  // the same count spread over every logical CPU.
  const std::string on_cores = physical < logical ? ",cores=physical" : "";
  if (physical < logical)
    candidates.push_back(absl::StrCat("intra=", physical, ",inter=1", on_cores));
  if (!with_replicas) return candidates;
  // P processes of the physical cores / P threads each (their shares cut
  // from the physical cores: contiguous halves of every logical CPU would
  // pair siblings); one per socket too, and with its memory on its node.
  std::vector<int> replicas = Doublings(physical, 0);
  if (cores.sockets > 1) replicas.push_back(cores.sockets);
  std::sort(replicas.begin(), replicas.end());
  replicas.erase(std::unique(replicas.begin(), replicas.end()), replicas.end());
  for (int p : replicas) {
    if (p < 2) continue;
    candidates.push_back(absl::StrCat("intra=", physical / p, ",inter=1,replicas=", p, on_cores));
  }
  if (cores.sockets > 1) {
    candidates.push_back(absl::StrCat("intra=", physical / cores.sockets,
                                      ",inter=1,replicas=", cores.sockets, on_cores, ",numa=on"));
  }
  return candidates;
}

absl::Status CheckTunable(const v1::SweepSpec& spec) {
  if (!spec.device().empty() && spec.device() != "cpu") {
    return absl::InvalidArgumentError(absl::StrCat(
        "device: ", spec.device(), "; paradnn tune tunes CPU thread settings (device: cpu)"));
  }
  if (spec.stack().count(platform::kThreadsStackKey) > 0) {
    return absl::InvalidArgumentError(
        "stack.threads: paradnn tune chooses the thread settings; remove the axis");
  }
  for (const model::ParamRule* rule : {&model::kIntraOpThreadsRule, &model::kInterOpThreadsRule}) {
    if (spec.params().count(rule->name) > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "params.", rule->name, ": paradnn tune chooses the thread counts; remove it"));
    }
  }
  return absl::OkStatus();
}

v1::SweepSpec TuneSweep(const v1::SweepSpec& spec, const std::vector<std::string>& settings,
                        int rounds, const std::string& suffix) {
  v1::SweepSpec out = spec;
  out.set_name(absl::StrCat(spec.name().empty() ? spec.family() : spec.name(), suffix));
  v1::StringValues& values = (*out.mutable_stack())[platform::kThreadsStackKey];
  values.clear_values();
  for (const std::string& s : settings) values.add_values(s);
  out.set_repeats(std::max(1, rounds));
  out.mutable_run()->set_fresh(true);
  out.mutable_run()->set_target_interval(0);  // rounds, not a repeat-until rule
  out.set_source_text("");
  return out;
}

std::vector<ConfigBest> BestPerConfiguration(const std::vector<v1::ResultRow>& rows) {
  // configuration -> settings -> each round's median step
  std::map<std::string, std::map<std::string, std::vector<double>>> steps;
  std::map<std::string, v1::ModelConfig> configs;
  std::vector<std::string> order;
  for (const v1::ResultRow& row : rows) {
    if (!row.has_measurement() || row.measurement().outcome() != v1::OK) continue;
    const double median = row.measurement().stats().median_s();
    const auto threads = row.config().stack().find(platform::kThreadsStackKey);
    if (!(median > 0) || threads == row.config().stack().end()) continue;
    const std::string key = ConfigKey(row.config());
    if (configs.count(key) == 0) {
      v1::ModelConfig config = row.config();
      config.mutable_stack()->erase(platform::kThreadsStackKey);
      configs[key] = config;
      order.push_back(key);
    }
    steps[key][threads->second].push_back(median);
  }
  std::vector<ConfigBest> bests;
  for (const std::string& key : order) {
    ConfigBest best;
    best.config = configs[key];
    for (const auto& [settings, values] : steps[key]) {
      best.by_settings.emplace_back(settings, MedianOfRounds(values));
    }
    std::sort(best.by_settings.begin(), best.by_settings.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    best.settings = best.by_settings.front().first;
    best.step_seconds = best.by_settings.front().second;
    bests.push_back(std::move(best));
  }
  return bests;
}

bool PointIsConfig(const std::string& point_config, const v1::ModelConfig& config) {
  const std::vector<std::string> tokens = absl::StrSplit(point_config, ' ', absl::SkipEmpty());
  if (tokens.empty() || tokens[0] != config.family()) return false;
  std::map<std::string, std::string> mine;
  for (const auto& [key, value] : config.params()) mine[key] = absl::StrCat(value);
  for (const auto& [key, value] : config.options()) mine[key] = value;
  mine["precision"] = config.precision().empty() ? "float32" : config.precision();
  mine["optimizer"] = config.optimizer().empty() ? "rmsprop" : config.optimizer();
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::vector<std::string> kv = absl::StrSplit(tokens[i], absl::MaxSplits('=', 1));
    if (kv.size() != 2) continue;
    const auto it = mine.find(kv[0]);
    if (it != mine.end() && it->second != kv[1]) return false;
  }
  return true;
}

}  // namespace paradnn::client
