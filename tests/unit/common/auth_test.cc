#include "common/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/support/temp_file.h"

namespace paradnn::common {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class AuthFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    unsetenv(kTokenEnv);
  }
  void TearDown() override { unsetenv(kTokenEnv); }

  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string path = dir_.File(name);
    std::ofstream(path) << text;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }

  ::paradnn::testing::TempFolder dir_{"auth-test"};
};

TEST_F(AuthFilesTest, TokenFileSkipsBlankLinesAndCommentsAndTrims) {
  absl::StatusOr<std::vector<std::string>> tokens =
      ReadTokenFile(Write("t", "# workers\n\n  alpha \t\r\n#beta\nGamma-1\n"), "--f");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_THAT(*tokens, ElementsAre("alpha", "Gamma-1"));
}

TEST_F(AuthFilesTest, TokenFileRefusals) {
  struct Case {
    std::string path;
    std::string message;
  };
  const Case cases[] = {
      {Write("empty", ""), "holds no token"},
      {Write("comments", "# nothing\n   \n"), "holds no token"},
      {Write("open", "alpha\n", 0644), "readable by every user"},
      {Write("spaced", "alpha\nhunter2 two\n"), "line 2"},
      {dir_.File("missing"), "cannot read"},
      {dir_.path(), "not a regular file"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::string>> tokens = ReadTokenFile(c.path, "--worker-token-file");
    ASSERT_FALSE(tokens.ok()) << c.path;
    EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(tokens.status().message()), HasSubstr("--worker-token-file"));
    EXPECT_THAT(std::string(tokens.status().message()), HasSubstr(c.message));
    // A malformed line is not echoed: it may be a secret.
    EXPECT_THAT(std::string(tokens.status().message()), Not(HasSubstr("hunter2")));
  }
}

TEST_F(AuthFilesTest, WorkerTokenFileNamesTheIdsEachTokenMayUse) {
  absl::StatusOr<std::vector<WorkerToken>> tokens = ReadWorkerTokenFile(
      Write("w", "# per host\nalpha host-a-*  host-a2-cpu\n\nbeta\n"), "--worker-token-file");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].token, "alpha");
  EXPECT_THAT((*tokens)[0].worker_ids, ElementsAre("host-a-*", "host-a2-cpu"));
  EXPECT_EQ((*tokens)[1].token, "beta");
  EXPECT_TRUE((*tokens)[1].worker_ids.empty());
  absl::StatusOr<std::vector<WorkerToken>> bad =
      ReadWorkerTokenFile(Write("bad", "alpha host-\x01a\n"), "--worker-token-file");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("line 1"));
  EXPECT_THAT(std::string(bad.status().message()), Not(HasSubstr("alpha")));
}

TEST(TrustDomainOfTest, ThePatternsSortedAndJoinedAndEmptyForAnyId) {
  EXPECT_EQ(TrustDomainOf({}), "");
  EXPECT_EQ(TrustDomainOf({"evil-*"}), "evil-*");
  EXPECT_EQ(TrustDomainOf({"host-b-*", "host-a-*", "host-b-*"}), "host-a-*,host-b-*");
}

TEST(WorkerIdAllowedTest, StarMatchesAnyRun) {
  EXPECT_TRUE(WorkerIdAllowed({}, "anything"));
  EXPECT_TRUE(WorkerIdAllowed({"host-a-*"}, "host-a-cpu"));
  EXPECT_TRUE(WorkerIdAllowed({"host-a-*"}, "host-a-"));
  EXPECT_FALSE(WorkerIdAllowed({"host-a-*"}, "host-b-cpu"));
  EXPECT_TRUE(WorkerIdAllowed({"x", "*-gpu-*"}, "h1-gpu-0"));
  EXPECT_FALSE(WorkerIdAllowed({"host-a"}, "host-a-cpu"));
  EXPECT_TRUE(WorkerIdAllowed({"a*b*c"}, "aXXbYYc"));
  EXPECT_FALSE(WorkerIdAllowed({"a*b*c"}, "aXXbYY"));
}

TEST(ConstantTimeEqualsTest, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("abd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  // A NUL byte where the expected string ends is still a mismatch.
  EXPECT_FALSE(ConstantTimeEquals(std::string("abc\0", 4), "abc"));
}

TEST_F(AuthFilesTest, ClientSecurityFromFileOrEnvironment) {
  absl::StatusOr<ClientSecurity> none = LoadClientSecurity({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->token.empty());
  EXPECT_FALSE(none->tls);

  setenv(kTokenEnv, " from-env \n", 1);
  absl::StatusOr<ClientSecurity> env = LoadClientSecurity({});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->token, "from-env");

  // The file wins over the environment.
  ClientSecurityFlags flags;
  flags.token_file = Write("mine", "# me\nfrom-file\n");
  absl::StatusOr<ClientSecurity> file = LoadClientSecurity(flags);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->token, "from-file");

  setenv(kTokenEnv, "two words", 1);
  EXPECT_EQ(LoadClientSecurity({}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AuthFilesTest, ClientSecurityRefusals) {
  ClientSecurityFlags two;
  two.token_file = Write("two", "a\nb\n");
  EXPECT_THAT(std::string(LoadClientSecurity(two).status().message()), HasSubstr("exactly one"));

  ClientSecurityFlags cert_only;
  cert_only.tls_ca = Write("ca", "pem");
  cert_only.tls_cert = Write("cert", "pem");
  EXPECT_THAT(std::string(LoadClientSecurity(cert_only).status().message()),
              HasSubstr("--tls-cert and --tls-key go together"));

  ClientSecurityFlags no_ca;
  no_ca.tls_cert = Write("cert", "pem");
  no_ca.tls_key = Write("key", "pem");
  EXPECT_THAT(std::string(LoadClientSecurity(no_ca).status().message()), HasSubstr("--tls-ca"));

  ClientSecurityFlags open_key = no_ca;
  open_key.tls_ca = Write("ca", "pem");
  open_key.tls_key = Write("open-key", "pem", 0644);
  EXPECT_THAT(std::string(LoadClientSecurity(open_key).status().message()), HasSubstr("--tls-key"));

  ClientSecurityFlags ok = no_ca;
  ok.tls_ca = Write("ca", "ca-pem");
  absl::StatusOr<ClientSecurity> loaded = LoadClientSecurity(ok);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->tls);
  EXPECT_EQ(loaded->tls_ca_pem, "ca-pem");
}

TEST_F(AuthFilesTest, ServerCredentialRefusals) {
  EXPECT_TRUE(LoadServerCredentials({}).ok());
  ServerTlsFlags ca_only;
  ca_only.client_ca = Write("ca", "pem");
  EXPECT_THAT(std::string(LoadServerCredentials(ca_only).status().message()),
              HasSubstr("--tls-client-ca needs"));
  ServerTlsFlags cert_only;
  cert_only.cert = Write("cert", "pem");
  EXPECT_THAT(std::string(LoadServerCredentials(cert_only).status().message()),
              HasSubstr("go together"));
  ServerTlsFlags open_key;
  open_key.cert = Write("cert", "pem");
  open_key.key = Write("key", "pem", 0640 | 0004);
  EXPECT_THAT(std::string(LoadServerCredentials(open_key).status().message()),
              HasSubstr("readable by every user"));
}

}  // namespace
}  // namespace paradnn::common
