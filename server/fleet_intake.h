// The coordinator's side of a user's fleet (docs/fleet-events.md): the
// IngestFleetEvents stream (lines checked, good ones stored once each, bad
// ones named) and the FleetReport (every job decomposed, aggregated and
// explained against the roofs paradnn calibrated for its device kind).
#ifndef PARADNN_SERVER_FLEET_INTAKE_H_
#define PARADNN_SERVER_FLEET_INTAKE_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "db/fleet_event_store.h"
#include "paradnn/v1/coordinator.grpc.pb.h"

namespace paradnn::server {

// Reads FleetEventLines messages, checks every line (fleet/event_line.h),
// stores each message's good events before reading the next (so a client
// that sends fast waits for the database, not the coordinator's memory),
// and answers with the counts and the first 100 bad lines. Deletes itself.
class FleetIngestReactor final : public grpc::ServerReadReactor<v1::FleetEventLines> {
 public:
  // `database` must outlive the call.
  FleetIngestReactor(db::Database* database, v1::IngestFleetEventsResponse* response);
  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  db::FleetEventStore store_;
  v1::IngestFleetEventsResponse* const response_;
  v1::FleetEventLines batch_;
};

// The report of every stored event: jobs decomposed with the roofs of
// `request.roofs` first, then those calibrated on the fleet's workers of
// each device kind (the latest platform reported for it).
absl::StatusOr<v1::FleetReportResponse> BuildFleetReport(const db::Database& database,
                                                         const v1::FleetReportRequest& request);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_FLEET_INTAKE_H_
