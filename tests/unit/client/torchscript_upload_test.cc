#include "client/torchscript_upload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "client/sweep_file.h"
#include "tests/support/temp_file.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;

// A sweep file and its model file side by side in a temporary folder.
class TorchScriptUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    std::ofstream(dir_.File("mlp.pt"), std::ios::binary) << std::string("PK\x03\x04\0model", 10);
  }

  absl::StatusOr<v1::SweepSpec> Parse(const std::string& torchscript_section) {
    const std::string text =
        "name: my-mlp\n"                          // 1
        "family: torchscript\n"                   // 2
        "params: {batch: {values: [32, 128]}}\n"  // 3
        "torchscript:\n" +                        // 4
        torchscript_section;                      // 5...
    return ParseSweepText(text, dir_.File("sweep.yaml"), 0);
  }

  // Expects `torchscript_section` refused as invalid with `message` in the
  // error.
  void ExpectRefused(const std::string& torchscript_section, const std::string& message) {
    absl::StatusOr<v1::SweepSpec> spec = Parse(torchscript_section);
    ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(message));
  }

  ::paradnn::testing::TempFolder dir_{"upload-test"};
};

constexpr const char* kInputs =
    "  inputs: [{name: x, shape: [-1, 64], dtype: float32, low: -1, high: 1}]\n";

TEST_F(TorchScriptUploadTest, ReadsTheFileNextToTheSweepFile) {
  absl::StatusOr<v1::SweepSpec> spec =
      Parse(std::string("  file: mlp.pt\n") + kInputs +
            "  loss: cross_entropy\n"
            "  target: {shape: [-1], dtype: int64, low: 0, high: 10}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::TorchScriptModel& model = spec->torchscript();
  EXPECT_EQ(model.content(), std::string("PK\x03\x04\0model", 10));
  EXPECT_EQ(model.file_name(), "mlp.pt");
  ASSERT_EQ(model.inputs_size(), 1);
  EXPECT_EQ(model.inputs(0).name(), "x");
  EXPECT_THAT(model.inputs(0).shape(), ::testing::ElementsAre(-1, 64));
  EXPECT_EQ(model.inputs(0).low(), -1);
  EXPECT_EQ(model.loss(), "cross_entropy");
  EXPECT_EQ(model.target().dtype(), "int64");
  EXPECT_EQ(model.target().high(), 10);
}

TEST_F(TorchScriptUploadTest, MissingFileNamesItsLine) {
  absl::StatusOr<v1::SweepSpec> spec =
      Parse(std::string("  file: nowhere.pt\n") + kInputs + "  loss: sum\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("sweep.yaml:5: torchscript.file: cannot read"));
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr("nowhere.pt"));
}

// A device or FIFO would be read until it ends, which /dev/zero never does.
TEST_F(TorchScriptUploadTest, RefusesAFileThatIsNotARegularFile) {
  ExpectRefused(std::string("  file: /dev/zero\n") + kInputs + "  loss: sum\n",
                "sweep.yaml:5: torchscript.file: '/dev/zero' is not a regular file");
}

// yaml-cpp keeps both pairs of a repeated key; the second used to win.
TEST_F(TorchScriptUploadTest, RefusesRepeatedKeys) {
  ExpectRefused(std::string("  file: mlp.pt\n") + kInputs + "  loss: sum\n  loss: mse\n",
                "sweep.yaml:8: torchscript.loss: repeated key (first at line 7)");
  ExpectRefused("  file: mlp.pt\n  inputs: [{shape: [-1, 4], shape: [-1, 5]}]\n  loss: sum\n",
                "torchscript.inputs[0].shape: repeated key");
}

TEST_F(TorchScriptUploadTest, BadShapeUnknownDtypeAndLossNameTheirLines) {
  ExpectRefused("  file: mlp.pt\n  inputs:\n    - {shape: [-1, 0]}\n  loss: sum\n",
                "sweep.yaml:7: torchscript.inputs[0].shape[1]: '0' is not");

  ExpectRefused("  file: mlp.pt\n  inputs:\n    - {shape: [-1, 4], dtype: float64}\n  loss: sum\n",
                "sweep.yaml:7: torchscript.inputs[0].dtype: 'float64' is not one of");

  ExpectRefused(std::string("  file: mlp.pt\n") + kInputs + "  loss: hinge\n",
                "sweep.yaml:7: torchscript.loss: 'hinge' is not one of "
                "cross_entropy|mse|sum|output");

  ExpectRefused(std::string("  file: mlp.pt\n") + kInputs + "  loss: sum\n  labels: 3\n",
                "sweep.yaml:8: torchscript.labels: unknown key");
}

TEST_F(TorchScriptUploadTest, HashAloneNamesAStoredModel) {
  absl::StatusOr<v1::SweepSpec> spec =
      Parse("  sha256: " + std::string(64, 'c') + "\n" + kInputs + "  loss: sum\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->torchscript().content().empty());
  EXPECT_EQ(spec->torchscript().sha256(), std::string(64, 'c'));

  ExpectRefused(std::string(kInputs) + "  loss: sum\n", "sweep.yaml:4: torchscript.file: missing");
}

}  // namespace
}  // namespace paradnn::client
