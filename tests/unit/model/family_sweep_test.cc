// Sweeps of the families beyond FC (options as axes, image and block
// rules, defaults, thread counts, TorchScript) and the shuffled job order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/sweep.h"
#include "tests/unit/model/sweep_test_specs.h"

namespace paradnn::model {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

v1::SweepSpec Cnn() {
  // clang-format off
  return Spec(R"pb(
    name: "cnn" family: "cnn"
    params { key: "block" value { range { min: 1 max: 3 add: 1 } } }
    params { key: "filter" value { value: 16 } }
    params { key: "image" value { value: 224 } }
    params { key: "output" value { value: 1000 } }
    params { key: "batch" value { values { values: [ 32, 64 ] } } }
    options { key: "block_fn" value { values: [ "residual", "bottleneck" ] } }
  )pb");
  // clang-format on
}

v1::SweepSpec Rnn() {
  // clang-format off
  return Spec(R"pb(
    name: "rnn" family: "rnn"
    params { key: "layer" value { value: 1 } }
    params { key: "embed" value { value: 100 } }
    params { key: "length" value { values { values: [ 10, 50 ] } } }
    params { key: "vocab" value { value: 32 } }
    params { key: "batch" value { value: 16 } }
    options { key: "cell" value { values: [ "rnn", "lstm", "gru" ] } }
  )pb");
  // clang-format on
}

v1::SweepSpec TorchScript() {
  // clang-format off
  return Spec(R"pb(
    name: "ts" family: "torchscript"
    params { key: "batch" value { values { values: [ 8, 16 ] } } }
    torchscript {
      content: "PK-model-bytes" file_name: "model.pt" loss: "cross_entropy"
      inputs { name: "x" shape: [ -1, 3, 32, 32 ] dtype: "float32" }
      target { name: "y" shape: [ -1 ] dtype: "int64" low: 0 high: 10 }
    }
  )pb");
  // clang-format on
}

std::string Error(const v1::SweepSpec& spec) {
  absl::Status s = ValidateSweep(spec, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_FALSE(ExpandSweep(spec, 0).ok());
  return std::string(s.message());
}

TEST(FamilySweepTest, CnnOptionsAreAnAxisAfterTheParams) {
  ASSERT_TRUE(ValidateSweep(Cnn(), 0).ok()) << ValidateSweep(Cnn(), 0);
  EXPECT_EQ(CountConfigurations(Cnn()), 3 * 2 * 2);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(Cnn(), 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 12u);
  // batch (outermost), block, then block_fn turns fastest.
  std::vector<std::tuple<int64_t, int64_t, std::string>> got;
  for (const v1::ModelConfig& c : *configs) {
    EXPECT_EQ(c.family(), "cnn");
    EXPECT_EQ(c.params().size(), 5u);
    // blocks has no default: not written; memory_format's default is.
    EXPECT_EQ(c.options().size(), 2u);
    EXPECT_EQ(c.options().at("memory_format"), "channels_last");
    got.emplace_back(c.params().at("batch"), c.params().at("block"), c.options().at("block_fn"));
  }
  EXPECT_EQ(got[0], std::make_tuple(int64_t{32}, int64_t{1}, std::string("residual")));
  EXPECT_EQ(got[1], std::make_tuple(int64_t{32}, int64_t{1}, std::string("bottleneck")));
  EXPECT_EQ(got[2], std::make_tuple(int64_t{32}, int64_t{2}, std::string("residual")));
  EXPECT_EQ(got[11], std::make_tuple(int64_t{64}, int64_t{3}, std::string("bottleneck")));
}

TEST(FamilySweepTest, OptionsComeBeforePrecisionAndOptimizer) {
  v1::SweepSpec spec = Cnn();
  spec.add_precision("float32");
  spec.add_precision("bfloat16");
  EXPECT_EQ(CountConfigurations(spec), 24);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  EXPECT_EQ((*configs)[0].options().at("block_fn"), "residual");
  EXPECT_EQ((*configs)[0].precision(), "float32");
  EXPECT_EQ((*configs)[1].options().at("block_fn"), "residual");
  EXPECT_EQ((*configs)[1].precision(), "bfloat16");
  EXPECT_EQ((*configs)[2].options().at("block_fn"), "bottleneck");
  std::set<std::string> distinct;
  for (const auto& c : *configs) distinct.insert(c.SerializeAsString());
  EXPECT_EQ(distinct.size(), 24u);
}

TEST(FamilySweepTest, CnnImageBelow193IsInvalidAndSaysWhy) {
  v1::SweepSpec spec = Cnn();
  (*spec.mutable_params())["image"] = Param("value: 192");
  EXPECT_EQ(Error(spec),
            "params.image: 192 is out of range; allowed 193..4096: the 7x7 average pool needs a "
            "final map of at least 7 (image >= 193)");
  (*spec.mutable_params())["image"] = Param("range { min: 100 max: 300 add: 100 }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.range.min: 100 is out of range; allowed "
                                      "193..4096: the 7x7 average pool"));
  (*spec.mutable_params())["image"] = Param("value: 193");
  EXPECT_TRUE(ValidateSweep(spec, 0).ok());
}

TEST(FamilySweepTest, CnnBlockFnIsRequiredAndChecked) {
  v1::SweepSpec spec = Cnn();
  spec.mutable_options()->erase("block_fn");
  EXPECT_EQ(Error(spec),
            "options.block_fn: missing; family cnn requires block_fn, one of residual|bottleneck");
  (*spec.mutable_options())["block_fn"].add_values("residual");
  (*spec.mutable_options())["block_fn"].add_values("dense");
  EXPECT_EQ(Error(spec), "options.block_fn[1]: 'dense' is not one of residual|bottleneck");
  (*spec.mutable_options())["block_fn"].set_values(1, "residual");
  EXPECT_EQ(Error(spec), "options.block_fn[1]: 'residual' is repeated (also at [0])");
  (*spec.mutable_options())["block_fn"].clear_values();
  EXPECT_EQ(Error(spec), "options.block_fn: empty list; give at least one of residual|bottleneck");
  spec = Cnn();
  (*spec.mutable_options())["block_func"].add_values("residual");
  EXPECT_EQ(Error(spec),
            "options.block_func: unknown option of family cnn; allowed: block_fn, "
            "blocks, memory_format");
}

// A free-text option has millions of valid values; repeats are found in a
// long list of distinct ones too (by a hash, not by comparing every pair).
TEST(FamilySweepTest, RepeatedFreeTextOptionValueNamesItsFirstIndex) {
  v1::SweepSpec spec = Cnn();
  v1::StringValues& blocks = (*spec.mutable_options())["blocks"];
  for (int a = 1; a <= 64; ++a) {
    for (int b = 1; b <= 64; ++b) blocks.add_values(absl::StrCat(a, ",", b, ",1,1"));
  }
  blocks.add_values("7,9,1,1");
  EXPECT_EQ(Error(spec), "options.blocks[4096]: '7,9,1,1' is repeated (also at [392])");
}

TEST(FamilySweepTest, CnnBlocksArePerGroupCounts) {
  v1::SweepSpec spec = Cnn();
  (*spec.mutable_options())["blocks"].add_values("3,4,6,3");
  (*spec.mutable_options())["blocks"].add_values("3,4,23,3");
  ASSERT_TRUE(ValidateSweep(spec, 0).ok()) << ValidateSweep(spec, 0);
  EXPECT_EQ(CountConfigurations(spec), 24);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok());
  // block_fn, then blocks (sorted option keys; blocks turns fastest).
  EXPECT_EQ((*configs)[0].options().at("blocks"), "3,4,6,3");
  EXPECT_EQ((*configs)[1].options().at("blocks"), "3,4,23,3");
  EXPECT_EQ((*configs)[1].options().at("block_fn"), "residual");
  EXPECT_EQ((*configs)[2].options().at("block_fn"), "bottleneck");
  for (const char* bad : {"3,4,6", "3,4,6,3,1", "3,4,06,3", "3,4,0,3", "3,4,65,3", "3, 4,6,3",
                          "a,b,c,d", "3,4,6,3,"}) {
    v1::SweepSpec b = Cnn();
    (*b.mutable_options())["blocks"].add_values(bad);
    EXPECT_EQ(Error(b), absl::StrCat("options.blocks[0]: '", bad,
                                     "' is not four comma-separated block counts 1..64 like "
                                     "\"3,4,6,3\""))
        << bad;
  }
  // Empty is the option's default: every group takes `block` (what a stored
  // config says when it did not set blocks).
  v1::SweepSpec uniform = Cnn();
  (*uniform.mutable_options())["blocks"].add_values("");
  (*uniform.mutable_options())["blocks"].add_values("3,4,6,3");
  EXPECT_TRUE(ValidateSweep(uniform, 0).ok()) << ValidateSweep(uniform, 0);
}

TEST(FamilySweepTest, RnnCellsMultiplyTheGrid) {
  ASSERT_TRUE(ValidateSweep(Rnn(), 0).ok()) << ValidateSweep(Rnn(), 0);
  EXPECT_EQ(CountConfigurations(Rnn()), 6);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(Rnn(), 0);
  ASSERT_TRUE(configs.ok());
  std::vector<std::string> cells;
  for (const auto& c : *configs) cells.push_back(c.options().at("cell"));
  EXPECT_EQ(cells, (std::vector<std::string>{"rnn", "lstm", "gru", "rnn", "lstm", "gru"}));
  v1::SweepSpec spec = Rnn();
  spec.mutable_options()->erase("cell");
  EXPECT_EQ(Error(spec), "options.cell: missing; family rnn requires cell, one of rnn|lstm|gru");
  (*spec.mutable_options())["cell"].add_values("LSTM");
  EXPECT_EQ(Error(spec), "options.cell[0]: 'LSTM' is not one of rnn|lstm|gru");
  spec = Rnn();
  spec.mutable_params()->erase("vocab");
  EXPECT_EQ(Error(spec),
            "params.vocab: missing; family rnn requires batch, embed, layer, length, vocab");
}

TEST(FamilySweepTest, ImageModelsNeedOnlyABatchAndGetDefaults) {
  for (const char* family : {"resnet50", "densenet121", "mobilenet_v1", "squeezenet1_0"}) {
    SCOPED_TRACE(family);
    v1::SweepSpec spec;
    spec.set_name("real");
    spec.set_family(family);
    (*spec.mutable_params())["batch"] = Param("values { values: [ 1, 32 ] }");
    absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
    ASSERT_TRUE(configs.ok()) << configs.status();
    ASSERT_EQ(configs->size(), 2u);
    for (const auto& c : *configs) {
      EXPECT_EQ(c.params().at("image"), 224);
      EXPECT_EQ(c.params().at("output"), 1000);
      EXPECT_EQ(c.params().size(), 3u);
      ASSERT_EQ(c.options().size(), 1u);
      EXPECT_EQ(c.options().at("memory_format"), "channels_last");
    }
    // Given values replace the defaults and become axes.
    (*spec.mutable_params())["image"] = Param("values { values: [ 32, 299 ] }");
    configs = ExpandSweep(spec, 0);
    ASSERT_TRUE(configs.ok());
    EXPECT_EQ(configs->size(), 4u);
    EXPECT_EQ((*configs)[1].params().at("image"), 299);
    (*spec.mutable_params())["image"] = Param("value: 31");
    EXPECT_EQ(Error(spec), "params.image: 31 is out of range; allowed 32..4096");
    spec.mutable_params()->erase("batch");
    spec.mutable_params()->erase("image");
    EXPECT_THAT(Error(spec), StartsWith("params.batch: missing; family "));
  }
}

TEST(FamilySweepTest, RetinaNetImagesAreMultiplesOf32) {
  v1::SweepSpec spec;
  spec.set_name("retina");
  spec.set_family("retinanet");
  (*spec.mutable_params())["batch"] = Param("value: 2");
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  EXPECT_EQ(configs->front().params().at("image"), 512);
  EXPECT_EQ(configs->front().params().at("output"), 80);

  const std::string why =
      "allowed 64..4096 in multiples of 32: the FPN adds upsampled maps to the backbone's "
      "stride-8, -16 and -32 maps, which line up only when image is a multiple of 32";
  (*spec.mutable_params())["image"] = Param("value: 500");
  EXPECT_EQ(Error(spec), absl::StrCat("params.image: 500 is not a multiple of 32; ", why));
  (*spec.mutable_params())["image"] = Param("value: 32");
  EXPECT_EQ(Error(spec), absl::StrCat("params.image: 32 is out of range; ", why));
  (*spec.mutable_params())["image"] = Param("values { values: [ 512, 600 ] }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.values[1]: 600 is not a multiple of 32"));
  (*spec.mutable_params())["image"] = Param("range { min: 512 max: 1024 add: 48 }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.range.add: 48 is not a multiple of 32"));
  (*spec.mutable_params())["image"] = Param("range { min: 64 max: 512 mul: 1.5 }");
  EXPECT_THAT(Error(spec), StartsWith("params.image.range.mul: 1.5 reaches 144, not a multiple "
                                      "of 32"));
  // A range's max need not lie on the grid; every value reached does.
  (*spec.mutable_params())["image"] = Param("range { min: 64 max: 1000 mul: 2 }");
  auto values = ParamValues(spec.params().at("image"),
                            *FindParam(*FindFamily("retinanet"), "image"), "params.image");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<int64_t>{64, 128, 256, 512}));
  (*spec.mutable_params())["image"] = Param("range { min: 512 max: 1000 add: 256 }");
  EXPECT_TRUE(ValidateSweep(spec, 0).ok()) << ValidateSweep(spec, 0);
}

TEST(FamilySweepTest, TransformerDefaults) {
  v1::SweepSpec spec;
  spec.set_name("t");
  spec.set_family("transformer");
  (*spec.mutable_params())["batch"] = Param("values { values: [ 8, 16 ] }");
  (*spec.mutable_params())["length"] = Param("values { values: [ 64, 256 ] }");
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 4u);
  for (const auto& c : *configs) EXPECT_EQ(c.params().at("vocab"), 32000);
  spec.mutable_params()->erase("length");
  configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok());
  EXPECT_EQ(configs->front().params().at("length"), 128);
  (*spec.mutable_params())["image"] = Param("value: 224");
  EXPECT_EQ(Error(spec),
            "params.image: unknown parameter of family transformer; allowed: batch, devices, "
            "hosts, inter_op_threads, intra_op_threads, length, overlap, vocab");
}

TEST(FamilySweepTest, ThreadCountsAreSweepVariablesOfEveryFamily) {
  v1::SweepSpec spec = Cnn();
  (*spec.mutable_params())["intra_op_threads"] = Param("values { values: [ 1, 2, 4 ] }");
  (*spec.mutable_params())["inter_op_threads"] = Param("value: 1");
  EXPECT_EQ(CountConfigurations(spec), 36);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  std::set<int64_t> intra;
  for (const auto& c : *configs) {
    intra.insert(c.params().at("intra_op_threads"));
    EXPECT_EQ(c.params().at("inter_op_threads"), 1);
  }
  EXPECT_EQ(intra, (std::set<int64_t>{1, 2, 4}));
  // Left out, they are not written: the job's run settings apply.
  configs = ExpandSweep(Rnn(), 0);
  ASSERT_TRUE(configs.ok());
  EXPECT_EQ(configs->front().params().count("intra_op_threads"), 0u);
  spec.mutable_params()->erase("intra_op_threads");
  spec.mutable_run()->set_inter_op_threads(2);
  EXPECT_EQ(Error(spec),
            "params.inter_op_threads: also given as run.inter_op_threads; give it in one place "
            "(params to sweep it)");
}

TEST(FamilySweepTest, TorchScriptConfigsCarryTheModelWithoutItsBytes) {
  ASSERT_TRUE(ValidateSweep(TorchScript(), 0).ok()) << ValidateSweep(TorchScript(), 0);
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = ExpandSweep(TorchScript(), 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 2u);
  for (const auto& c : *configs) {
    EXPECT_EQ(c.family(), "torchscript");
    EXPECT_TRUE(c.torchscript().content().empty());
    EXPECT_EQ(c.torchscript().file_name(), "model.pt");
    EXPECT_EQ(c.torchscript().loss(), "cross_entropy");
    ASSERT_EQ(c.torchscript().inputs_size(), 1);
    EXPECT_EQ(c.torchscript().inputs(0).shape(0), -1);
    EXPECT_EQ(c.torchscript().target().high(), 10);
  }
  // A stored model named by its hash alone (a re-submission).
  v1::SweepSpec spec = TorchScript();
  spec.mutable_torchscript()->clear_content();
  spec.mutable_torchscript()->set_sha256(std::string(64, 'a'));
  configs = ExpandSweep(spec, 0);
  ASSERT_TRUE(configs.ok()) << configs.status();
  EXPECT_EQ(configs->front().torchscript().sha256(), std::string(64, 'a'));
}

TEST(FamilySweepTest, TorchScriptModelIsChecked) {
  struct Case {
    std::function<void(v1::TorchScriptModel*)> edit;
    std::string expected;  // the message starts with this
  };
  const std::vector<Case> cases = {
      {[](auto* m) { m->clear_content(); },
       "torchscript.content: empty; give the model file (or the sha256"},
      {[](auto* m) { m->set_sha256("ABC"); },
       "torchscript.sha256: 'ABC' is not 64 lowercase hex digits"},
      {[](auto* m) { m->clear_inputs(); }, "torchscript.inputs: empty; declare forward()'s"},
      {[](auto* m) { m->mutable_inputs(0)->clear_shape(); },
       "torchscript.inputs[0].shape: 0 dimensions; give 1..8"},
      {[](auto* m) { m->mutable_inputs(0)->set_shape(1, 0); },
       "torchscript.inputs[0].shape[1]: 0 is out of range"},
      {[](auto* m) { m->mutable_inputs(0)->set_shape(1, -1); },
       "torchscript.inputs[0].shape: 2 dimensions are -1; only the batch is"},
      {[](auto* m) { m->mutable_inputs(0)->set_shape(0, 4); },
       "torchscript.inputs: no shape has a -1"},
      {[](auto* m) {
         m->mutable_inputs(0)->clear_shape();
         for (int64_t dim : {int64_t{-1}, int64_t{1} << 31, int64_t{1} << 31}) {
           m->mutable_inputs(0)->add_shape(dim);
         }
       },
       "torchscript.inputs[0].shape: [-1, 2147483648, 2147483648] holds over 268435456 elements "
       "per example"},
      {[](auto* m) { m->mutable_inputs(0)->set_dtype("float64"); },
       "torchscript.inputs[0].dtype: 'float64' is not one of float32|int64"},
      {[](auto* m) { m->mutable_inputs(0)->set_dtype("int64"); },
       "torchscript.inputs[0].high: 0 must be > low 0 (values are randint(low, high))"},
      {[](auto* m) { m->set_loss("hinge"); },
       "torchscript.loss: 'hinge' is not one of cross_entropy|mse|sum|output"},
      {[](auto* m) { m->clear_loss(); }, "torchscript.loss: '' is not one of"},
      {[](auto* m) { m->clear_target(); },
       "torchscript.target: missing; loss cross_entropy needs a target tensor"},
      {[](auto* m) { m->mutable_target()->set_dtype("float32"); },
       "torchscript.target.dtype: 'float32'; loss cross_entropy needs int64"},
      {[](auto* m) { m->set_loss("sum"); }, "torchscript.target: loss sum takes no target"},
      {[](auto* m) {
         m->set_loss("mse");
         m->mutable_target()->set_dtype("int64");
       },
       "torchscript.target.dtype: 'int64'; loss mse needs float32"},
  };
  for (const Case& c : cases) {
    v1::SweepSpec spec = TorchScript();
    c.edit(spec.mutable_torchscript());
    EXPECT_THAT(Error(spec), StartsWith(c.expected));
  }
  v1::SweepSpec spec = TorchScript();
  spec.clear_torchscript();
  EXPECT_THAT(Error(spec), StartsWith("torchscript: missing; family torchscript needs"));
  // Losses without a target.
  for (const char* loss : {"sum", "output"}) {
    spec = TorchScript();
    spec.mutable_torchscript()->set_loss(loss);
    spec.mutable_torchscript()->clear_target();
    EXPECT_TRUE(ValidateSweep(spec, 0).ok()) << loss << ": " << ValidateSweep(spec, 0);
  }
}

TEST(ShuffledOrderTest, IsAPermutation) {
  for (size_t n : {0u, 1u, 2u, 7u, 1000u}) {
    std::vector<int32_t> order = ShuffledOrder(n, 42);
    ASSERT_EQ(order.size(), n);
    std::vector<int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(sorted[i], static_cast<int32_t>(i));
  }
}

TEST(ShuffledOrderTest, DeterministicPerSeedAndDifferentAcrossSeeds) {
  EXPECT_EQ(ShuffledOrder(100, 7), ShuffledOrder(100, 7));
  EXPECT_NE(ShuffledOrder(100, 7), ShuffledOrder(100, 8));
  std::vector<int32_t> identity(100);
  for (int i = 0; i < 100; ++i) identity[i] = i;
  EXPECT_NE(ShuffledOrder(100, 7), identity);
}

TEST(ShuffledOrderTest, EveryPositionIsReachable) {
  // Over many seeds element 0 lands in every slot of a small permutation.
  std::set<size_t> positions;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<int32_t> order = ShuffledOrder(5, seed);
    positions.insert(std::find(order.begin(), order.end(), 0) - order.begin());
  }
  EXPECT_EQ(positions.size(), 5u);
}

}  // namespace
}  // namespace paradnn::model
