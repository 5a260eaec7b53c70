#include "server/analysis/rerun_model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "boost/math/distributions/normal.hpp"
#include "boost/math/distributions/students_t.hpp"

namespace paradnn::server::analysis {
namespace {

// A 95 % half-width's normal quantile: within_rel / this is the run's own sd.
constexpr double kZ95 = 1.959964;
// Fewer pooled degrees of freedom than this and re-runs are not a basis.
constexpr double kMinRerunDegrees = 2;

size_t BandOf(double step_s) {
  size_t band = 0;
  while (band < RerunModel::kBandEdges.size() && step_s >= RerunModel::kBandEdges[band]) ++band;
  return band;
}

// The sample standard deviation of `values`; 0 for fewer than 2.
double StandardDeviation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

}  // namespace

RerunModel RerunModel::Fit(const std::vector<RerunSample>& samples) {
  RerunModel model;
  std::map<std::string, std::vector<double>> logs_by_group;
  std::vector<double> sentinel_logs;
  for (const RerunSample& sample : samples) {
    if (!(sample.step_s > 0) || !std::isfinite(sample.step_s)) continue;
    logs_by_group[sample.group].push_back(std::log(sample.step_s));
    if (sample.sentinel > 0 && std::isfinite(sample.sentinel)) {
      sentinel_logs.push_back(std::log(sample.sentinel));
    }
  }
  double total_squares = 0, total_degrees = 0;
  for (const auto& [group, logs] : logs_by_group) {
    if (logs.size() < 2) continue;
    double mean = 0;
    for (double v : logs) mean += v;
    mean /= static_cast<double>(logs.size());
    double squares = 0;
    for (double v : logs) squares += (v - mean) * (v - mean);
    Band& band = model.bands_[BandOf(std::exp(mean))];
    band.sum_squares += squares;
    band.degrees += static_cast<double>(logs.size() - 1);
    model.groups_[group] = {squares, static_cast<double>(logs.size() - 1)};
    total_squares += squares;
    total_degrees += static_cast<double>(logs.size() - 1);
    ++model.rerun_groups_;
  }
  model.sentinel_readings_ = sentinel_logs.size();
  if (total_degrees >= kMinRerunDegrees) {
    model.overall_ = {std::sqrt(total_squares / total_degrees), total_degrees, "re-runs"};
  } else if (sentinel_logs.size() >= kMinSentinelReadings) {
    model.overall_ = {StandardDeviation(sentinel_logs),
                      static_cast<double>(sentinel_logs.size() - 1), "sentinel"};
  } else {
    model.overall_ = {kPriorRerunRelSd, 0, "prior"};
  }
  return model;
}

RerunSpread RerunModel::SpreadAt(double step_s, double within_rel, const std::string& group) const {
  RerunSpread spread = overall_;
  if (overall_.basis == "re-runs") {
    // The band's own pooled variance, shrunk toward the overall one by
    // kShrinkDegrees pseudo-observations: a band with few re-runs borrows
    // from the platform, one with many speaks for itself. The same again
    // for the run's own configuration against its band.
    const Band& band = bands_[BandOf(step_s)];
    const double overall_variance = overall_.rel_sd * overall_.rel_sd;
    double variance =
        (band.sum_squares + kShrinkDegrees * overall_variance) / (band.degrees + kShrinkDegrees);
    spread.degrees_of_freedom =
        std::min(overall_.degrees_of_freedom, band.degrees + kShrinkDegrees);
    if (auto own = groups_.find(group); !group.empty() && own != groups_.end()) {
      variance = (own->second.sum_squares + kShrinkDegrees * variance) /
                 (own->second.degrees + kShrinkDegrees);
      spread.degrees_of_freedom =
          std::min(spread.degrees_of_freedom, own->second.degrees + kShrinkDegrees);
    }
    spread.rel_sd = std::sqrt(variance);
  }
  // A run noisier than the platform's re-runs spreads at least as its own
  // steps do.
  const double within_sd = within_rel > 0 ? within_rel / kZ95 : 0;
  spread.rel_sd = std::max(spread.rel_sd, within_sd);
  return spread;
}

RerunInterval PredictRerun(const RerunModel& model, double step_s, double within_rel,
                           const std::string& group, double level) {
  RerunInterval interval;
  interval.spread = model.SpreadAt(step_s, within_rel, group);
  const double tail = (1 - level) / 2;
  double quantile = 0;
  if (interval.spread.degrees_of_freedom > 0) {
    const boost::math::students_t t(interval.spread.degrees_of_freedom);
    quantile = boost::math::quantile(boost::math::complement(t, tail));
  } else {
    quantile = boost::math::quantile(boost::math::complement(boost::math::normal(), tail));
  }
  const double log_half_width = quantile * std::sqrt(2.0) * interval.spread.rel_sd;
  interval.low_s = step_s * std::exp(-log_half_width);
  interval.high_s = step_s * std::exp(log_half_width);
  interval.half_width_rel = std::exp(log_half_width) - 1;
  return interval;
}

}  // namespace paradnn::server::analysis
