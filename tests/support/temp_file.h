// A file in the system temp folder holding given text, for tests of code
// that reads a path, and a folder for tests that write files of their own;
// each is removed when its object goes. Not thread-safe: one test owns it.
#ifndef PARADNN_TESTS_SUPPORT_TEMP_FILE_H_
#define PARADNN_TESTS_SUPPORT_TEMP_FILE_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace paradnn::testing {

class TempFile {
 public:
  // Creates paradnn-`prefix`-XXXXXX in the temp folder with `contents`; a
  // failure to create or write it fails the test, and path() is then empty.
  TempFile(const std::string& prefix, const std::string& contents) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("paradnn-" + prefix + "-XXXXXX")).string();
    const int fd = mkstemp(pattern.data());
    EXPECT_GE(fd, 0) << "mkstemp " << pattern;
    if (fd < 0) return;
    close(fd);
    path_ = pattern;
    std::ofstream out(path_);
    out << contents;
    EXPECT_TRUE(out.good()) << "writing " << path_;
  }
  ~TempFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A new, empty folder in the system temp folder, removed with all it holds
// when the TempFolder goes.
class TempFolder {
 public:
  // Creates paradnn-`prefix`-XXXXXX in the temp folder; a failure to create
  // it fails the test, and path() is then empty.
  explicit TempFolder(const std::string& prefix) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("paradnn-" + prefix + "-XXXXXX")).string();
    const bool made = mkdtemp(pattern.data()) != nullptr;
    EXPECT_TRUE(made) << "mkdtemp " << pattern;
    if (made) path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` in the folder.
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_SUPPORT_TEMP_FILE_H_
