// The hostile workers of the chaos test (tests/fault/chaos_test.cc), each a
// PeerWorker stream spoken by hand beside real workers: a forger reporting
// other workers' attempts and a liar measuring nothing.
#ifndef PARADNN_TESTS_FAULT_HOSTILE_PEERS_H_
#define PARADNN_TESTS_FAULT_HOSTILE_PEERS_H_

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "paradnn/v1/coordinator.grpc.pb.h"
#include "tests/integration/cluster.h"
#include "tests/support/peer_worker.h"

namespace paradnn::testing {

// A peer that says hello as "forger" and, every few milliseconds, sends an
// OK result (or a CANCELLED, or a hand-back) for some other worker's open
// attempt, read from the database: what a stolen worker token can try.
class Forger {
 public:
  Forger(const std::string& address, const std::string& db_path, const std::string& token)
      : peer_(address, "forger", token), db_path_(db_path) {
    v1::WorkerMessage hello;
    hello.mutable_hello()->set_worker_id("forger");
    hello.mutable_hello()->set_device_kind("forged-device");  // never offered a job
    hello.mutable_hello()->mutable_platform()->set_fingerprint("forged");
    peer_.Write(hello);
    reader_ = std::thread([this] {
      while (std::optional<v1::CoordinatorMessage> message = peer_.Next()) {
        if (message->has_ack()) acks_.fetch_add(1);
      }
    });
    writer_ = std::thread([this] { Loop(); });
  }
  ~Forger() {
    stop_ = true;
    writer_.join();
    peer_.Cancel();
    reader_.join();
  }
  int64_t sent() const { return sent_; }
  int64_t acks() const { return acks_.load(); }

 private:
  void Loop() {
    for (int round = 0; !stop_; ++round) {
      // The pace of the forgeries, not a wait for anything.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const int64_t attempt = QueryInt(db_path_,
                                       "SELECT id FROM attempts WHERE finished_unix_ms IS NULL "
                                       "ORDER BY random() LIMIT 1");
      if (attempt <= 0) continue;
      const int64_t job =
          QueryInt(db_path_, "SELECT job_id FROM attempts WHERE id = " + std::to_string(attempt));
      v1::WorkerMessage message;
      v1::JobResult* result = message.mutable_result();
      result->set_job_id(job);
      result->set_attempt_id(attempt);
      result->mutable_measurement()->set_outcome(round % 3 == 0 ? v1::OK : v1::CANCELLED);
      result->mutable_measurement()->set_examples_per_sec(-123);
      result->set_handed_back(round % 3 == 2);
      if (!peer_.Write(message)) return;
      ++sent_;
    }
  }

  PeerWorker peer_;
  std::string db_path_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> acks_{0};
  int64_t sent_ = 0;
  std::thread reader_;
  std::thread writer_;
};

// A worker with a valid token of its own (bound to `evil-*`) that claims
// the honest workers' platform (their stored record, fingerprint and all)
// and harness, and answers every job it gets at once with a made-up step
// time: results later sweeps would reuse, were reuse not bound to the trust
// domain that measured them.
class Liar {
 public:
  Liar(const std::string& address, const std::string& db_path, const std::string& token)
      : peer_(address, "evil-1", token) {
    const std::string details = absl::HexStringToBytes(
        QueryText(db_path, "SELECT hex(details) FROM platforms ORDER BY id LIMIT 1"));
    v1::Platform platform;
    EXPECT_TRUE(platform.ParseFromString(details));
    // As the fleet's workers say it (the row's name adds their domain).
    platform.set_fingerprint(platform.fingerprint().substr(0, platform.fingerprint().find('@')));
    harness_ = QueryText(db_path, "SELECT harness FROM workers WHERE harness != '' LIMIT 1");
    thread_ = std::thread([this, platform] { Lie(platform); });
  }
  ~Liar() {
    peer_.Cancel();
    thread_.join();
  }
  int lies() const { return lies_.load(); }

 private:
  void Lie(const v1::Platform& platform) {
    v1::WorkerMessage hello;
    hello.mutable_hello()->set_worker_id("evil-1");
    hello.mutable_hello()->set_device_kind(platform.device_kind());
    hello.mutable_hello()->set_harness(harness_);
    *hello.mutable_hello()->mutable_platform() = platform;
    if (!peer_.Write(hello)) return;
    peer_.Heartbeat();
    while (std::optional<v1::JobAssignment> job = peer_.NextAssignment()) {
      // The made-up job's duration, as long as an honest one takes
      // (FAKE_RUNNER_DELAY_MS), so that it gets its share of the sweep and
      // not all of it; not a wait for anything.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      v1::Measurement m;
      m.set_outcome(v1::OK);
      m.set_device(platform.device_kind());
      *m.mutable_config() = job->job().config();
      for (int i = 0; i < 3; ++i) m.add_step_seconds(1e-9);
      m.mutable_stats()->set_steps(3);
      m.mutable_stats()->set_median_s(1e-9);
      m.set_examples_per_sec(1e9);
      peer_.Send(job->job_id(), job->attempt_id(), m);
      ++lies_;
    }
  }

  PeerWorker peer_;
  std::string harness_;
  std::atomic<int> lies_{0};
  std::thread thread_;
};

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_FAULT_HOSTILE_PEERS_H_
