// A platform's communication roofs as the analyses of multi-replica jobs
// use them (scale_out, roofline): per (backend, ranks), the alpha-beta fit
// (allreduce_fit.h) over the platform's latest allreduce sweep in the
// database, whichever sweeps an analysis selected. Reads on the caller's
// thread; a RoofBook is thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_COMMUNICATION_ROOFS_H_
#define PARADNN_SERVER_ANALYSIS_COMMUNICATION_ROOFS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/analysis.pb.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::server::analysis {

// The family whose jobs time one all-reduce per step (model/families).
inline constexpr char kAllreduceFamily[] = "allreduce";

// One run of an allreduce job, from its Measurement.
struct AllreduceRun {
  std::string backend;
  int32_t ranks = 0;
  double bytes = 0;
  double time_s = 0;  // DataParallelStep.allreduce_s, else the step's median
};

// The run `measurement` (of an allreduce job) records; nullopt without a
// DataParallelStep, ranks or a positive time.
std::optional<AllreduceRun> AllreduceRunOf(const v1::Measurement& measurement);

// (backend, ranks)
using RoofKey = std::pair<std::string, int32_t>;

// The roofs of the platform `fingerprint` (platforms.fingerprint): per
// (backend, ranks) the fit over the OK allreduce results of the newest
// sweep whose runs of it span two or more message sizes (else the newest
// sweep's, unfitted, with its note); sweep_ids says which sweep. Reused
// results (copies) are left out. Empty when it has none.
absl::StatusOr<std::map<RoofKey, v1::AllreduceRoof>> LoadLatestRoofs(
    const db::Database& database, const std::string& fingerprint);

// The roofs of the platforms an analysis meets, each read once.
class RoofBook {
 public:
  explicit RoofBook(const db::Database* database) : database_(database) {}

  // The roof of `platform_id` for (backend, ranks); nullptr when it has
  // none (or the platform is unknown).
  absl::StatusOr<const v1::AllreduceRoof*> Find(int64_t platform_id, const std::string& backend,
                                                int32_t ranks);
  // Every roof of `platform_id`.
  absl::StatusOr<const std::map<RoofKey, v1::AllreduceRoof>*> All(int64_t platform_id);
  // "Synthetic cpu cpu-a (cpu-a), gloo, 4 ranks": the platform for the reader.
  std::string Label(int64_t platform_id, const std::string& backend, int32_t ranks) const;

 private:
  struct Platform {
    std::string device_name;
    std::string fingerprint;
    std::map<RoofKey, v1::AllreduceRoof> roofs;
  };
  absl::StatusOr<const Platform*> Read(int64_t platform_id);

  const db::Database* database_;
  std::map<int64_t, Platform> platforms_;
};

// The roofline's communication ceilings: each job point of `roofline`
// whose job is data-parallel (2+ ranks) on a platform with a fitted roof
// for its backend and ranks gets the roof's time for its all-reduce and
// the FLOP/s that time caps the step at (executed FLOPs per step over it);
// each such platform's roofs go into its PlatformRoofs.communication.
// Reads the jobs' Measurements only on platforms that have roofs.
absl::Status AddCommunicationCeilings(const db::Database& database, v1::RooflineResponse* roofline);

// "gloo, 4 ranks: alpha 52 us, beta 1.2 GB/s (sweep 12, 27 runs at 9
// sizes, residual 3.1 %)", or why it did not fit.
std::string DescribeRoof(const v1::AllreduceRoof& roof);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_COMMUNICATION_ROOFS_H_
