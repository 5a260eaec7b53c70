// Where this worker's runner serves a data-parallel gang's rendezvous when
// it is rank 0 (--rendezvous-port, --advertise-address; WorkerHello). A
// worker runs one job at a time, so one port serves every gang it leads.
#ifndef PARADNN_WORKER_RENDEZVOUS_ENDPOINT_H_
#define PARADNN_WORKER_RENDEZVOUS_ENDPOINT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paradnn::worker {

// The port to advertise for `requested` (--rendezvous-port): itself for
// 1..65535; for 0, a port the kernel hands out as free now (bound on every
// interface, read back, closed again). InvalidArgument naming the flag for
// any other value; Unavailable when no port could be bound.
absl::StatusOr<int> ResolveRendezvousPort(int64_t requested);

// OK when nothing on this host listens on (or holds without SO_REUSEADDR)
// TCP `port` now; else FailedPrecondition saying so. A runner's rendezvous
// store binds it with SO_REUSEADDR, as this check does.
absl::Status CheckRendezvousPortFree(int port);

// OK for "" (the coordinator then uses the address it sees the worker's
// stream come from), a host name, an IPv4 address or an IPv6 address
// without brackets; InvalidArgument naming --advertise-address otherwise
// (spaces, control characters, a HOST:PORT, over 253 characters).
absl::Status ValidateAdvertiseAddress(const std::string& address);

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_RENDEZVOUS_ENDPOINT_H_
