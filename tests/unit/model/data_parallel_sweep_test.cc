// Data-parallel sweep variables: params.devices (replicas per process),
// params.hosts (a gang of worker processes) and params.overlap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/family.h"
#include "model/sweep.h"
#include "tests/unit/model/sweep_test_specs.h"

namespace paradnn::model {
namespace {

using ::testing::StartsWith;

// params.devices: data-parallel replicas, an axis like any parameter, but
// beyond one only on CUDA (one replica per GPU).
TEST(SweepValidationTest, DevicesIsASweepVariableOfCudaSweeps) {
  v1::SweepSpec spec = Issue();
  spec.set_device("cuda");
  (*spec.mutable_params())["devices"].mutable_values()->add_values(1);
  for (int64_t n : {2, 4, 8}) (*spec.mutable_params())["devices"].mutable_values()->add_values(n);
  ASSERT_TRUE(ValidateSweep(spec, kDefaultMaxJobs).ok()) << ValidateSweep(spec, kDefaultMaxJobs);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, kDefaultMaxJobs);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 40u);
  std::vector<int64_t> seen;
  for (const v1::ModelConfig& c : *configs) seen.push_back(DataParallelDevices(c));
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 8), 10);
  EXPECT_EQ(DataParallelDevices(v1::ModelConfig()), 1);  // absent: one device

  spec.set_device("cpu");
  absl::Status on_cpu = ValidateSweep(spec, kDefaultMaxJobs);
  EXPECT_EQ(on_cpu.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(on_cpu.message(),
            "params.devices: 8 replicas need device cuda (one replica per GPU, gradients "
            "all-reduced over NCCL); this sweep's device is cpu; allowed here: 1 (CPUs scale out "
            "with params.hosts: one process per worker, gradients all-reduced over Gloo)");
  (*spec.mutable_params())["devices"].clear_values();
  (*spec.mutable_params())["devices"].set_value(1);
  EXPECT_TRUE(ValidateSweep(spec, kDefaultMaxJobs).ok());  // one replica is any device's

  spec.set_device("cuda");
  (*spec.mutable_params())["devices"].set_value(17);
  EXPECT_THAT(std::string(ValidateSweep(spec, kDefaultMaxJobs).message()),
              StartsWith("params.devices: 17 is out of range; allowed 1..16"));
}

// params.hosts: a gang of worker processes, on any device; params.overlap
// whether its all-reduces overlap backward.
TEST(SweepValidationTest, HostsAndOverlapAreSweepVariablesOfEveryDevice) {
  v1::SweepSpec spec = Issue();
  spec.set_device("cpu");
  for (int64_t n : {1, 2, 4}) (*spec.mutable_params())["hosts"].mutable_values()->add_values(n);
  for (int64_t o : {0, 1}) (*spec.mutable_params())["overlap"].mutable_values()->add_values(o);
  ASSERT_TRUE(ValidateSweep(spec, kDefaultMaxJobs).ok()) << ValidateSweep(spec, kDefaultMaxJobs);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, kDefaultMaxJobs);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 60u);
  int gangs_of_four = 0;
  int without_overlap = 0;
  for (const v1::ModelConfig& c : *configs) {
    gangs_of_four += DataParallelHosts(c) == 4;
    without_overlap += !DataParallelOverlap(c);
    EXPECT_EQ(DataParallelRanks(c), DataParallelHosts(c));
  }
  EXPECT_EQ(gangs_of_four, 20);
  EXPECT_EQ(without_overlap, 30);
  EXPECT_EQ(*MostDataParallelHosts(spec), 4);
  EXPECT_EQ(DataParallelHosts(v1::ModelConfig()), 1);
  EXPECT_TRUE(DataParallelOverlap(v1::ModelConfig()));

  (*spec.mutable_params())["hosts"].set_value(65);
  EXPECT_THAT(std::string(ValidateSweep(spec, kDefaultMaxJobs).message()),
              StartsWith("params.hosts: 65 is out of range; allowed 1..64"));
  (*spec.mutable_params())["hosts"].set_value(2);
  (*spec.mutable_params())["overlap"].set_value(2);
  EXPECT_THAT(std::string(ValidateSweep(spec, kDefaultMaxJobs).message()),
              StartsWith("params.overlap: 2 is out of range; allowed 0..1"));
}

}  // namespace
}  // namespace paradnn::model
