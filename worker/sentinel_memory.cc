#include "worker/sentinel_memory.h"

#include <algorithm>

#include "common/host_sentinel.h"

namespace paradnn::worker {

double SentinelMemory::ReuseSeconds(double reading_seconds) {
  return std::clamp(reading_seconds / kShare, 0.0, kMaxReuseSeconds);
}

bool SentinelMemory::BeatsCalibration(const v1::HostSentinel& sentinel) {
  return common::OwnHostSpeed(sentinel).value_or(0) > kBusyCalibrationRatio;
}

void SentinelMemory::Record(const v1::HostSentinel& sentinel, Clock::time_point started,
                            Clock::time_point finished) {
  const bool own_before = sentinel.compute_before() > 0 && sentinel.before_age_s() == 0;
  const bool after = sentinel.compute_after() > 0;
  const int readings = (own_before ? 1 : 0) + (after ? 1 : 0);
  if (readings == 0) return;
  if (sentinel.seconds() > 0) reading_seconds_ = sentinel.seconds() / readings;
  if (after) {
    newest_ = Reading{sentinel.compute_after(), sentinel.latency_after_s(), finished};
  } else {
    newest_ = Reading{sentinel.compute_before(), sentinel.latency_before_s(), started};
  }
}

void SentinelMemory::Fill(Clock::time_point now, v1::RunnerJob* job) const {
  job->set_sentinel_reuse_s(ReuseSeconds(reading_seconds_));
  if (!newest_.has_value()) return;
  v1::RecentSentinel& recent = *job->mutable_recent_sentinel();
  recent.set_compute_ratio(newest_->compute_ratio);
  recent.set_latency_s(newest_->latency_s);
  recent.set_age_s(std::chrono::duration<double>(now - newest_->at).count());
}

}  // namespace paradnn::worker
