#include "tests/integration/test_processes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/subprocess.h"

namespace paradnn::testing {
namespace {

// Starts `argv` (stdin /dev/null, stdout into out_path and stderr into
// err_path, opened with `flags`; the same file for both when the paths are
// equal) and returns its pid. Test processes outlive the thread that starts
// them: no parent death signal.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, int flags,
            const std::string& err_path, const std::vector<std::string>* environment) {
  absl::StatusOr<common::ScopedFd> null = common::OpenForChild("/dev/null", O_RDONLY);
  absl::StatusOr<common::ScopedFd> out = common::OpenForChild(out_path, flags);
  absl::StatusOr<common::ScopedFd> err = err_path == out_path
                                             ? absl::StatusOr<common::ScopedFd>(common::ScopedFd())
                                             : common::OpenForChild(err_path, flags);
  if (!null.ok() || !out.ok() || !err.ok()) throw std::runtime_error("cannot open " + out_path);
  common::SpawnOptions options;
  options.stdin_fd = null->get();
  options.stdout_fd = out->get();
  options.stderr_fd = err->valid() ? err->get() : out->get();
  options.environment = environment;
  options.parent_death_signal = 0;
  absl::StatusOr<common::SpawnedChild> child = common::SpawnChild(argv, options);
  if (!child.ok()) throw std::runtime_error(std::string(child.status().message()));
  return child->pid;
}

}  // namespace

std::string BinDir() {
  const char* dir = std::getenv("PARADNN_BIN_DIR");
  if (dir == nullptr) throw std::runtime_error("PARADNN_BIN_DIR is not set (run through ctest)");
  return dir;
}

std::string SourceDir() {
  const char* dir = std::getenv("PARADNN_SOURCE_DIR");
  if (dir == nullptr) throw std::runtime_error("PARADNN_SOURCE_DIR is not set (run through ctest)");
  return dir;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "paradnn-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (std::getenv("PARADNN_KEEP_TEST_DIRS") == nullptr) std::filesystem::remove_all(path_, ignored);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
}

void ChildProcess::Start(const std::vector<std::string>& argv, const std::string& log_path) {
  log_path_ = log_path;
  reaped_ = false;
  // Appended: a restarted process keeps its earlier log.
  pid_ = Spawn(argv, log_path, O_WRONLY | O_CREAT | O_APPEND, log_path, nullptr);
}

void ChildProcess::Signal(int signal_number) {
  if (pid_ > 0 && !reaped_) ::kill(pid_, signal_number);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return std::nullopt;
  if (reaped_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    pid_t r = ::waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool ChildProcess::running() { return pid_ > 0 && !Wait(std::chrono::milliseconds(0)).has_value(); }

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::vector<std::string>& extra_env) {
  TempDir dir;
  const std::string out_path = dir.File("out");
  const std::string err_path = dir.File("err");
  // The environment: ours, extra_env overriding inherited variables.
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string kv = *entry;
    const std::string key = kv.substr(0, kv.find('='));
    bool overridden = false;
    for (const std::string& extra : extra_env) {
      overridden |= extra.substr(0, extra.find('=')) == key;
    }
    if (!overridden) env.push_back(kv);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  const pid_t pid = Spawn(argv, out_path, O_WRONLY | O_CREAT | O_TRUNC, err_path, &env);
  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

StartedCoordinator StartCoordinatorWithMetrics(ChildProcess* coordinator, const TempDir& dir,
                                               const std::string& db,
                                               const std::vector<std::string>& prefix) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {BinDir() + "/paradnn-coordinator", "--listen", "127.0.0.1:0", "--db",
                           dir.File(db), "--address-file", dir.File("addr"), "--metrics-listen",
                           "127.0.0.1:0", "--metrics-address-file", dir.File("maddr")});
  coordinator->Start(argv, dir.File("coordinator.log"));
  StartedCoordinator started;
  if (!WaitFor(
          [&] {
            return std::filesystem::exists(dir.File("maddr")) &&
                   std::filesystem::exists(dir.File("addr"));
          },
          std::chrono::seconds(30))) {
    return started;
  }
  started.address = ReadFile(dir.File("addr"));
  started.address = started.address.substr(0, started.address.find('\n'));
  const std::string metrics = ReadFile(dir.File("maddr"));
  started.metrics_port = std::stoi(metrics.substr(metrics.rfind(':') + 1));
  return started;
}

std::optional<HttpReply> HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return std::nullopt;
  }
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return std::nullopt;
  }
  std::string raw;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return std::nullopt;
  HttpReply reply;
  reply.status = std::stoi(raw.substr(9, 3));
  reply.body = raw.substr(end + 4);
  return reply;
}

int HttpStatus(int port, const std::string& path, std::string* body) {
  std::optional<HttpReply> reply = HttpGet(port, path);
  if (!reply) return 0;
  if (body != nullptr) *body = reply->body;
  return reply->status;
}

}  // namespace paradnn::testing
