#include "db/model_store.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using testing::DbTest;
using testing::ScalarInt;

TEST(Sha256HexTest, MatchesKnownDigests) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(Sha256Hex(with_nul).size(), 64u);
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex("a"));
}

class ModelStoreTest : public DbTest {};

TEST_F(ModelStoreTest, StoresOnceByHashAndLoadsTheBytes) {
  ModelStore models(db_.get());
  const std::string content("PK\x03\x04 model bytes \0 with a nul", 30);
  absl::StatusOr<std::string> first = models.PutSync(content, "mlp.pt", 1000);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, Sha256Hex(content));
  // The same bytes under another name: one row, the first record kept.
  absl::StatusOr<std::string> second = models.PutSync(content, "copy.pt", 2000);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(*models.Count(), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM models"), 1);

  absl::StatusOr<std::string> loaded = models.LoadContent(*first);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, content);
  absl::StatusOr<StoredModel> record = models.Find(*first);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->file_name, "mlp.pt");
  EXPECT_EQ(record->size_bytes, static_cast<int64_t>(content.size()));
  EXPECT_EQ(record->created_unix_ms, 1000);

  ASSERT_TRUE(models.PutSync("other model", "b.pt", 3000).ok());
  EXPECT_EQ(*models.Count(), 2);
}

TEST_F(ModelStoreTest, UnknownHashIsNotFoundNamingTheField) {
  ModelStore models(db_.get());
  const std::string unknown(64, 'a');
  absl::StatusOr<std::string> content = models.LoadContent(unknown);
  ASSERT_EQ(content.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(content.status().message().find("torchscript.sha256"), std::string::npos);
  EXPECT_EQ(models.Find(unknown).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelStoreTest, EmptyContentIsRefused) {
  ModelStore models(db_.get());
  EXPECT_EQ(models.PutSync("", "empty.pt", 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*models.Count(), 0);
}

TEST_F(ModelStoreTest, LargeModelRoundTrips) {
  ModelStore models(db_.get());
  std::string content(8 << 20, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 131 % 251);
  absl::StatusOr<std::string> sha = models.PutSync(content, "big.pt", 1);
  ASSERT_TRUE(sha.ok()) << sha.status();
  absl::StatusOr<std::string> loaded = models.LoadContent(*sha);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(*loaded == content);
}

}  // namespace
}  // namespace paradnn::db
