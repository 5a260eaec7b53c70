// A small RFC 4180 reader for tests, independent of the CSV writers under
// test: fails the test on an open quote or a last line without "\n".
#ifndef PARADNN_TESTS_SUPPORT_CSV_READER_H_
#define PARADNN_TESTS_SUPPORT_CSV_READER_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace paradnn::testing {

inline std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
    } else if (c == '\n') {
      record.push_back(field);
      field.clear();
      records.push_back(record);
      record.clear();
    } else {
      field.push_back(c);
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  EXPECT_TRUE(field.empty() && record.empty()) << "missing final line break";
  return records;
}

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_SUPPORT_CSV_READER_H_
