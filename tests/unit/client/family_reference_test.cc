#include "client/family_reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/sweep_validation.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;

TEST(FamilyReferenceTest, NamesEveryFamilyAndKey) {
  const std::string text = FamilyReferenceMarkdown();
  for (const common::FamilySchema& family : common::Families()) {
    EXPECT_THAT(text, HasSubstr(std::string("### `") + family.name + "`: " + family.summary));
    for (const common::ParamSchema& p : family.params) {
      EXPECT_THAT(text, HasSubstr(std::string("| `") + p.name + "` | integer |"));
    }
    for (const common::OptionSchema& o : family.options) {
      EXPECT_THAT(text, HasSubstr(std::string("| `") + o.name + "` | option |"));
    }
  }
  EXPECT_THAT(text, HasSubstr("| `image` | integer | default 512 | 64 … 4096, multiples of 32 |"));
  EXPECT_THAT(text, HasSubstr("| `block_fn` | option | required | `residual`, `bottleneck` |"));
  EXPECT_THAT(text, HasSubstr("| `length` | integer | default 128 | 1 … 65536 |"));
}

// docs/sweep-files.md holds the generated text; regenerate it with
// `paradnn families` when the schema changes.
TEST(FamilyReferenceTest, DocsAreUpToDate) {
  const char* source_dir = std::getenv("PARADNN_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "PARADNN_SOURCE_DIR is not set (run through ctest)";
  std::ifstream in(std::string(source_dir) + "/docs/sweep-files.md");
  ASSERT_TRUE(in);
  std::ostringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const size_t begin = text.find(kFamilyReferenceBegin);
  const size_t end = text.find(kFamilyReferenceEnd);
  ASSERT_NE(begin, std::string::npos) << "marker missing: " << kFamilyReferenceBegin;
  ASSERT_NE(end, std::string::npos) << "marker missing: " << kFamilyReferenceEnd;
  const size_t start = begin + std::string(kFamilyReferenceBegin).size() + 1;  // and its newline
  ASSERT_LE(start, end);
  EXPECT_EQ(text.substr(start, end - start), FamilyReferenceMarkdown())
      << "docs/sweep-files.md is stale: replace the text between the markers with the output "
         "of `paradnn families`";
}

}  // namespace
}  // namespace paradnn::client
