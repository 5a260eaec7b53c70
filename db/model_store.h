// ModelStore: user TorchScript models (family torchscript), stored once by
// the SHA-256 of their bytes in the `models` table. Sweeps and jobs refer to
// a model by its hash only; the coordinator loads the bytes when it leases a
// job and ships them to the worker in RunnerJob.torchscript_content.
//
// Thread-safe (as every store over one Database).
#ifndef PARADNN_DB_MODEL_STORE_H_
#define PARADNN_DB_MODEL_STORE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "db/database.h"

namespace paradnn::db {

// Lowercase hex SHA-256 of `bytes` (64 characters), via OpenSSL's EVP API.
std::string Sha256Hex(absl::string_view bytes);

// A stored model without its bytes.
struct StoredModel {
  std::string sha256;
  std::string file_name;  // as first uploaded
  int64_t size_bytes = 0;
  int64_t created_unix_ms = 0;
};

class ModelStore {
 public:
  explicit ModelStore(Database* db) : db_(db) {}

  // Stores `content` under its SHA-256 unless a model with that hash is
  // already stored (then nothing changes: the first upload's file name and
  // time are kept). `done` gets the hash after commit. InvalidArgument for
  // empty content.
  void Put(std::string content, std::string file_name, int64_t now_unix_ms,
           Callback<std::string> done);
  absl::StatusOr<std::string> PutSync(std::string content, std::string file_name,
                                      int64_t now_unix_ms);

  // The model's bytes; NotFound for an unknown hash.
  absl::StatusOr<std::string> LoadContent(const std::string& sha256) const;
  // The model's record without its bytes; NotFound for an unknown hash.
  absl::StatusOr<StoredModel> Find(const std::string& sha256) const;
  // Number of stored models (tests and metrics).
  absl::StatusOr<int64_t> Count() const;

 private:
  Database* db_;
};

}  // namespace paradnn::db

#endif  // PARADNN_DB_MODEL_STORE_H_
