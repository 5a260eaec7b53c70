// Family allreduce: its rules (bytes a multiple of 4 up to 1 GiB, float32
// only, one rank per process, nothing to overlap), its counts and a sweep of
// message sizes over a gang of two.
#include "model/families/allreduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "model/family.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "tests/unit/model/sweep_test_specs.h"

namespace paradnn::model {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

v1::ModelConfig AllReduceConfig(int64_t bytes, int64_t hosts) {
  v1::ModelConfig config;
  config.set_family("allreduce");
  (*config.mutable_params())["bytes"] = bytes;
  (*config.mutable_params())["hosts"] = hosts;
  return config;
}

std::string ErrorOf(const v1::ModelConfig& config, FieldStyle style = FieldStyle::kProto) {
  absl::StatusOr<ModelSpec> spec = ParseModelSpec(config, style);
  return spec.ok() ? "OK" : std::string(spec.status().message());
}

TEST(AllReduceFamilyTest, IsRegisteredFirstAndListsTheSharedParams) {
  ASSERT_NE(FindFamily("allreduce"), nullptr);
  EXPECT_THAT(AllowedFamilies(), StartsWith("allreduce|cnn|"));
  const FamilyDef& def = *FindFamily("allreduce");
  for (const char* shared :
       {"devices", "hosts", "inter_op_threads", "intra_op_threads", "overlap", "bytes"}) {
    EXPECT_NE(FindParam(def, shared), nullptr) << shared;
  }
  EXPECT_EQ(FindParam(def, "batch"), nullptr);  // a step trains no examples
}

TEST(AllReduceFamilyTest, CountsTheMessageAsParamsAndItsBusBytes) {
  absl::StatusOr<ModelSpec> spec = ParseModelSpec(AllReduceConfig(1 << 20, 4), FieldStyle::kProto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(AllReduceBytes(*spec), 1 << 20);
  const v1::ModelCounts counts = CountModel(*spec);
  EXPECT_EQ(counts.params(), (1 << 20) / 4);
  EXPECT_EQ(counts.model_flops(), 0);
  EXPECT_EQ(counts.executed_flops(), 0);
  EXPECT_EQ(counts.other_flops(), 0);
  EXPECT_EQ(counts.activation_bytes(), 0);
  // Bus bytes: 2 (ranks - 1) / ranks of the message, as nccl-tests counts.
  EXPECT_DOUBLE_EQ(counts.bytes_per_step(), (1 << 20) * 2.0 * 3 / 4);
  EXPECT_DOUBLE_EQ(counts.peak_memory_estimate_bytes(), 2.0 * (1 << 20));
  // One rank moves nothing over a bus.
  spec = ParseModelSpec(AllReduceConfig(4096, 1), FieldStyle::kProto);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(CountModel(*spec).bytes_per_step(), 0);
}

TEST(AllReduceFamilyTest, BytesIsRequiredFloat32ElementsUpToOneGiB) {
  v1::ModelConfig config = AllReduceConfig(4, 2);
  EXPECT_EQ(ErrorOf(config), "OK");
  config.mutable_params()->erase("bytes");
  EXPECT_THAT(ErrorOf(config), StartsWith("config.params.bytes: required for family allreduce"));
  EXPECT_EQ(ErrorOf(AllReduceConfig(6, 2), FieldStyle::kFlag),
            "--bytes: 6 is not a multiple of 4; allowed 4..1073741824 in multiples of 4: float32 "
            "elements of 4 bytes, at most 1 GiB");
  EXPECT_THAT(ErrorOf(AllReduceConfig(0, 2)),
              StartsWith("config.params.bytes: 0 is out of range; allowed 4..1073741824"));
  EXPECT_THAT(ErrorOf(AllReduceConfig((int64_t{1} << 30) + 4, 2)),
              StartsWith("config.params.bytes: 1073741828 is out of range"));
  EXPECT_EQ(ErrorOf(AllReduceConfig(int64_t{1} << 30, 2)), "OK");
}

TEST(AllReduceFamilyTest, RefusesWhatHasNoMeaningForIt) {
  v1::ModelConfig config = AllReduceConfig(4096, 2);
  config.set_precision("bfloat16");
  EXPECT_EQ(ErrorOf(config),
            "config.precision: 'bfloat16' is not allowed for family allreduce; allowed: float32 "
            "(the message is float32 elements; set bytes for its size)");
  config = AllReduceConfig(4096, 2);
  (*config.mutable_params())["devices"] = 2;
  EXPECT_THAT(ErrorOf(config), StartsWith("config.params.devices: 2 is out of range; allowed "
                                          "1..1: the allreduce family runs one rank per process"));
  config = AllReduceConfig(4096, 2);
  (*config.mutable_params())["overlap"] = 0;
  EXPECT_THAT(ErrorOf(config), HasSubstr("config.params.overlap: 0 is out of range; allowed 1..1: "
                                         "a step of the allreduce family is one all-reduce"));
  config = AllReduceConfig(4096, 2);
  (*config.mutable_params())["batch"] = 8;
  EXPECT_EQ(ErrorOf(config),
            "config.params.batch: unknown hyper-parameter for family allreduce; allowed: bytes, "
            "devices, hosts, inter_op_threads, intra_op_threads, overlap");
  config = AllReduceConfig(4096, 65);
  EXPECT_THAT(ErrorOf(config),
              StartsWith("config.params.hosts: 65 is out of range; allowed 1..64"));
}

// The sweep of docs/models.md: five message sizes over a gang of two.
TEST(AllReduceFamilyTest, MessageSizesOverTwoHostsExpand) {
  const v1::SweepSpec spec = Spec(R"pb(
    name: "allreduce-2"
    family: "allreduce"
    params {
      key: "bytes"
      value { values { values: [ 4096, 65536, 1048576, 16777216, 67108864 ] } }
    }
    params {
      key: "hosts"
      value { value: 2 }
    }
  )pb");
  std::vector<v1::ModelConfig> configs;
  ASSERT_NO_FATAL_FAILURE(ExpandValid(spec, 0, 5, &configs));
  std::vector<int64_t> bytes;
  for (const v1::ModelConfig& c : configs) {
    EXPECT_EQ(c.family(), "allreduce");
    EXPECT_EQ(c.params().at("hosts"), 2);
    EXPECT_EQ(c.params().size(), 2u) << c.DebugString();
    bytes.push_back(c.params().at("bytes"));
  }
  EXPECT_EQ(bytes, (std::vector<int64_t>{4096, 65536, 1048576, 16777216, 67108864}));
  EXPECT_EQ(MostDataParallelHosts(spec).value(), 2);

  v1::SweepSpec bad = spec;
  bad.add_precision("float16");
  EXPECT_EQ(ValidateSweep(bad, 0).message(),
            "precision[0]: 'float16' is not allowed for family allreduce; allowed: float32 (the "
            "message is float32 elements; set bytes for its size)");
  bad = spec;
  (*bad.mutable_params())["bytes"] = Param("values { values: [ 4096, 4098 ] }");
  EXPECT_THAT(std::string(ValidateSweep(bad, 0).message()),
              HasSubstr("4098 is not a multiple of 4"));
}

}  // namespace
}  // namespace paradnn::model
