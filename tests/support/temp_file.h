// A file in the system temp folder holding given text, for tests of code
// that reads a path; removed when the TempFile goes. Not thread-safe: one
// test owns it.
#ifndef PARADNN_TESTS_SUPPORT_TEMP_FILE_H_
#define PARADNN_TESTS_SUPPORT_TEMP_FILE_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_SUPPORT_TEMP_FILE_H_
