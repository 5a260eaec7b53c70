// A hostile worker against a real coordinator: peers written here against
// our protos (no paradnn-worker), a real SQLite file on loopback. A result,
// CANCELLED or hand-back for another worker's attempt is refused and the
// holder's own result stands; a result whose numbers are not numbers (NaN,
// infinite, negative) or that carries more than a result may is stored as
// ERROR naming the field, acked, and never retried.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "paradnn/v1/coordinator.grpc.pb.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"
#include "tests/support/peer_worker.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

v1::Measurement Honest(double examples_per_sec) {
  v1::Measurement m;
  m.set_outcome(v1::OK);
  m.set_device("cpu");
  m.set_examples_per_sec(examples_per_sec);
  m.mutable_stats()->set_steps(3);
  m.mutable_stats()->set_median_s(0.01);
  m.mutable_stats()->set_mean_s(0.01);
  for (int i = 0; i < 3; ++i) m.add_step_seconds(0.01);
  return m;
}

class HostileWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<Cluster>(dir_);
    ASSERT_NO_FATAL_FAILURE(cluster_->StartCoordinator());
  }
  void TearDown() override {
    if (cluster_) cluster_->Stop();
  }

  std::string Submit(int jobs) {
    const std::string file = dir_.File("sweep.yaml");
    std::ofstream(file) << "name: peers\nfamily: fc\ndevice: cpu\n"
                           "params: {layer: 1, node: {min: 8, max: "
                        << 8 * jobs << ", add: 8}, input: 4, output: 2, batch: 4}\n";
    CommandResult submit = cluster_->Cli({"submit", file, "-q"});
    EXPECT_EQ(submit.exit_code, 0) << submit.err;
    return submit.out.substr(0, submit.out.find_first_of("\n "));
  }

  int64_t Query(const std::string& sql) { return QueryInt(cluster_->db_path(), sql); }

  // Says `hello` on a stream of its own, then half-closes it: how the
  // coordinator ended the stream.
  grpc::Status HelloAlone(const v1::WorkerHello& hello) {
    auto channel = grpc::CreateChannel(cluster_->address(), grpc::InsecureChannelCredentials());
    auto gateway = v1::WorkerGateway::NewStub(channel);
    grpc::ClientContext context;
    auto stream = gateway->Connect(&context);
    v1::WorkerMessage message;
    *message.mutable_hello() = hello;
    if (!stream->Write(message)) return grpc::Status(grpc::StatusCode::UNKNOWN, "hello not sent");
    stream->WritesDone();
    v1::CoordinatorMessage ignored;
    while (stream->Read(&ignored)) {
    }
    return stream->Finish();
  }

  TempDir dir_;
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(HostileWorkerTest, OnlyTheHolderReportsItsAttempt) {
  Submit(1);
  PeerWorker holder(cluster_->address(), "holder");
  ASSERT_NO_FATAL_FAILURE(holder.Join());
  std::optional<v1::JobAssignment> job = holder.NextAssignment();
  ASSERT_TRUE(job.has_value());
  PeerWorker forger(cluster_->address(), "forger");
  ASSERT_NO_FATAL_FAILURE(forger.Join());

  // A result, a CANCELLED and a hand-back for the holder's attempt: each
  // refused (acked, so the forger stops), none changes the job.
  v1::Measurement cancelled;
  cancelled.set_outcome(v1::CANCELLED);
  v1::Measurement forged = Honest(123);
  for (const auto& [m, handed_back] :
       {std::pair{forged, false}, std::pair{cancelled, false}, std::pair{cancelled, true}}) {
    holder.Heartbeat(job->job_id(), job->attempt_id());  // its lease stays alive
    forger.Send(job->job_id(), job->attempt_id(), m, handed_back);
    std::optional<v1::ResultAck> ack = forger.NextAck();
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->attempt_id(), job->attempt_id());
    EXPECT_EQ(Query("SELECT count(*) FROM results"), 0);
    EXPECT_EQ(Query("SELECT state FROM jobs"), v1::JOB_LEASED);
    EXPECT_EQ(Query("SELECT count(*) FROM attempts WHERE finished_unix_ms IS NULL"), 1);
  }
  EXPECT_NE(cluster_->Logs().find("is held by worker 'holder', not 'forger'"), std::string::npos);

  // The holder's own result is stored, under its name.
  holder.Send(job->job_id(), job->attempt_id(), Honest(456));
  ASSERT_TRUE(holder.NextAck().has_value());
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE worker_id = 'holder' AND "
                  "examples_per_sec = 456"),
            1);
  EXPECT_EQ(Query("SELECT count(*) FROM results"), 1);
  EXPECT_EQ(Query("SELECT state FROM jobs"), v1::JOB_DONE);
}

TEST_F(HostileWorkerTest, ResultsThatAreNotNumbersAreStoredAsErrorsNamingTheField) {
  struct Case {
    const char* field;
    std::function<void(v1::Measurement*)> spoil;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Case> cases = {
      {"measurement.stats.median_s: nan",
       [nan](v1::Measurement* m) { m->mutable_stats()->set_median_s(nan); }},
      {"measurement.examples_per_sec: -123",
       [](v1::Measurement* m) { m->set_examples_per_sec(-123); }},
      {"measurement.model_flops_per_sec: inf",
       [](v1::Measurement* m) {
         m->set_model_flops_per_sec(std::numeric_limits<double>::infinity());
       }},
      {"measurement.step_seconds: 100001 entries; a result may have at most 100000",
       [](v1::Measurement* m) {
         m->clear_step_seconds();
         for (int i = 0; i < 100001; ++i) m->add_step_seconds(0.01);
       }},
      {"measurement.outcome: 42 is not an outcome",
       [](v1::Measurement* m) { m->set_outcome(static_cast<v1::Outcome>(42)); }},
  };
  const std::string sweep = Submit(static_cast<int>(cases.size()));
  PeerWorker peer(cluster_->address(), "spoiler");
  ASSERT_NO_FATAL_FAILURE(peer.Join());
  for (const Case& c : cases) {
    std::optional<v1::JobAssignment> job = peer.NextAssignment();
    ASSERT_TRUE(job.has_value()) << c.field;
    v1::Measurement m = Honest(100);
    c.spoil(&m);
    peer.Send(job->job_id(), job->attempt_id(), m);
    // Acked: the worker is not asked to send it again.
    std::optional<v1::ResultAck> ack = peer.NextAck();
    ASSERT_TRUE(ack.has_value()) << c.field;
    EXPECT_EQ(ack->job_id(), job->job_id());
    const std::string where = "job_id = " + std::to_string(job->job_id());
    EXPECT_EQ(Query("SELECT outcome FROM results WHERE " + where), v1::ERROR) << c.field;
    EXPECT_EQ(Query("SELECT count(*) FROM results WHERE " + where +
                    " AND error LIKE 'refused by the coordinator: " + c.field + "%'"),
              1)
        << c.field << "\n"
        << QueryText(cluster_->db_path(), "SELECT error FROM results WHERE " + where);
    EXPECT_EQ(Query("SELECT count(*) FROM samples s JOIN results r ON r.id = s.result_id WHERE r." +
                    where),
              0);
    peer.Heartbeat();
  }
  // Every job has its one result and the sweep is finished.
  EXPECT_EQ(Query("SELECT count(*) FROM results"), static_cast<int64_t>(cases.size()));
  EXPECT_EQ(Query("SELECT count(*) FROM jobs WHERE state = " + std::to_string(v1::JOB_DONE)),
            static_cast<int64_t>(cases.size()));
  CommandResult status = cluster_->Cli({"status", sweep});
  EXPECT_NE(status.out.find("state       done"), std::string::npos) << status.out << status.err;
}

// A hello carrying megabytes of "CPU flags" is refused, naming the field,
// and nothing of it is stored (issue 36: a 50 MB cpu_flags was kept whole).
TEST_F(HostileWorkerTest, AnOversizedPlatformIsRefusedAtHello) {
  v1::WorkerHello hello;
  hello.set_worker_id("bloated-1");
  hello.set_device_kind("cpu");
  hello.mutable_platform()->set_cpu_flags(std::string(3 << 20, 'f'));
  const grpc::Status status = HelloAlone(hello);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("hello.platform"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(Query("SELECT count(*) FROM workers WHERE id = 'bloated-1'"), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM platforms WHERE length(details) > 65536"), 0);
}

// A hello that claims a stored fingerprint (same facts) with a calibration
// 1,000x the stored one is refused, naming the roof: a claim the
// calibration it comes with contradicts. The stored row keeps its roofs.
TEST_F(HostileWorkerTest, AFingerprintClaimItsCalibrationContradictsIsRefused) {
  v1::Platform platform;
  platform.set_fingerprint("fleet-fp");
  platform.set_device_kind("cpu");
  platform.set_memory_bytes(int64_t{8} << 30);
  platform.set_calibrated_unix_ms(1000);
  v1::MatmulRoof* roof = platform.add_matmul_roofs();
  roof->set_dtype("float32");
  roof->set_flops_per_sec(2e11);
  PeerWorker honest(cluster_->address(), "honest-1");
  ASSERT_NO_FATAL_FAILURE(honest.Join(platform));

  v1::Platform claimed = platform;
  claimed.set_calibrated_unix_ms(2000);
  claimed.mutable_matmul_roofs(0)->set_flops_per_sec(2e14);
  PeerWorker claimer(cluster_->address(), "claimer-1");
  ASSERT_NO_FATAL_FAILURE(claimer.SayHello(claimed));
  const grpc::Status status = claimer.Ended();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(
      status.error_message().find("hello.platform.matmul_roofs[float32, matmul].flops_per_sec"),
      std::string::npos)
      << status.error_message();
  EXPECT_EQ(Query("SELECT count(*) FROM platforms"), 1);
  EXPECT_EQ(QueryText(cluster_->db_path(), "SELECT fingerprint FROM platforms"), "fleet-fp");
  // Within 4x of it (a loaded host's calibration): taken, and newer.
  claimed.mutable_matmul_roofs(0)->set_flops_per_sec(1.5e11);
  PeerWorker second(cluster_->address(), "honest-2");
  ASSERT_NO_FATAL_FAILURE(second.Join(claimed));
  EXPECT_EQ(Query("SELECT count(*) FROM workers WHERE id = 'claimer-1'"), 0);
}

TEST_F(HostileWorkerTest, NoPeerTextMovesTheTerminal) {
  // An id with control characters is refused at hello, naming the field.
  {
    v1::WorkerHello hello;
    hello.set_worker_id("evil\x1b]0;pwned\x07");
    hello.set_device_kind("cpu");
    const grpc::Status status = HelloAlone(hello);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("hello.worker_id"), std::string::npos);
  }
  // A host name and an error text with them are shown escaped.
  Submit(1);
  auto channel = grpc::CreateChannel(cluster_->address(), grpc::InsecureChannelCredentials());
  PeerWorker peer(cluster_->address(), "plain");
  ASSERT_NO_FATAL_FAILURE(peer.Join());
  std::optional<v1::JobAssignment> job = peer.NextAssignment();
  ASSERT_TRUE(job.has_value());
  v1::Measurement failed;
  failed.set_outcome(v1::ERROR);
  failed.set_error("boom\x1b[2J\x1b]0;owned\x07");
  peer.Send(job->job_id(), job->attempt_id(), failed);
  ASSERT_TRUE(peer.NextAck().has_value());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"workers"}, std::vector<std::string>{"results", "1"}}) {
    CommandResult shown = cluster_->Cli(args);
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_EQ(shown.out.find('\x1b'), std::string::npos) << args[0] << ": " << shown.out;
    EXPECT_EQ(shown.out.find('\x07'), std::string::npos) << args[0];
  }
  CommandResult results = cluster_->Cli({"results", "1"});
  EXPECT_NE(results.out.find("\\x1b[2J"), std::string::npos) << results.out;
  // JSON keeps the exact text (escaped as JSON does).
  CommandResult json = cluster_->Cli({"results", "1", "--format", "json"});
  EXPECT_NE(json.out.find("\\u001b[2J"), std::string::npos) << json.out;
}

// The platform stored under a fingerprint as its first reporter described it.
v1::Platform StoredPlatform(const std::string& db_path, const std::string& fingerprint) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT details FROM platforms WHERE fingerprint = ?", -1, &stmt, nullptr);
  sqlite3_bind_text(stmt, 1, fingerprint.c_str(), -1, SQLITE_TRANSIENT);
  v1::Platform platform;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    platform.ParseFromArray(sqlite3_column_blob(stmt, 0), sqlite3_column_bytes(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return platform;
}

v1::Platform Described(const std::string& device_name, double roof, int64_t calibrated_unix_ms) {
  v1::Platform p;
  p.set_fingerprint("shared-stack");
  p.set_device_kind("cpu");
  p.set_device_name(device_name);
  p.set_cores(2);
  v1::MatmulRoof* r = p.add_matmul_roofs();
  r->set_dtype("float32");
  r->set_flops_per_sec(roof);
  p.set_calibrated_unix_ms(calibrated_unix_ms);
  return p;
}

TEST_F(HostileWorkerTest, APlatformIsDescribedByItsFirstReporterOnly) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  PeerWorker first(cluster_->address(), "first");
  ASSERT_NO_FATAL_FAILURE(first.Join(Described("Real CPU", 100e9, now - 1000)));
  // Same facts, a newer calibration with absurd roofs, from another worker:
  // refused (AFingerprintClaimItsCalibrationContradictsIsRefused); the
  // first's roofs stay.
  PeerWorker same(cluster_->address(), "same-facts");
  ASSERT_NO_FATAL_FAILURE(same.SayHello(Described("Real CPU", 1e15, now)));
  EXPECT_EQ(same.Ended().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // Other facts under the same fingerprint: kept apart.
  PeerWorker other(cluster_->address(), "other-facts");
  ASSERT_NO_FATAL_FAILURE(other.Join(Described("Fake CPU", 1e15, now)));
  ASSERT_TRUE(WaitFor([&] { return Query("SELECT count(*) FROM platforms") == 2; }, seconds(10)));
  const v1::Platform stored = StoredPlatform(cluster_->db_path(), "shared-stack");
  EXPECT_EQ(stored.device_name(), "Real CPU");
  ASSERT_EQ(stored.matmul_roofs_size(), 1);
  EXPECT_EQ(stored.matmul_roofs(0).flops_per_sec(), 100e9);
  EXPECT_EQ(StoredPlatform(cluster_->db_path(), "shared-stack~other-facts").device_name(),
            "Fake CPU");
  EXPECT_NE(cluster_->Logs().find("other-facts reports other facts than its first reporter did "
                                  "(device_name: 'Real CPU' vs 'Fake CPU')"),
            std::string::npos);
  // A calibration time that cannot be true ends the stream, naming the field.
  PeerWorker liar(cluster_->address(), "liar");
  ASSERT_NO_FATAL_FAILURE(
      liar.SayHello(Described("Real CPU", 1e15, std::numeric_limits<int64_t>::max())));
  const grpc::Status status = liar.Ended();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("hello.platform.calibrated_unix_ms"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(StoredPlatform(cluster_->db_path(), "shared-stack").matmul_roofs(0).flops_per_sec(),
            100e9);
}

// A worker token limited to some ids (a line "TOKEN host-a-*" of the
// coordinator's --worker-token-file) cannot say hello as another.
TEST(WorkerTokenTest, ATokenSaysHelloOnlyAsTheIdsItNames) {
  TempDir dir;
  const std::string workers = dir.File("worker-tokens");
  const std::string clients = dir.File("client-tokens");
  std::ofstream(workers) << "# per host\ntok-host-a host-a-*\ntok-anyone\n";
  std::ofstream(clients) << "client-secret\n";
  std::filesystem::permissions(
      workers, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::permissions(
      clients, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(
      cluster.StartCoordinator({"--worker-token-file", workers, "--client-token-file", clients}));
  {
    PeerWorker stolen(cluster.address(), "host-b-cpu", "tok-host-a");
    ASSERT_NO_FATAL_FAILURE(stolen.SayHello());
    const grpc::Status status = stolen.Ended();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_NE(status.error_message().find("may not be used by worker id 'host-b-cpu'"),
              std::string::npos)
        << status.error_message();
  }
  PeerWorker own(cluster.address(), "host-a-cpu", "tok-host-a");
  ASSERT_NO_FATAL_FAILURE(own.Join());
  PeerWorker any(cluster.address(), "host-z-gpu", "tok-anyone");
  ASSERT_NO_FATAL_FAILURE(any.Join());
  // The workers table is written after the hello_ack.
  EXPECT_TRUE(
      WaitFor([&] { return QueryInt(cluster.db_path(), "SELECT count(*) FROM workers") == 2; },
              seconds(10)));
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM workers WHERE id = 'host-b-cpu'"), 0);
}

// Two real workers started with one id: the second is refused while the
// first is connected, gives up with a message that says what to do and
// exit status 3; the first runs every job.
TEST_F(HostileWorkerTest, ASecondWorkerWithATakenIdStopsAndSaysWhy) {
  const std::vector<std::string> fake_runner = {"--runner", PARADNN_FAKE_RUNNER};
  cluster_->StartWorker("twin", fake_runner);
  ASSERT_TRUE(WaitFor(
      [&] {
        return Query("SELECT count(*) FROM workers WHERE id = 'twin' AND connected = 1") == 1;
      },
      seconds(20)))
      << cluster_->Logs();
  cluster_->StartWorker("twin", fake_runner);
  const std::string sweep = Submit(6);
  std::optional<int> status = cluster_->WaitWorker(1, seconds(60));
  ASSERT_TRUE(status.has_value()) << "the second worker did not stop: " << cluster_->WorkerLog(1);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 3) << cluster_->WorkerLog(1);
  EXPECT_NE(cluster_->WorkerLog(1).find("another worker is connected with it"), std::string::npos);
  EXPECT_NE(cluster_->WorkerLog(1).find("start this one with its own --worker-id"),
            std::string::npos);
  CommandResult watch = cluster_->Cli({"watch", sweep}, seconds(120));
  EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err;
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE outcome = 1 AND worker_id = 'twin'"), 6);
  EXPECT_NE(cluster_->CoordinatorLogs().find("a second worker said hello as 'twin'"),
            std::string::npos);
}

// Hellos are taken off the stream's callback thread; a peer that hangs up
// (or is replaced) while its hello is with the scheduler must neither crash
// the coordinator nor leave its stream open. 40 peers say hello and cancel
// at once, 20 say hello as one id at once; a worker then joins and works.
TEST_F(HostileWorkerTest, StreamsThatEndDuringTheirHelloLeaveTheCoordinatorServing) {
  for (int i = 0; i < 40; ++i) {
    PeerWorker quitter(cluster_->address(), "quitter-" + std::to_string(i));
    ASSERT_NO_FATAL_FAILURE(quitter.SayHello());
  }  // ~PeerWorker cancels the stream
  {
    std::vector<std::unique_ptr<PeerWorker>> twins;
    for (int i = 0; i < 20; ++i) {
      twins.push_back(std::make_unique<PeerWorker>(cluster_->address(), "same-id"));
      ASSERT_NO_FATAL_FAILURE(twins.back()->SayHello());
    }
    // Exactly one hello is taken (whichever the scheduler saw first); while
    // that stream stays connected the others are refused (a stream quiet
    // for a lease timeout could be replaced, which these are not).
    int accepted = 0;
    int refused = 0;
    for (const std::unique_ptr<PeerWorker>& twin : twins) {
      std::optional<v1::CoordinatorMessage> first = twin->Next();
      if (first.has_value()) {
        accepted += first->has_hello_ack();
      } else {
        refused += twin->Ended().error_code() == grpc::StatusCode::ALREADY_EXISTS;
      }
    }
    EXPECT_EQ(accepted, 1);
    EXPECT_EQ(refused, 19);
  }
  Submit(2);
  PeerWorker worker(cluster_->address(), "after-the-storm");
  ASSERT_NO_FATAL_FAILURE(worker.Join());
  std::optional<v1::JobAssignment> job = worker.NextAssignment();
  ASSERT_TRUE(job.has_value()) << cluster_->CoordinatorLogs();
}

// A worker whose runner binary disappears hands its job back and takes no
// more work (no job is stored CRASHED for the worker's fault), the others
// run everything, and it rejoins once the runner is back.
TEST_F(HostileWorkerTest, AWorkerThatCannotStartItsRunnerStepsAside) {
  setenv("FAKE_RUNNER_DELAY_MS", "150", 1);
  const std::string runner = dir_.File("runner-copy");
  std::filesystem::copy_file(PARADNN_FAKE_RUNNER, runner);
  std::filesystem::permissions(runner, std::filesystem::perms::owner_all);
  // No zygote: every job starts the runner binary afresh.
  cluster_->StartWorker("broken", {"--runner", runner, "--runner-zygote", "false"});
  cluster_->StartWorker("healthy", {"--runner", PARADNN_FAKE_RUNNER});
  ASSERT_TRUE(WaitFor(
      [&] { return Query("SELECT count(*) FROM workers WHERE connected = 1") == 2; }, seconds(20)))
      << cluster_->Logs();
  std::filesystem::remove(runner);
  const std::string first = Submit(20);
  CommandResult watch = cluster_->Cli({"watch", first}, seconds(120));
  EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err;
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE outcome = 1"), 20);
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE outcome != 1"), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE worker_id = 'broken'"), 0);
  EXPECT_NE(cluster_->WorkerLog(0).find("takes no jobs until it can start its runner again"),
            std::string::npos)
      << cluster_->WorkerLog(0);
  // The runner is back: within a health check (10 s) the worker rejoins.
  std::filesystem::copy_file(PARADNN_FAKE_RUNNER, runner);
  std::filesystem::permissions(runner, std::filesystem::perms::owner_all);
  ASSERT_TRUE(WaitFor(
      [&] {
        return cluster_->WorkerLog(0).find("is executable again; rejoining") != std::string::npos;
      },
      seconds(30)));
  std::ofstream(dir_.File("second.yaml"))
      << "name: second\nfamily: fc\ndevice: cpu\n"
         "params: {layer: 2, node: {min: 8, max: 160, add: 8}, input: 4, output: 2, batch: 4}\n";
  CommandResult second = cluster_->Cli({"submit", dir_.File("second.yaml"), "-q"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const std::string id = second.out.substr(0, second.out.find_first_of("\n "));
  watch = cluster_->Cli({"watch", id}, seconds(120));
  EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err;
  EXPECT_GT(Query("SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE "
                  "j.sweep_id = " +
                  id + " AND r.worker_id = 'broken' AND r.outcome = 1"),
            0)
      << cluster_->WorkerLog(0);
  unsetenv("FAKE_RUNNER_DELAY_MS");
}

}  // namespace
}  // namespace paradnn::testing
