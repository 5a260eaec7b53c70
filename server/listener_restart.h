// gRPC 1.51's TCP listener stops accepting for good once accept4 fails with
// anything but EAGAIN/ECONNABORTED: past the open-file limit (EMFILE, or the
// system's ENFILE) it logs "Failed accept4" and never re-arms, while the
// connections it already has keep working. Nothing in gRPC's API restarts a
// listener, so the coordinator notices the failure in gRPC's log, drains
// and re-executes itself in place: same pid, same addresses, every
// descriptor closed; what it serves is in SQLite, which a restart keeps.
#ifndef PARADNN_SERVER_LISTENER_RESTART_H_
#define PARADNN_SERVER_LISTENER_RESTART_H_

#include <string>
#include <vector>

namespace paradnn::server {

// Sends gRPC's own log lines through spdlog (one format, one destination)
// and watches them for a listener that stopped accepting. Call once, before
// the server starts. Thread-safe after that.
void ForwardGrpcLogsToSpdlog();

// The accept failure gRPC logged ("Failed accept4: Too many open files"),
// or "" while its listeners accept.
std::string GrpcListenerFailure();

// The command line that brings the same coordinator back on the addresses it
// is bound to now: `argv` without its --listen/--metrics-listen values, then
// the bound ones (a port 0 asked for would pick another port).
// `bound_metrics` is "" when metrics are off.
std::vector<std::string> ArgumentsForRestart(const std::vector<std::string>& argv,
                                             const std::string& bound_listen,
                                             const std::string& bound_metrics);

// Marks every descriptor above stderr close-on-exec and replaces this
// process with /proc/self/exe `arguments`. Returns only on failure, with
// the reason.
std::string ExecuteInPlace(const std::vector<std::string>& arguments);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_LISTENER_RESTART_H_
