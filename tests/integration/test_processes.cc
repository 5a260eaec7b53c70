#include "tests/integration/test_processes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace paradnn::testing {
namespace {

std::vector<char*> ArgvPointers(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& arg : argv) out.push_back(const_cast<char*>(arg.c_str()));
  out.push_back(nullptr);
  return out;
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
  // Everything the child needs is made before fork: the test process may
  // have other threads (gRPC's), and a child that allocates could block on
  // a lock one of them held at the fork.
  std::vector<char*> args = ArgvPointers(argv);
  const char* log = log_path.c_str();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
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
  // As in ChildProcess::Start, no allocation after fork: the argument and
  // environment arrays (extra_env overriding inherited variables) are made
  // here.
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
  std::vector<char*> envp = ArgvPointers(env);
  std::vector<char*> args = ArgvPointers(argv);
  const char* out_file = out_path.c_str();
  const char* err_file = err_path.c_str();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int out = ::open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
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

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
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
