#include "model/family_tables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "model/family.h"

namespace paradnn::model {
namespace {

using ::testing::HasSubstr;

TEST(FamilyReferenceTest, NamesEveryFamilyAndKey) {
  const std::string text = FamilyReferenceMarkdown();
  for (const FamilyDef* family : AllFamilies()) {
    EXPECT_THAT(text, HasSubstr(std::string("### `") + family->name + "`: " + family->summary));
    for (const ParamRule& p : family->params) {
      EXPECT_THAT(text, HasSubstr(std::string("| `") + p.name + "` | integer |"));
    }
    for (const OptionRule& o : family->options) {
      EXPECT_THAT(text, HasSubstr(std::string("| `") + o.name + "` | option |"));
    }
  }
  EXPECT_THAT(text, HasSubstr("| `image` | integer | default 512 | 64 … 4096, multiples of 32 |"));
  EXPECT_THAT(text, HasSubstr("| `block_fn` | option | required | `residual`, `bottleneck` |"));
  EXPECT_THAT(text, HasSubstr("| `length` | integer | default 128 | 1 … 65536 |"));
}

TEST(JaxFamilyTableTest, ListsEveryFamilyWithItsRules) {
  const std::string text = JaxFamilyTablePython();
  for (const FamilyDef* family : AllFamilies()) {
    EXPECT_THAT(text, HasSubstr(std::string("    \"") + family->name + "\": {\n"));
  }
  EXPECT_THAT(text, HasSubstr("(\"layer\", 1, 4096, True, None, 0),"));
  EXPECT_THAT(text, HasSubstr("(\"image\", 64, 4096, False, 512, 32),"));
  EXPECT_THAT(text, HasSubstr("(\"intra_op_threads\", 1, 1024, False, None, 0),"));
  EXPECT_THAT(text, HasSubstr("(\"block_fn\", (\"residual\", \"bottleneck\"), None),"));
  EXPECT_THAT(text, HasSubstr("(\"blocks\", (), \"\"),"));
  EXPECT_THAT(text, HasSubstr("(\"memory_format\", (\"channels_last\", \"contiguous\"), "
                              "\"channels_last\"),"));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool UpdateRequested() {
  const char* update = std::getenv("PARADNN_UPDATE_GENERATED");
  return update != nullptr && std::string(update) == "1";
}

// The checked-in copies are what users and the JAX runner read; each must be
// exactly what the table generates. PARADNN_UPDATE_GENERATED=1 rewrites them.
class GeneratedFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* source_dir = std::getenv("PARADNN_SOURCE_DIR");
    if (source_dir == nullptr) GTEST_SKIP() << "PARADNN_SOURCE_DIR is not set (run through ctest)";
    source_dir_ = source_dir;
  }
  std::string source_dir_;
};

TEST_F(GeneratedFilesTest, DocsFamilyReferenceIsCurrent) {
  const std::string path = source_dir_ + "/docs/sweep-files.md";
  const std::string text = ReadFile(path);
  const size_t begin = text.find(kFamilyReferenceBegin);
  const size_t end = text.find(kFamilyReferenceEnd);
  ASSERT_NE(begin, std::string::npos) << "marker missing: " << kFamilyReferenceBegin;
  ASSERT_NE(end, std::string::npos) << "marker missing: " << kFamilyReferenceEnd;
  const size_t start = begin + std::string(kFamilyReferenceBegin).size() + 1;  // and its newline
  ASSERT_LE(start, end);
  const std::string want = FamilyReferenceMarkdown();
  if (UpdateRequested() && text.substr(start, end - start) != want) {
    std::ofstream(path) << text.substr(0, start) << want << text.substr(end);
    return;
  }
  EXPECT_EQ(text.substr(start, end - start), want)
      << "docs/sweep-files.md is stale: rerun with PARADNN_UPDATE_GENERATED=1";
}

TEST_F(GeneratedFilesTest, JaxFamilyTableIsCurrent) {
  const std::string path = source_dir_ + "/" + kJaxFamilyTablePath;
  const std::string want = JaxFamilyTablePython();
  if (UpdateRequested() && ReadFile(path) != want) {
    std::ofstream(path) << want;
    return;
  }
  EXPECT_EQ(ReadFile(path), want) << kJaxFamilyTablePath
                                  << " is stale: rerun with PARADNN_UPDATE_GENERATED=1";
}

}  // namespace
}  // namespace paradnn::model
