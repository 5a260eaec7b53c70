#include "common/config_sources.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "gtest/gtest.h"

namespace paradnn::common {
namespace {

// Parses `args` (without the program name) into an app with two options, a
// flag, and the config sources.
struct Parsed {
  std::string log_level = "info";
  std::string listen = "127.0.0.1:7070";
  bool insecure = false;
};

class ConfigSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("config_sources_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ::unsetenv("PARADNN_LOG_LEVEL");
    ::unsetenv("PARADNN_LISTEN");
    ::unsetenv("PARADNN_INSECURE");
  }
  void TearDown() override {
    ::unsetenv("PARADNN_LOG_LEVEL");
    ::unsetenv("PARADNN_LISTEN");
    ::unsetenv("PARADNN_INSECURE");
    std::filesystem::remove_all(dir_);
  }

  std::string WriteConfig(const std::string& text) {
    const std::string path = (dir_ / "paradnn.toml").string();
    std::ofstream(path) << text;
    return path;
  }

  // Returns the parse error's message, or "" on success.
  std::string Parse(std::vector<std::string> args, Parsed* out) {
    app_ = std::make_unique<CLI::App>("test");
    app_->add_option("--log-level", out->log_level, "level");
    app_->add_option("--listen", out->listen, "address");
    app_->add_flag("--insecure", out->insecure, "flag");
    AddConfigSources(app_.get());
    args.insert(args.begin(), "prog");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    try {
      app_->parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      return std::string(e.get_name()) + ": " + e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
  std::unique_ptr<CLI::App> app_;
};

TEST(EnvNameForTest, UppercasesAndPrefixes) {
  EXPECT_EQ(EnvNameFor("log-level"), "PARADNN_LOG_LEVEL");
  EXPECT_EQ(EnvNameFor("--shutdown-grace-seconds"), "PARADNN_SHUTDOWN_GRACE_SECONDS");
  EXPECT_EQ(EnvNameFor("db"), "PARADNN_DB");
}

TEST_F(ConfigSourcesTest, DefaultsWithoutAnySource) {
  Parsed p;
  ASSERT_EQ(Parse({}, &p), "");
  EXPECT_EQ(p.log_level, "info");
  EXPECT_EQ(p.listen, "127.0.0.1:7070");
  EXPECT_FALSE(p.insecure);
}

TEST_F(ConfigSourcesTest, FileThenEnvironmentThenCommandLine) {
  const std::string file =
      WriteConfig("# settings\nlog-level = \"warn\"\nlisten = \"0.0.0.0:1\"\ninsecure = true\n");
  Parsed from_file;
  ASSERT_EQ(Parse({"--config", file}, &from_file), "");
  EXPECT_EQ(from_file.log_level, "warn");
  EXPECT_EQ(from_file.listen, "0.0.0.0:1");
  EXPECT_TRUE(from_file.insecure);

  ::setenv("PARADNN_LOG_LEVEL", "error", 1);
  Parsed env_over_file;
  ASSERT_EQ(Parse({"--config", file}, &env_over_file), "");
  EXPECT_EQ(env_over_file.log_level, "error");
  EXPECT_EQ(env_over_file.listen, "0.0.0.0:1");  // only in the file

  Parsed flag_over_env;
  ASSERT_EQ(Parse({"--config", file, "--log-level", "debug"}, &flag_over_env), "");
  EXPECT_EQ(flag_over_env.log_level, "debug");
  EXPECT_EQ(flag_over_env.listen, "0.0.0.0:1");
}

TEST_F(ConfigSourcesTest, EnvironmentAloneAndFlagsFromEnvironment) {
  ::setenv("PARADNN_LISTEN", "[::1]:9", 1);
  ::setenv("PARADNN_INSECURE", "true", 1);
  Parsed p;
  ASSERT_EQ(Parse({}, &p), "");
  EXPECT_EQ(p.listen, "[::1]:9");
  EXPECT_TRUE(p.insecure);
}

TEST_F(ConfigSourcesTest, UnknownKeyInFileIsAnError) {
  const std::string file = WriteConfig("log-levle = \"warn\"\n");
  Parsed p;
  const std::string error = Parse({"--config", file}, &p);
  EXPECT_NE(error.find("log-levle"), std::string::npos) << error;
}

TEST_F(ConfigSourcesTest, MissingFileIsAnError) {
  Parsed p;
  EXPECT_NE(Parse({"--config", (dir_ / "absent.toml").string()}, &p), "");
}

TEST_F(ConfigSourcesTest, HelpNamesEachVariableAndTheConfigFile) {
  Parsed p;
  ASSERT_EQ(Parse({}, &p), "");
  const std::string help = app_->help();
  EXPECT_NE(help.find("PARADNN_LOG_LEVEL"), std::string::npos) << help;
  EXPECT_NE(help.find("PARADNN_LISTEN"), std::string::npos) << help;
  EXPECT_NE(help.find("--config"), std::string::npos) << help;
  EXPECT_NE(help.find("--print-config"), std::string::npos) << help;
}

TEST_F(ConfigSourcesTest, PrintConfigShowsTheMergedSettings) {
  const std::string file = WriteConfig("listen = \"0.0.0.0:1\"\nlog-level = \"warn\"\n");
  ::setenv("PARADNN_LOG_LEVEL", "error", 1);
  Parsed p;
  testing::internal::CaptureStdout();
  const std::string error = Parse({"--config", file, "--insecure", "--print-config"}, &p);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(error.find("Success"), std::string::npos) << error;
  EXPECT_NE(out.find("listen=\"0.0.0.0:1\""), std::string::npos) << out;
  EXPECT_NE(out.find("log-level=\"error\""), std::string::npos) << out;
  EXPECT_NE(out.find("insecure=true"), std::string::npos) << out;
}

}  // namespace
}  // namespace paradnn::common
