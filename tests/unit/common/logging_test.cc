#include "common/logging.h"

#include <gtest/gtest.h>
#include <spdlog/details/log_msg.h>

#include <nlohmann/json.hpp>

namespace paradnn::common {
namespace {

std::string FormatJson(const std::string& logger, spdlog::level::level_enum level,
                       const std::string& message) {
  std::unique_ptr<spdlog::formatter> formatter = MakeJsonLogFormatter();
  spdlog::details::log_msg msg(logger, level, message);
  spdlog::memory_buf_t buf;
  formatter->format(msg, buf);
  return std::string(buf.data(), buf.size());
}

TEST(LoggingTest, JsonLineParsesWithEveryField) {
  const std::string hostile = "quote \" backslash \\ newline\n tab\t bell\x07 utf8 \xC3\xA9";
  const std::string line = FormatJson("paradnn-worker", spdlog::level::warn, hostile);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per record: " << line;
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("message").get<std::string>(), hostile);
  EXPECT_EQ(j.at("level").get<std::string>(), "warning");
  EXPECT_EQ(j.at("logger").get<std::string>(), "paradnn-worker");
  EXPECT_TRUE(j.at("pid").is_number_integer());
  const std::string time = j.at("time").get<std::string>();
  ASSERT_EQ(time.size(), 24u) << time;  // 2024-05-01T12:00:00.123Z
  EXPECT_EQ(time[10], 'T');
  EXPECT_EQ(time.back(), 'Z');
}

TEST(LoggingTest, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(JsonEscape("a\xFF"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(JsonEscape("\xC3"), "\xEF\xBF\xBD");  // truncated sequence
  EXPECT_EQ(JsonEscape("\x01"), "\\u0001");
  const std::string line = FormatJson("p", spdlog::level::info, "bad \xC0\xAF bytes");
  EXPECT_TRUE(nlohmann::json::accept(line)) << line;
}

TEST(LoggingTest, UnknownFormatIsRefused) {
  const absl::Status s = ConfigureLogging("paradnn-logging-test", "info", "xml");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--log-format"), std::string::npos);
}

}  // namespace
}  // namespace paradnn::common
