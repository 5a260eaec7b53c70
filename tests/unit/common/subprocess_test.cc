#include "common/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace paradnn::common {
namespace {

std::string ReadAll(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) != 0;) {
    if (n < 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

int Reap(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(SubprocessTest, PipesCarryStdinStdoutAndStderr) {
  absl::StatusOr<SpawnedChild> child =
      SpawnChild({"/bin/sh", "-c", "read x; echo \"got $x\"; echo oops >&2; exit 3"});
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_EQ(::write(child->stdin_fd.get(), "hi\n", 3), 3);
  child->stdin_fd.Reset();
  EXPECT_EQ(ReadAll(child->stdout_fd.get()), "got hi\n");
  EXPECT_EQ(ReadAll(child->stderr_fd.get()), "oops\n");
  const int status = Reap(child->pid);
  EXPECT_EQ(DescribeWaitStatus(status), "exited with status 3");
}

TEST(SubprocessTest, AProgramThatCannotRunIsNamedInTheError) {
  absl::StatusOr<SpawnedChild> child = SpawnChild({"/nonexistent/paradnn-nothing"});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(child.status().message().find("/nonexistent/paradnn-nothing"), std::string::npos);
  EXPECT_EQ(SpawnChild({}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SubprocessTest, GivenDescriptorsReplaceThePipes) {
  char path[] = "/tmp/paradnn_subprocess_test_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  absl::StatusOr<ScopedFd> null = OpenForChild("/dev/null", O_RDONLY);
  ASSERT_TRUE(null.ok()) << null.status();
  SpawnOptions options;
  options.stdin_fd = null->get();
  options.stdout_fd = fd;
  options.stderr_fd = fd;
  absl::StatusOr<SpawnedChild> child =
      SpawnChild({"/bin/sh", "-c", "cat; echo out; echo err >&2"}, options);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_FALSE(child->stdin_fd.valid());
  EXPECT_FALSE(child->stdout_fd.valid());
  EXPECT_FALSE(child->stderr_fd.valid());
  EXPECT_TRUE(WIFEXITED(Reap(child->pid)));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "out\nerr\n");
  ::close(fd);
  ::unlink(path);
  EXPECT_EQ(OpenForChild("/nonexistent/dir/log", O_WRONLY | O_CREAT).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(SubprocessTest, ProcessGroupEnvironmentAndMemoryLimitAreTheCallers) {
  const std::vector<std::string> environment = {"PARADNN_TEST_VALUE=42"};
  SpawnOptions options;
  options.environment = &environment;
  options.address_space_limit_bytes = int64_t{1} << 30;
  absl::StatusOr<SpawnedChild> child = SpawnChild(
      {"/bin/sh", "-c", "echo \"$PARADNN_TEST_VALUE ${HOME:-nohome} $(ulimit -v)\"; read x"},
      options);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(::getpgid(child->pid), child->pid);  // leads its own group
  child->stdin_fd.Reset();
  EXPECT_EQ(ReadAll(child->stdout_fd.get()), "42 nohome 1048576\n");
  Reap(child->pid);

  SpawnOptions same_group;
  same_group.own_process_group = false;
  same_group.parent_death_signal = 0;
  child = SpawnChild({"/bin/sh", "-c", "read x"}, same_group);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(::getpgid(child->pid), ::getpgrp());
  child->stdin_fd.Reset();
  Reap(child->pid);
}

}  // namespace
}  // namespace paradnn::common
