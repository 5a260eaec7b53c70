// Auth tests against a real coordinator: every RPC of both services without
// a token, with a wrong token, with the other role's token and with the
// right one; a worker and the CLI with their tokens running a sweep, in
// plaintext and over TLS (certificates made with the openssl CLI); client
// certificates; and the start-up checks (beyond loopback only with tokens,
// TLS or --insecure; bad token files refused).
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "paradnn/v1/coordinator.grpc.pb.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"
#include "tests/support/health_check.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

constexpr const char* kWorkerToken = "worker-token-3f9a1c";
constexpr const char* kClientToken = "client-token-7b2e4d";

// Writes `text` to `path` with mode 0600 (token and key files must not be
// readable by every user).
std::string WriteSecret(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
  return path;
}

struct TokenFiles {
  std::string worker;      // the coordinator's --worker-token-file
  std::string client;      // the coordinator's --client-token-file
  std::string worker_own;  // a worker's --token-file
  std::string client_own;  // the CLI's --token-file
};

TokenFiles WriteTokenFiles(const TempDir& dir) {
  TokenFiles files;
  files.worker =
      WriteSecret(dir.File("worker-tokens"),
                  std::string("# workers\n\nanother-worker-token\n  ") + kWorkerToken + "  \n");
  files.client = WriteSecret(dir.File("client-tokens"), std::string(kClientToken) + "\n");
  files.worker_own = WriteSecret(dir.File("worker.token"), std::string(kWorkerToken) + "\n");
  files.client_own = WriteSecret(dir.File("client.token"), std::string(kClientToken) + "\n");
  return files;
}

std::vector<std::string> CoordinatorTokenFlags(const TokenFiles& files) {
  return {"--worker-token-file", files.worker, "--client-token-file", files.client};
}

// A sweep of `jobs` FC configurations (distinct node counts).
std::string WriteSweep(const TempDir& dir, int jobs) {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(8 + i);
  const std::string path = dir.File("sweep.yaml");
  std::ofstream(path) << "name: auth\nfamily: fc\nparams:\n  layer: 1\n  node: {values: [" << values
                      << "]}\n  input: 8\n  output: 4\n  batch: 4\n";
  return path;
}

void SetDeadline(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + seconds(20));
}

using Call = std::function<grpc::Status(grpc::ClientContext*)>;

// A call of the unary `method` of `stub` with `request`; the response is
// dropped.
template <typename Stub, typename Request, typename Response>
Call Unary(std::shared_ptr<Stub> stub,
           grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
           Request request = Request()) {
  return [stub, method, request](grpc::ClientContext* context) {
    Response response;
    return ((*stub).*method)(context, request, &response);
  };
}

// A call of the server-streaming `method` of `stub` with `request`, read to
// its end.
template <typename Stub, typename Request, typename Response>
Call ReadToEnd(std::shared_ptr<Stub> stub,
               std::unique_ptr<grpc::ClientReader<Response>> (Stub::*method)(grpc::ClientContext*,
                                                                             const Request&),
               Request request) {
  return [stub, method, request](grpc::ClientContext* context) {
    std::unique_ptr<grpc::ClientReader<Response>> reader = ((*stub).*method)(context, request);
    Response response;
    while (reader->Read(&response)) {
    }
    return reader->Finish();
  };
}

// One call of every RPC, keyed by its full method name; each sends a
// request the service refuses or answers quickly once it is let through.
std::map<std::string, Call> EveryRpc(const std::shared_ptr<grpc::Channel>& channel) {
  using Stub = v1::Coordinator::Stub;
  auto coordinator = std::shared_ptr<Stub>(v1::Coordinator::NewStub(channel));
  auto gateway = std::shared_ptr<v1::WorkerGateway::Stub>(v1::WorkerGateway::NewStub(channel));
  const std::string c = "/paradnn.v1.Coordinator/";
  v1::CancelSweepRequest cancel;
  cancel.set_sweep_id(999);
  v1::WatchSweepRequest watch;
  watch.set_sweep_id(999);
  v1::QueryResultsRequest query;
  query.set_sweep_id(999);
  std::map<std::string, Call> calls;
  calls[c + "SubmitSweep"] = Unary(coordinator, &Stub::SubmitSweep);
  calls[c + "GetSweep"] = Unary(coordinator, &Stub::GetSweep);
  calls[c + "ListSweeps"] = Unary(coordinator, &Stub::ListSweeps);
  calls[c + "CancelSweep"] = Unary(coordinator, &Stub::CancelSweep, cancel);
  calls[c + "WatchSweep"] = ReadToEnd(coordinator, &Stub::WatchSweep, watch);
  calls[c + "QueryResults"] = ReadToEnd(coordinator, &Stub::QueryResults, query);
  calls[c + "ListWorkers"] = Unary(coordinator, &Stub::ListWorkers);
  calls[c + "Analyze"] = Unary(coordinator, &Stub::Analyze);
  calls[c + "FleetGoodput"] = Unary(coordinator, &Stub::FleetGoodput);
  calls[c + "Predict"] = Unary(coordinator, &Stub::Predict);
  calls[c + "FleetReport"] = Unary(coordinator, &Stub::FleetReport);
  calls[c + "IngestFleetEvents"] = [coordinator](grpc::ClientContext* context) {
    v1::IngestFleetEventsResponse response;
    auto writer = coordinator->IngestFleetEvents(context, &response);
    writer->WritesDone();  // no lines: a call let through stores nothing
    return writer->Finish();
  };
  calls["/paradnn.v1.WorkerGateway/Connect"] = [gateway](grpc::ClientContext* context) {
    auto stream = gateway->Connect(context);
    // Not a hello: a stream let through is ended by the gateway at once.
    stream->Write(v1::WorkerMessage());
    stream->WritesDone();
    v1::CoordinatorMessage message;
    while (stream->Read(&message)) {
    }
    return stream->Finish();
  };
  return calls;
}

// The full names of every method the two services declare.
std::set<std::string> DeclaredMethods() {
  std::set<std::string> names;
  for (const char* service :
       {v1::Coordinator::service_full_name(), v1::WorkerGateway::service_full_name()}) {
    const google::protobuf::ServiceDescriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    EXPECT_NE(descriptor, nullptr) << service;
    if (descriptor == nullptr) continue;
    for (int i = 0; i < descriptor->method_count(); ++i) {
      names.insert("/" + std::string(service) + "/" + descriptor->method(i)->name());
    }
  }
  return names;
}

bool IsAuthError(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED;
}

std::string Describe(const grpc::Status& status) {
  return std::to_string(status.error_code()) + " " + status.error_message();
}

bool OpensslAvailable() {
  return RunCommand({"/usr/bin/env", "openssl", "version"}, seconds(20)).exit_code == 0;
}

// A self-signed certificate for 127.0.0.1 and its key (0600): the server's
// certificate and, given to clients as --tls-ca, its own CA.
void MakeCertificate(const TempDir& dir, const std::string& name, std::string* cert,
                     std::string* key) {
  *cert = dir.File(name + ".crt");
  *key = dir.File(name + ".key");
  CommandResult made =
      RunCommand({"/usr/bin/env", "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                  "-keyout", *key, "-out", *cert, "-days", "2", "-subj", "/CN=" + name, "-addext",
                  "subjectAltName=IP:127.0.0.1,DNS:localhost"},
                 seconds(60));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ASSERT_EQ(::chmod(key->c_str(), 0600), 0);
}

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("FAKE_RUNNER_DELAY_MS", "20", 1); }
  void TearDown() override { unsetenv("FAKE_RUNNER_DELAY_MS"); }
  std::vector<std::string> FakeRunner() { return {"--runner", PARADNN_FAKE_RUNNER}; }
};

TEST_F(AuthTest, EveryRpcNeedsTheTokenOfItsRole) {
  TempDir dir;
  const TokenFiles files = WriteTokenFiles(dir);
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(CoordinatorTokenFlags(files)));
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials());
  std::map<std::string, Call> calls = EveryRpc(channel);

  // The table covers every method the services declare, so a new RPC
  // without a check fails here.
  std::set<std::string> covered;
  for (const auto& [name, call] : calls) covered.insert(name);
  ASSERT_EQ(covered, DeclaredMethods());

  for (const auto& [name, call] : calls) {
    const bool worker_method = name.find("/paradnn.v1.WorkerGateway/") == 0;
    const std::string right = worker_method ? kWorkerToken : kClientToken;
    const std::string other = worker_method ? kClientToken : kWorkerToken;
    struct Case {
      std::string what;
      std::optional<std::string> authorization;  // nullopt: no metadata at all
      std::optional<grpc::StatusCode> expected;  // nullopt: anything but an auth error
    };
    const std::vector<Case> cases = {
        {"no token", std::nullopt, grpc::StatusCode::UNAUTHENTICATED},
        {"a wrong token", "Bearer not-a-token", grpc::StatusCode::UNAUTHENTICATED},
        {"a right token's prefix", "Bearer " + right.substr(0, right.size() - 1),
         grpc::StatusCode::UNAUTHENTICATED},
        {"the token without 'Bearer'", right, grpc::StatusCode::UNAUTHENTICATED},
        {"the other role's token", "Bearer " + other, grpc::StatusCode::PERMISSION_DENIED},
        {"the right token", "Bearer " + right, std::nullopt},
    };
    for (const Case& c : cases) {
      grpc::ClientContext context;
      SetDeadline(&context);
      if (c.authorization) context.AddMetadata("authorization", *c.authorization);
      const grpc::Status status = call(&context);
      if (c.expected) {
        EXPECT_EQ(status.error_code(), *c.expected)
            << name << " with " << c.what << ": " << Describe(status);
      } else {
        // Let through: the service itself answered (the requests are ones
        // it refuses or answers at once, never by timing out).
        EXPECT_FALSE(IsAuthError(status.error_code()))
            << name << " with " << c.what << ": " << Describe(status);
        EXPECT_NE(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << name;
        EXPECT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE) << name;
      }
    }
  }

  // Health checking stays open.
  int serving = -1;
  grpc::Status health = HealthCheck(channel, &serving);
  EXPECT_TRUE(health.ok()) << Describe(health);
  EXPECT_EQ(serving, 1) << "SERVING";

  // No token reaches the log.
  const std::string logs = cluster.Logs();
  EXPECT_EQ(logs.find(kWorkerToken), std::string::npos);
  EXPECT_EQ(logs.find(kClientToken), std::string::npos);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST_F(AuthTest, WorkerAndCliWithTheirTokensRunASweep) {
  constexpr int kJobs = 4;
  TempDir dir;
  const TokenFiles files = WriteTokenFiles(dir);
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(CoordinatorTokenFlags(files)));

  // A worker holding a client token is turned away and says why.
  ChildProcess wrong_worker;
  wrong_worker.Start(
      {BinDir() + "/paradnn-worker", "--coordinator", cluster.address(), "--worker-id", "intruder",
       "--calibrate", "never", "--runner", PARADNN_FAKE_RUNNER, "--token-file", files.client_own,
       "--max-backoff-ms", "500"},
      dir.File("intruder.log"));
  EXPECT_TRUE(WaitFor(
      [&] {
        return ReadFile(wrong_worker.log_path()).find("PERMISSION_DENIED") != std::string::npos;
      },
      seconds(60)))
      << ReadFile(wrong_worker.log_path());

  std::vector<std::string> worker_flags = FakeRunner();
  worker_flags.insert(worker_flags.end(), {"--token-file", files.worker_own});
  cluster.StartWorker("w0", worker_flags);

  // The CLI without a token is refused (exit 2) and says so.
  CommandResult refused = cluster.Cli({"status"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("requires a token"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--token-file"), std::string::npos) << refused.err;

  // The worker's token is no client token.
  CommandResult wrong_role = cluster.Cli({"--token-file", files.worker_own, "status"});
  EXPECT_EQ(wrong_role.exit_code, 2) << wrong_role.err;
  EXPECT_NE(wrong_role.err.find("a worker token may not call the Coordinator service"),
            std::string::npos)
      << wrong_role.err;

  CommandResult submit =
      cluster.Cli({"--token-file", files.client_own, "submit", WriteSweep(dir, kJobs), "-q"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err << cluster.Logs();
  const std::string sweep_id = submit.out.substr(0, submit.out.find('\n'));
  // The token from the environment instead of a file.
  CommandResult watch =
      RunCommand({BinDir() + "/paradnn", "--coordinator", cluster.address(), "watch", sweep_id},
                 seconds(120), {std::string("PARADNN_TOKEN=") + kClientToken});
  EXPECT_EQ(watch.exit_code, 0) << watch.err << cluster.Logs();
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results"), kJobs);
  // Every result came from the worker with the right token.
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE worker_id = 'w0'"),
            kJobs);

  wrong_worker.Signal(SIGTERM);
  std::optional<int> status = wrong_worker.Wait(seconds(30));
  ASSERT_TRUE(status.has_value());
  const std::string logs = cluster.Logs() + ReadFile(wrong_worker.log_path());
  EXPECT_EQ(logs.find(kWorkerToken), std::string::npos);
  EXPECT_EQ(logs.find(kClientToken), std::string::npos);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST_F(AuthTest, TlsWithTokensRunsASweep) {
  ASSERT_TRUE(OpensslAvailable()) << "the openssl CLI makes the test certificates "
                                     "(scripts/install-deps.sh installs it)";
  constexpr int kJobs = 3;
  TempDir dir;
  const TokenFiles files = WriteTokenFiles(dir);
  std::string cert;
  std::string key;
  ASSERT_NO_FATAL_FAILURE(MakeCertificate(dir, "coordinator", &cert, &key));
  Cluster cluster(dir);
  std::vector<std::string> flags = CoordinatorTokenFlags(files);
  flags.insert(flags.end(), {"--tls-cert", cert, "--tls-key", key});
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(flags));

  std::vector<std::string> worker_flags = FakeRunner();
  worker_flags.insert(worker_flags.end(), {"--token-file", files.worker_own, "--tls-ca", cert});
  cluster.StartWorker("tls-worker", worker_flags);

  // Plaintext to a TLS port gets nowhere.
  CommandResult plaintext = cluster.Cli({"--token-file", files.client_own, "status"}, seconds(60));
  EXPECT_NE(plaintext.exit_code, 0) << plaintext.out;
  // TLS without a token is still refused.
  CommandResult no_token = cluster.Cli({"--tls-ca", cert, "status"});
  EXPECT_EQ(no_token.exit_code, 2) << no_token.err;
  EXPECT_NE(no_token.err.find("requires a token"), std::string::npos) << no_token.err;

  const std::vector<std::string> tls = {"--tls-ca", cert, "--token-file", files.client_own};
  std::vector<std::string> submit_args = tls;
  submit_args.insert(submit_args.end(), {"submit", WriteSweep(dir, kJobs), "-q"});
  CommandResult submit = cluster.Cli(submit_args);
  ASSERT_EQ(submit.exit_code, 0) << submit.err << cluster.Logs();
  std::vector<std::string> watch_args = tls;
  watch_args.insert(watch_args.end(), {"watch", submit.out.substr(0, submit.out.find('\n'))});
  CommandResult watch = cluster.Cli(watch_args, seconds(120));
  EXPECT_EQ(watch.exit_code, 0) << watch.err << cluster.Logs();
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results"), kJobs);
  std::vector<std::string> workers_args = tls;
  workers_args.push_back("workers");
  CommandResult workers = cluster.Cli(workers_args);
  EXPECT_EQ(workers.exit_code, 0) << workers.err;
  EXPECT_NE(workers.out.find("tls-worker"), std::string::npos) << workers.out;
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST_F(AuthTest, ClientCertificatesAreRequiredWithTlsClientCa) {
  ASSERT_TRUE(OpensslAvailable());
  TempDir dir;
  std::string server_cert, server_key, client_cert, client_key, stranger_cert, stranger_key;
  ASSERT_NO_FATAL_FAILURE(MakeCertificate(dir, "coordinator", &server_cert, &server_key));
  ASSERT_NO_FATAL_FAILURE(MakeCertificate(dir, "client", &client_cert, &client_key));
  ASSERT_NO_FATAL_FAILURE(MakeCertificate(dir, "stranger", &stranger_cert, &stranger_key));
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(
      {"--tls-cert", server_cert, "--tls-key", server_key, "--tls-client-ca", client_cert}));

  CommandResult without = cluster.Cli({"--tls-ca", server_cert, "status"}, seconds(60));
  EXPECT_NE(without.exit_code, 0) << without.out;
  CommandResult stranger = cluster.Cli(
      {"--tls-ca", server_cert, "--tls-cert", stranger_cert, "--tls-key", stranger_key, "status"},
      seconds(60));
  EXPECT_NE(stranger.exit_code, 0) << stranger.out;
  CommandResult with = cluster.Cli(
      {"--tls-ca", server_cert, "--tls-cert", client_cert, "--tls-key", client_key, "status"});
  EXPECT_EQ(with.exit_code, 0) << with.err << cluster.Logs();
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

// Runs the coordinator with `flags` to completion (it is expected to refuse
// to start).
CommandResult RunCoordinator(const TempDir& dir, std::vector<std::string> flags) {
  std::vector<std::string> argv = {BinDir() + "/paradnn-coordinator", "--db", dir.File("c.db"),
                                   "--address-file", dir.File("refused-addr")};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return RunCommand(argv, seconds(30));
}

TEST_F(AuthTest, BeyondLoopbackNeedsTokensTlsOrInsecure) {
  TempDir dir;
  CommandResult refused = RunCoordinator(dir, {"--listen", "0.0.0.0:0"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("refusing to listen on 0.0.0.0:0"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--insecure"), std::string::npos) << refused.err;
  EXPECT_TRUE(ReadFile(dir.File("refused-addr")).empty()) << "it never listened";

  // With --insecure it starts, and warns.
  {
    ChildProcess coordinator;
    coordinator.Start(
        {BinDir() + "/paradnn-coordinator", "--listen", "0.0.0.0:0", "--insecure", "--db",
         dir.File("insecure.db"), "--address-file", dir.File("insecure-addr")},
        dir.File("insecure.log"));
    ASSERT_TRUE(WaitFor([&] { return !ReadFile(dir.File("insecure-addr")).empty(); }, seconds(20)))
        << ReadFile(coordinator.log_path());
    const std::string log = ReadFile(coordinator.log_path());
    EXPECT_NE(log.find("[warning] --insecure"), std::string::npos) << log;
    coordinator.Signal(SIGTERM);
    std::optional<int> status = coordinator.Wait(seconds(20));
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << ReadFile(coordinator.log_path());
  }

  // With tokens it starts without --insecure.
  {
    const TokenFiles files = WriteTokenFiles(dir);
    std::vector<std::string> argv = {BinDir() + "/paradnn-coordinator",
                                     "--listen",
                                     "0.0.0.0:0",
                                     "--db",
                                     dir.File("tokens.db"),
                                     "--address-file",
                                     dir.File("tokens-addr")};
    for (const std::string& flag : CoordinatorTokenFlags(files)) argv.push_back(flag);
    ChildProcess coordinator;
    coordinator.Start(argv, dir.File("tokens.log"));
    ASSERT_TRUE(WaitFor([&] { return !ReadFile(dir.File("tokens-addr")).empty(); }, seconds(20)))
        << ReadFile(coordinator.log_path());
    coordinator.Signal(SIGTERM);
    std::optional<int> status = coordinator.Wait(seconds(20));
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << ReadFile(coordinator.log_path());
  }
}

TEST_F(AuthTest, BadTokenFilesAreRefusedAtStart) {
  TempDir dir;
  const TokenFiles files = WriteTokenFiles(dir);
  const std::string empty = WriteSecret(dir.File("empty"), "# only a comment\n\n   \n");
  const std::string world_readable = dir.File("world-readable");
  std::ofstream(world_readable) << kWorkerToken << "\n";
  ASSERT_EQ(::chmod(world_readable.c_str(), 0644), 0);
  const std::string spaced = WriteSecret(dir.File("spaced"), "two words\n");

  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--worker-token-file", empty, "--client-token-file", files.client}, "holds no token"},
      {{"--worker-token-file", files.worker, "--client-token-file", world_readable},
       "readable by every user"},
      // Worker tokens may name ids after a space ("TOKEN host-a-*"); a client
      // token file holds bare tokens.
      {{"--worker-token-file", files.worker, "--client-token-file", spaced}, "is not a token"},
      {{"--worker-token-file", files.worker}, "go together"},
      {{"--client-token-file", files.client}, "go together"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> flags = {"--listen", "127.0.0.1:0"};
    flags.insert(flags.end(), c.flags.begin(), c.flags.end());
    CommandResult result = RunCoordinator(dir, flags);
    EXPECT_EQ(result.exit_code, 2) << c.message << ": " << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << result.err;
    // The refusal never echoes a token.
    EXPECT_EQ(result.err.find(kWorkerToken), std::string::npos) << result.err;
  }

  // A client's token file holds exactly one token.
  CommandResult two =
      RunCommand({BinDir() + "/paradnn", "--token-file", files.worker, "status"}, seconds(30));
  EXPECT_EQ(two.exit_code, 2) << two.err;
  EXPECT_NE(two.err.find("exactly one"), std::string::npos) << two.err;
}

}  // namespace
}  // namespace paradnn::testing
