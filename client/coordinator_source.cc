#include "client/coordinator_source.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace paradnn::client {

absl::StatusOr<std::unique_ptr<CoordinatorSource>> CoordinatorSource::Open(
    const CommandContext& ctx, const std::string& db_path) {
  auto source = std::make_unique<CoordinatorSource>();
  if (db_path.empty()) {
    source->client_ = std::make_unique<CoordinatorClient>(ctx.address, ctx.timeout_seconds);
    return source;
  }
  if (access(db_path.c_str(), R_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat("--db ", db_path, ": ", std::strerror(errno), " (a paradnn SQLite file)"));
  }
  PrivateCoordinatorOptions options;
  options.db_path = db_path;
  options.extra_args = {"--read-only"};
  options.needed_by = "--db";
  absl::StatusOr<std::unique_ptr<PrivateCoordinator>> reader =
      PrivateCoordinator::Start(options, ctx.interrupts);
  if (!reader.ok()) return reader.status();
  source->reader_ = *std::move(reader);
  // The private coordinator needs no token or TLS, whatever the CLI was given.
  source->client_ = std::make_unique<CoordinatorClient>(
      source->reader_->address(), ctx.timeout_seconds, common::ClientSecurity());
  return source;
}

}  // namespace paradnn::client
