// Where the CLI's read-only commands (results, analyze, report, compare)
// ask: the coordinator the CLI is pointed at, or with --db FILE a private
// read-only coordinator on that file (no lock, so the file's own
// coordinator may be running).
#ifndef PARADNN_CLIENT_COORDINATOR_SOURCE_H_
#define PARADNN_CLIENT_COORDINATOR_SOURCE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "client/local_runner.h"

namespace paradnn::client {

class CoordinatorSource {
 public:
  // `db_path` empty: ctx.address. NotFound when `db_path` is not readable.
  static absl::StatusOr<std::unique_ptr<CoordinatorSource>> Open(const CommandContext& ctx,
                                                                 const std::string& db_path);

  CoordinatorClient& client() { return *client_; }

 private:
  std::unique_ptr<PrivateCoordinator> reader_;  // outlives client_
  std::unique_ptr<CoordinatorClient> client_;
};

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_COORDINATOR_SOURCE_H_
