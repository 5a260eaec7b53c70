// Configurations, stored once each (configs, config_params) and shared by
// every job and sweep that runs them.
#ifndef PARADNN_DB_CONFIG_INTERN_H_
#define PARADNN_DB_CONFIG_INTERN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::db {

// A configuration's identity (configs.canonical): the family, then every
// param and option as key=value sorted by key, space-separated, e.g.
// "fc batch=64 layer=4 node=32". Precision, optimizer and repeat are not
// part of it.
std::string ConfigCanonical(const v1::ModelConfig& config);

// The configs row of `config`, inserted with its config_params when new.
// Runs inside the caller's write transaction.
absl::StatusOr<int64_t> InternConfig(sqlite3* db, const v1::ModelConfig& config);

}  // namespace paradnn::db

#endif  // PARADNN_DB_CONFIG_INTERN_H_
