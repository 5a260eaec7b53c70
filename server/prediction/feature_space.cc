#include "server/prediction/feature_space.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace paradnn::server::prediction {
namespace {

constexpr double kLogScaleRatio = 4;

// The value `config` has for a categorical axis's key ("" when absent).
std::string CategoryOf(const v1::ModelConfig& config, const std::string& key) {
  if (key == "optimizer") return config.optimizer();
  auto it = config.options().find(key);
  return it == config.options().end() ? "" : it->second;
}

}  // namespace

FeatureSpace FeatureSpace::Of(const std::vector<v1::ModelConfig>& grid) {
  std::vector<const v1::ModelConfig*> configs;
  configs.reserve(grid.size());
  for (const v1::ModelConfig& config : grid) configs.push_back(&config);
  return Of(configs);
}

FeatureSpace FeatureSpace::Of(const std::vector<const v1::ModelConfig*>& grid) {
  std::map<std::string, std::set<int64_t>> numeric;
  std::map<std::string, std::set<std::string>> categories;
  for (const v1::ModelConfig* config_pointer : grid) {
    const v1::ModelConfig& config = *config_pointer;
    for (const auto& [key, value] : config.params()) numeric[key].insert(value);
    for (const auto& [key, value] : config.options()) categories[key].insert(value);
    categories["optimizer"].insert(config.optimizer());
  }
  FeatureSpace space;
  for (const auto& [key, values] : numeric) {
    if (values.size() < 2) continue;
    FeatureAxis axis;
    axis.name = key;
    const double low = static_cast<double>(*values.begin());
    const double high = static_cast<double>(*values.rbegin());
    axis.log_scale = low > 0 && high / low >= kLogScaleRatio;
    axis.low = axis.log_scale ? std::log2(low) : low;
    axis.high = axis.log_scale ? std::log2(high) : high;
    space.axes_.push_back(axis);
  }
  for (const auto& [key, values] : categories) {
    if (values.size() < 2) continue;
    for (const std::string& value : values) {
      FeatureAxis axis;
      axis.name = absl::StrCat(key, "=", value);
      axis.categorical = true;
      axis.high = 1;
      space.axes_.push_back(axis);
    }
  }
  std::sort(space.axes_.begin(), space.axes_.end(),
            [](const FeatureAxis& a, const FeatureAxis& b) { return a.name < b.name; });
  return space;
}

std::vector<double> FeatureSpace::Encode(const v1::ModelConfig& config) const {
  std::vector<double> x;
  x.reserve(axes_.size());
  for (const FeatureAxis& axis : axes_) {
    if (axis.categorical) {
      const size_t eq = axis.name.find('=');
      const std::string key = axis.name.substr(0, eq);
      x.push_back(CategoryOf(config, key) == axis.name.substr(eq + 1) ? 1.0 : 0.0);
      continue;
    }
    auto it = config.params().find(axis.name);
    double value = it == config.params().end() ? 0 : static_cast<double>(it->second);
    if (axis.log_scale) value = value > 0 ? std::log2(value) : axis.low;
    if (it == config.params().end()) value = axis.low;
    x.push_back((value - axis.low) / (axis.high - axis.low));
  }
  return x;
}

}  // namespace paradnn::server::prediction
