#include "db/model_store.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/stores_internal.h"

namespace paradnn::db {

std::string Sha256Hex(absl::string_view bytes) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // Failures here mean OpenSSL itself is unusable (allocation, a broken
  // provider): a broken invariant, not an input error.
  if (ctx == nullptr || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1) {
    std::fprintf(stderr, "Sha256Hex: OpenSSL EVP SHA-256 failed\n");
    std::abort();
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

void ModelStore::Put(std::string content, std::string file_name, int64_t now_unix_ms,
                     Callback<std::string> done) {
  if (content.empty()) {
    if (done) done(absl::InvalidArgumentError("torchscript.content: empty model file"));
    return;
  }
  // Hashed on the caller's thread: the writer thread only writes.
  std::string sha256 = Sha256Hex(content);
  auto bytes = std::make_shared<std::string>(std::move(content));
  internal::WriteValue<std::string>(
      db_,
      [bytes, sha256, file_name = std::move(file_name),
       now_unix_ms](sqlite3* db) -> absl::StatusOr<std::string> {
        Statement insert(db,
                         "INSERT INTO models (sha256, content, file_name, size_bytes, "
                         "created_unix_ms) VALUES (?, ?, ?, ?, ?) "
                         "ON CONFLICT (sha256) DO NOTHING");
        insert.Bind(1, sha256)
            .BindBlob(2, *bytes)
            .Bind(3, file_name)
            .Bind(4, static_cast<int64_t>(bytes->size()))
            .Bind(5, now_unix_ms);
        if (absl::Status s = insert.Run(); !s.ok()) return s;
        return sha256;
      },
      std::move(done));
}

absl::StatusOr<std::string> ModelStore::PutSync(std::string content, std::string file_name,
                                                int64_t now_unix_ms) {
  return internal::Await<std::string>(db_, [&](Callback<std::string> done) {
    Put(std::move(content), std::move(file_name), now_unix_ms, std::move(done));
  });
}

absl::StatusOr<std::string> ModelStore::LoadContent(const std::string& sha256) const {
  std::string content;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
    Statement find(db, "SELECT content FROM models WHERE sha256 = ?");
    find.Bind(1, sha256);
    absl::StatusOr<bool> found = find.Step();
    if (!found.ok()) return found.status();
    if (!*found) {
      return absl::NotFoundError(absl::StrCat("torchscript.sha256: no stored model ", sha256));
    }
    content = find.ColumnBlob(0);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return content;
}

absl::StatusOr<StoredModel> ModelStore::Find(const std::string& sha256) const {
  StoredModel model;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
    Statement find(db,
                   "SELECT sha256, file_name, size_bytes, created_unix_ms FROM models "
                   "WHERE sha256 = ?");
    find.Bind(1, sha256);
    absl::StatusOr<bool> found = find.Step();
    if (!found.ok()) return found.status();
    if (!*found) {
      return absl::NotFoundError(absl::StrCat("torchscript.sha256: no stored model ", sha256));
    }
    model.sha256 = find.ColumnText(0);
    model.file_name = find.ColumnText(1);
    model.size_bytes = find.ColumnInt(2);
    model.created_unix_ms = find.ColumnInt(3);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return model;
}

absl::StatusOr<int64_t> ModelStore::Count() const {
  return internal::ReadCount(db_, "SELECT COUNT(*) FROM models", [](Statement&) {});
}

}  // namespace paradnn::db
