// Data-parallel replicas (worker/runner/data_parallel.h) on the CPU over
// Gloo: the same code that joins CUDA replicas over NCCL, less the backend.
#include "worker/runner/data_parallel.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_list.h"
#include "model/model_spec.h"
#include "tests/unit/worker/runner/tiny_fc.h"
#include "worker/runner/gloo_device_nice.h"

namespace paradnn::runner {
namespace {

using std::chrono::milliseconds;

model::ModelSpec TinyFc() {
  return *model::ParseModelSpec(TinyFcConfig(), model::FieldStyle::kProto);
}

ReplicaGroup::MakeTrainer SeededBy(uint64_t seed) {
  return [seed](int rank, const torch::Device& device) {
    BuildContext context;
    context.device = device;
    return std::make_unique<Trainer>(TinyFc(), seed + rank, context);
  };
}

// Two replicas on the CPU, threads of this process, joined over Gloo as a
// data-parallel job without a gang joins them (gang_training.cc): gradient
// buckets, all-reduced after backward (overlap false, so that a replica
// that fails before its all-reduces leaves the other waiting in them).
ReplicaGroup CpuPair(uint64_t seed, milliseconds timeout) {
  return ReplicaGroup({torch::kCPU, torch::kCPU}, SeededBy(seed),
                      [store = MakeReplicaStore(), timeout](int rank, Trainer& trainer) {
                        return MakeBucketSync(JoinProcessGroup("gloo", ReplicaStore(store), rank, 2,
                                                               timeout, "127.0.0.1"),
                                              trainer.parameters(), /*overlap=*/false);
                      });
}

bool SameWeights(Trainer& a, Trainer& b) {
  if (a.parameters().size() != b.parameters().size()) return false;
  for (size_t i = 0; i < a.parameters().size(); ++i) {
    if (!torch::equal(a.parameters()[i], b.parameters()[i])) return false;
  }
  return true;
}

TEST(DataParallelTest, ThisBuildJoinsCpuReplicasOverGloo) {
  absl::StatusOr<std::string> backend = CollectiveBackendFor(torch::kCPU);
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ(*backend, "gloo");
  // Debian's LibTorch has no CUDA: no NCCL, and the reason says what to do.
  absl::StatusOr<std::string> cuda = CollectiveBackendFor(torch::kCUDA);
  if (!cuda.ok()) {
    EXPECT_NE(cuda.status().message().find("NCCL"), std::string::npos) << cuda.status();
  }
}

TEST(DataParallelTest, ReplicasStartFromReplicaZerosWeightsAndTrainInStep) {
  ReplicaGroup group = CpuPair(7, milliseconds(20'000));
  ASSERT_EQ(group.size(), 2);
  EXPECT_EQ(group.DeviceList(), "cpu, cpu");
  // Seeded 7 and 8, then replica 0's weights broadcast: equal.
  EXPECT_TRUE(SameWeights(group.replica(0), group.replica(1)));
  Trainer alone(TinyFc(), 7, BuildContext{});
  ASSERT_TRUE(SameWeights(group.replica(0), alone));

  for (int step = 0; step < 5; ++step) {
    const torch::Tensor loss = group.Step();
    ASSERT_TRUE(std::isfinite(loss.item<double>()));
    (void)alone.Step();
  }
  group.WaitForFollowers();
  // The replicas saw different batches but applied the same averaged
  // gradients; replica 0 alone, on its own batch, went elsewhere.
  EXPECT_TRUE(SameWeights(group.replica(0), group.replica(1)));
  EXPECT_FALSE(SameWeights(group.replica(0), alone));
}

TEST(DataParallelTest, AFollowersFailureIsWhatTheStepThrows) {
  ReplicaGroup group = CpuPair(1, milliseconds(2'000));
  (void)group.Step();
  group.replica(1).set_gradient_hook([](const std::vector<torch::Tensor>&) {
    throw std::runtime_error("replica 1 ran out of device memory (injected)");
  });
  // Replica 0's all-reduce fails (replica 1 left the group, or the group's
  // timeout passed); the step reports replica 1's failure, not that.
  try {
    (void)group.Step();
    ADD_FAILURE() << "the step should have thrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "replica 1 ran out of device memory (injected)");
  }
  EXPECT_EQ(group.FailureSite(), "replica 1 on cpu");
  EXPECT_THROW((void)group.Step(), std::runtime_error);  // and every step after
}

// The nice value of thread `tid` of this process (/proc: field 19 of stat,
// after the command's closing parenthesis); -100 when unreadable.
int ThreadNice(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return -100;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 19 && fields >> field; ++i) {
    if (i == 19) return std::stoi(field);
  }
  return -100;
}

// env.PARADNN_GLOO_DEVICE_NICE reaches the Gloo device the runner's process
// groups create: its new threads, and only they, run at that nice value.
TEST(DataParallelTest, GlooDeviceThreadsTakeTheNiceOfTheStackSetting) {
  if (getpriority(PRIO_PROCESS, 0) == 19) GTEST_SKIP() << "the test itself runs at nice 19";
  const std::vector<int> before = common::ThreadIds();
  setenv(kGlooDeviceNiceEnv, "19", 1);
  auto group = JoinProcessGroup("gloo", ReplicaStore(MakeReplicaStore()), 0, 1,
                                milliseconds(10'000), "127.0.0.1");
  unsetenv(kGlooDeviceNiceEnv);
  int reniced = 0;
  for (int tid : common::ThreadIds()) {
    const bool old = std::binary_search(before.begin(), before.end(), tid);
    if (ThreadNice(tid) == 19) ++reniced;
    if (old) {
      EXPECT_NE(ThreadNice(tid), 19) << "thread " << tid << " existed before the group";
    }
  }
  EXPECT_GE(reniced, 1);  // the device's event loop
  // Without the setting, a new group's device threads keep the process's nice.
  const std::vector<int> between = common::ThreadIds();
  auto plain = JoinProcessGroup("gloo", ReplicaStore(MakeReplicaStore()), 0, 1,
                                milliseconds(10'000), "127.0.0.1");
  for (int tid : common::ThreadIds()) {
    if (!std::binary_search(between.begin(), between.end(), tid)) {
      EXPECT_NE(ThreadNice(tid), 19);
    }
  }
}

TEST(DataParallelTest, ABackendThisBuildLacksIsRefused) {
  EXPECT_THROW(JoinProcessGroup("mpi", ReplicaStore(MakeReplicaStore()), 0, 1, milliseconds(1'000),
                                "127.0.0.1"),
               std::invalid_argument);
}

}  // namespace
}  // namespace paradnn::runner
