// The archive check of an uploaded TorchScript model (server/
// torchscript_archive.h), on archives written here with libzip.
#include "server/torchscript_archive.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace paradnn::server {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// A zip of `entries` (name, bytes), each deflated: its bytes.
std::string Zip(const Entries& entries) {
  char path[] = "/tmp/paradnn_zip_test_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  int error = 0;
  zip_t* archive = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &error);
  EXPECT_NE(archive, nullptr) << error;
  for (const auto& [name, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(index, 0) << zip_strerror(archive);
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 9);
  }
  EXPECT_EQ(zip_close(archive), 0);
  std::ifstream in(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path);
  return content;
}

// What torch.jit.save writes for a small module (python3-torch 1.13).
Entries Model() {
  return {{"m/data.pkl", std::string(350, 'p')},
          {"m/code/__torch__.py", "class M(Module):\n  pass\n"},
          {"m/constants.pkl", "\x80\x02)."},
          {"m/version", "3\n"},
          {"m/data/0", std::string(32, '\0')}};
}

constexpr int64_t kLimit = 1 << 20;

void ExpectRefused(const std::string& content, const std::string& names) {
  const absl::Status status = CheckTorchScriptArchive(content, kLimit);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("torchscript.content: "), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find(names), absl::string_view::npos) << status;
}

TEST(CheckTorchScriptArchive, TakesWhatTorchJitSaveWrites) {
  EXPECT_TRUE(CheckTorchScriptArchive(Zip(Model()), kLimit).ok());
  Entries newer = Model();
  newer[3].first = "m/.data/version";  // where later LibTorch keeps it
  EXPECT_TRUE(CheckTorchScriptArchive(Zip(newer), kLimit).ok());
}

TEST(CheckTorchScriptArchive, RefusesWhatIsNoTorchScriptArchive) {
  std::mt19937 random(7);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  ExpectRefused(noise, "not a readable zip file");
  ExpectRefused(std::string("PK\x03\x04", 4) + noise, "not a readable zip file");
  ExpectRefused(Zip({{"notes.txt", "hello"}}), "outside a top folder");
  Entries two_roots = Model();
  two_roots.push_back({"other/data.pkl", "x"});
  ExpectRefused(Zip(two_roots), "outside the top folder 'm'");
  for (const char* missing : {"m/data.pkl", "m/version", "m/code/__torch__.py"}) {
    Entries without;
    for (const auto& entry : Model()) {
      if (entry.first != missing) without.push_back(entry);
    }
    ExpectRefused(
        Zip(without),
        std::string("no ") + (std::string(missing) == "m/code/__torch__.py" ? "m/code/" : missing));
  }
}

// A zip bomb in small: 4 MiB of zeros deflate to a few KiB; the archive's
// own directory says what it inflates to.
TEST(CheckTorchScriptArchive, RefusesAnArchiveThatInflatesPastTheLimit) {
  Entries bomb = Model();
  bomb.push_back({"m/constants.pkl.big", std::string(4 << 20, '\0')});
  const std::string content = Zip(bomb);
  EXPECT_LT(content.size(), 64u << 10);
  ExpectRefused(content, "inflates to more than 1048576 bytes (entry 'm/constants.pkl.big' alone");
  // Many entries under the limit each add up past it.
  Entries many = Model();
  for (int i = 0; i < 5; ++i)
    many.push_back({"m/data/" + std::to_string(i + 1), std::string(300 << 10, 'a')});
  ExpectRefused(Zip(many), "inflates to more than 1048576 bytes");
}

}  // namespace
}  // namespace paradnn::server
