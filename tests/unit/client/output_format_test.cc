#include "client/output_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/commands.h"
#include "client/listing_format.h"
#include "paradnn/v1/metrics.pb.h"
#include "tests/support/csv_reader.h"

namespace paradnn::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using ::paradnn::testing::ParseCsv;

v1::ResultRow OkRow() {
  v1::ResultRow row;
  row.set_job_id(3);
  row.set_sweep_id(1);
  row.set_state(v1::JOB_DONE);
  row.set_worker_id("host-a-cpu");
  v1::ModelConfig& c = *row.mutable_config();
  c.set_family("fc");
  (*c.mutable_params())["layer"] = 4;
  (*c.mutable_params())["node"] = 512;
  (*c.mutable_params())["batch"] = 64;
  c.set_precision("float32");
  c.set_optimizer("rmsprop");
  v1::Measurement& m = *row.mutable_measurement();
  m.set_outcome(v1::OK);
  m.set_examples_per_sec(12345.678);
  m.set_model_flops_per_sec(4.2e10);
  m.set_executed_flops_per_sec(4.5e10);
  m.set_mfu(0.168);
  m.set_hfu(0.18);
  m.set_intra_op_threads(2);
  m.mutable_counts()->set_params(2362568);
  v1::StepStats& s = *m.mutable_stats();
  s.set_steps(40);
  s.set_median_s(0.0051);  // 5.1000000000000005 ms: CSV keeps every digit
  s.set_p10_s(0.005);
  s.set_p90_s(0.0055);
  s.set_ci95_rel(0.0123);
  s.set_cv(0.031);
  s.set_stop_reason("ci");
  m.add_step_seconds(0.005);
  m.add_step_seconds(0.0052);
  m.add_suspect("host busy: load average 3.10 on 2 CPUs");
  m.add_suspect("noisy steps: CV 14 %");
  m.mutable_sentinel()->set_compute_before(0.81);
  m.mutable_sentinel()->set_compute_after(1.0);
  row.mutable_rerun()->set_half_width_rel(0.25);
  row.mutable_rerun()->set_basis("re-runs");
  return row;
}

v1::ResultRow ErrorRow() {
  v1::ResultRow row;
  row.set_job_id(4);
  row.set_state(v1::JOB_DONE);
  row.set_worker_id("host-b,cpu");
  v1::ModelConfig& c = *row.mutable_config();
  c.set_family("fc");
  (*c.mutable_params())["layer"] = 8;
  (*c.mutable_params())["node"] = 1024;
  (*c.mutable_params())["batch"] = 256;
  c.set_precision("bfloat16");
  c.set_optimizer("sgd");
  row.mutable_measurement()->set_outcome(v1::ERROR);
  row.mutable_measurement()->set_error("shape \"mismatch\", at layer 2\nsecond line");
  return row;
}

v1::ResultRow PendingRow() {
  v1::ResultRow row;
  row.set_job_id(5);
  row.set_state(v1::JOB_PENDING);
  v1::ModelConfig& c = *row.mutable_config();
  c.set_family("fc");
  (*c.mutable_params())["layer"] = 16;
  (*c.mutable_params())["node"] = 32;
  (*c.mutable_params())["batch"] = 64;
  c.set_precision("float32");
  c.set_optimizer("rmsprop");
  return row;
}

std::vector<v1::ResultRow> Rows() { return {OkRow(), ErrorRow(), PendingRow()}; }

TEST(OutputFormatTest, ColumnsAreJobParamsThenMeasurements) {
  const ResultTable table = BuildResultTable(Rows());
  std::vector<std::string> names;
  for (const ResultColumn& c : table.columns) names.push_back(c.name);
  EXPECT_EQ(
      absl::StrJoin(names, " "),
      "job_id batch layer node precision optimizer source examples_per_sec suspect "
      "step_median_ms predicted_low_ms predicted_high_ms predicted_from step_ci95_pct "
      "rerun_pct rerun_basis host_speed_pct step_p10_ms step_p90_ms step_cv stall_pct steps "
      "stop_reason model_gflops_per_sec "
      "executed_gflops_per_sec mfu_pct hfu_pct silicon_mfu_pct intra_op_threads replicas "
      "thread_pinning params "
      "peak_rss_mib peak_device_mib ranks exposed_comm_ms allreduce_ms busbw_gb_per_sec outcome "
      "worker reused_from_job error");
  ASSERT_EQ(table.rows.size(), 3u);
  const std::string human = FormatHumanTable(table);
  EXPECT_THAT(human, HasSubstr("16.8%"));  // MFU of the OK row
  EXPECT_THAT(human, HasSubstr("18.0%"));
}

TEST(OutputFormatTest, CsvParsesBackWithQuotedFields) {
  const std::string csv = FormatCsv(BuildResultTable(Rows()), false);
  const auto records = ParseCsv(csv);
  ASSERT_EQ(records.size(), 4u);
  const auto& header = records[0];
  for (const auto& r : records) ASSERT_EQ(r.size(), header.size());
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  EXPECT_EQ(records[1][col("job_id")], "3");
  EXPECT_EQ(records[1][col("node")], "512");
  EXPECT_EQ(records[1][col("examples_per_sec")], "12345.678");
  EXPECT_EQ(records[1][col("rerun_pct")], "25");
  EXPECT_EQ(records[1][col("rerun_basis")], "re-runs");
  EXPECT_EQ(records[1][col("host_speed_pct")], "90");  // sqrt(0.81 x 1.0)
  EXPECT_EQ(records[2][col("rerun_pct")], "");
  EXPECT_EQ(records[1][col("suspect")],
            "host busy: load average 3.10 on 2 CPUs; noisy steps: CV 14 %");
  EXPECT_EQ(records[2][col("suspect")], "");
  EXPECT_EQ(std::stod(records[1][col("step_median_ms")]), 0.0051 * 1e3);
  EXPECT_EQ(records[1][col("model_gflops_per_sec")], "42");
  EXPECT_EQ(records[1][col("params")], "2362568");
  EXPECT_EQ(records[1][col("outcome")], "OK");
  EXPECT_EQ(records[1][col("stop_reason")], "ci");
  EXPECT_EQ(records[2][col("worker")], "host-b,cpu");
  EXPECT_EQ(records[2][col("error")], "shape \"mismatch\", at layer 2\nsecond line");
  EXPECT_EQ(records[2][col("outcome")], "ERROR");
  EXPECT_EQ(records[2][col("examples_per_sec")], "");
  EXPECT_EQ(records[3][col("outcome")], "PENDING");
  EXPECT_EQ(records[3][col("worker")], "");
}

TEST(OutputFormatTest, CsvWithSamplesAddsAColumn) {
  const auto records = ParseCsv(FormatCsv(BuildResultTable(Rows()), true));
  ASSERT_EQ(records[0].back(), "step_seconds");
  EXPECT_EQ(records[1].back(), "0.005 0.0052");
  EXPECT_EQ(records[3].back(), "");
}

TEST(OutputFormatTest, CsvField) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField(""), "");
}

TEST(OutputFormatTest, JsonHasParamsAsNumbersAndNullsForMissingValues) {
  const std::string text = FormatJson(BuildResultTable(Rows()), false);
  const nlohmann::json json = nlohmann::json::parse(text);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 3u);
  const auto& ok = json[0];
  EXPECT_TRUE(ok["layer"].is_number_integer());
  EXPECT_EQ(ok["layer"], 4);
  EXPECT_EQ(ok["node"], 512);
  EXPECT_EQ(ok["batch"], 64);
  EXPECT_EQ(ok["job_id"], 3);
  EXPECT_TRUE(ok["examples_per_sec"].is_number_float());
  EXPECT_DOUBLE_EQ(ok["examples_per_sec"].get<double>(), 12345.678);
  EXPECT_DOUBLE_EQ(ok["step_ci95_pct"].get<double>(), 1.23);
  EXPECT_EQ(ok["steps"], 40);
  EXPECT_EQ(ok["params"], 2362568);
  EXPECT_EQ(ok["outcome"], "OK");
  EXPECT_EQ(ok["precision"], "float32");
  EXPECT_FALSE(ok.contains("step_seconds"));
  EXPECT_TRUE(json[1]["examples_per_sec"].is_null());
  EXPECT_EQ(json[0]["suspect"], "host busy: load average 3.10 on 2 CPUs; noisy steps: CV 14 %");
  EXPECT_TRUE(json[1]["suspect"].is_null());
  EXPECT_EQ(json[1]["error"], "shape \"mismatch\", at layer 2\nsecond line");
  EXPECT_EQ(json[2]["outcome"], "PENDING");
  EXPECT_TRUE(json[2]["worker"].is_null());
}

TEST(OutputFormatTest, JsonWithSamples) {
  const nlohmann::json json = nlohmann::json::parse(FormatJson(BuildResultTable(Rows()), true));
  ASSERT_TRUE(json[0]["step_seconds"].is_array());
  EXPECT_EQ(json[0]["step_seconds"].size(), 2u);
  EXPECT_DOUBLE_EQ(json[0]["step_seconds"][1].get<double>(), 0.0052);
  EXPECT_TRUE(json[2]["step_seconds"].empty());
}

TEST(OutputFormatTest, EmptyResults) {
  EXPECT_EQ(nlohmann::json::parse(FormatJson(BuildResultTable({}), false)).size(), 0u);
  const auto records = ParseCsv(FormatCsv(BuildResultTable({}), false));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].front(), "job_id");
}

TEST(OutputFormatTest, ParamNamesNeverShadowMeasurementColumns) {
  v1::ResultRow row = OkRow();
  (*row.mutable_config()->mutable_params())["steps"] = 7;
  const ResultTable table = BuildResultTable({row});
  const nlohmann::json json = nlohmann::json::parse(FormatJson(table, false));
  EXPECT_EQ(json[0]["param_steps"], 7);
  EXPECT_EQ(json[0]["steps"], 40);
}

TEST(OutputFormatTest, OptionsAreTextColumnsAfterTheParams) {
  v1::ResultRow cnn = OkRow();
  (*cnn.mutable_config()->mutable_options())["block_fn"] = "bottleneck";
  v1::ResultRow other = ErrorRow();  // no options: empty cells
  const ResultTable table = BuildResultTable({cnn, other});
  std::vector<std::string> names;
  for (const ResultColumn& c : table.columns) names.push_back(c.name);
  const auto block_fn = std::find(names.begin(), names.end(), "block_fn");
  ASSERT_NE(block_fn, names.end());
  EXPECT_EQ(*(block_fn + 1), "precision");
  EXPECT_EQ(table.columns[block_fn - names.begin()].unit, ColumnUnit::kText);
  const nlohmann::json json = nlohmann::json::parse(FormatJson(table, false));
  EXPECT_EQ(json[0]["block_fn"], "bottleneck");
  EXPECT_TRUE(json[1]["block_fn"].is_null());
}

TEST(OutputFormatTest, SweepDetailListsOptions) {
  v1::SweepStatus status;
  status.set_sweep_id(4);
  status.set_name("cnn");
  (*status.mutable_spec()->mutable_options())["block_fn"].add_values("residual");
  (*status.mutable_spec()->mutable_options())["block_fn"].add_values("bottleneck");
  (*status.mutable_spec()->mutable_options())["blocks"].add_values("3,4,6,3");
  EXPECT_THAT(FormatSweepDetail(status),
              ::testing::HasSubstr("block_fn=[residual, bottleneck]  blocks=3,4,6,3"));
}

TEST(OutputFormatTest, HumanTableIsAlignedWithUnits) {
  const std::string text = FormatHumanTable(BuildResultTable(Rows()));
  const std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[0], HasSubstr("job"));
  EXPECT_THAT(lines[0], HasSubstr("ex/s"));
  EXPECT_THAT(lines[0], HasSubstr("median"));
  EXPECT_THAT(lines[1], HasSubstr("12.3k"));
  // Suspect results carry a "!" marker; the sentences are in CSV and JSON.
  EXPECT_THAT(lines[0], HasSubstr("ex/s  !"));
  EXPECT_THAT(lines[1], HasSubstr("12.3k  !"));
  EXPECT_THAT(lines[1], Not(HasSubstr("host busy")));
  EXPECT_THAT(lines[1], HasSubstr("5.10 ms"));
  EXPECT_THAT(lines[1], HasSubstr("1.23%"));
  EXPECT_THAT(lines[1], HasSubstr("  42  "));
  EXPECT_THAT(lines[1], HasSubstr("2.36M"));
  // The error stays on its row.
  EXPECT_THAT(lines[2], HasSubstr("shape \"mismatch\", at layer 2 second line"));
  EXPECT_THAT(lines[3], HasSubstr("PENDING"));
  // Right-aligned numbers: the job ids end in the same column.
  const size_t end = lines[1].find('3') + 1;
  EXPECT_EQ(lines[2].find('4') + 1, end);
  EXPECT_EQ(lines[3].find('5') + 1, end);
}

TEST(OutputFormatTest, NarrowTableFitsATerminalAndExplainsEveryMark) {
  const ResultTable table = BuildResultTable(Rows());
  const std::string text = FormatNarrowTable(table);
  const std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  for (const std::string& line : lines) EXPECT_LE(line.size(), 120u) << line;
  EXPECT_LT(lines[0].size(), absl::StrSplit(FormatHumanTable(table), '\n').begin()->size());
  EXPECT_THAT(lines[0], HasSubstr("ex/s  !"));
  EXPECT_THAT(lines[0], Not(HasSubstr("worker")));
  EXPECT_THAT(lines[0], Not(HasSubstr("p10")));
  // Each ! is explained under the table, with its job; so is each error.
  EXPECT_THAT(text, HasSubstr("!: the measurement may be off"));
  // The re-run interval is explained with what it rests on.
  EXPECT_THAT(text, HasSubstr("±re-run: where a re-run's median is expected"));
  EXPECT_THAT(text, HasSubstr("on the same platform, from: re-runs\n"));
  EXPECT_THAT(text, HasSubstr("! job 3: host busy: load average 3.10 on 2 CPUs; noisy steps"));
  EXPECT_THAT(text, HasSubstr("error job 4: "));
  EXPECT_THAT(text, HasSubstr("--wide"));
}

TEST(OutputFormatTest, NarrowTableShowsAWorkersErrorTextEscaped) {
  std::vector<v1::ResultRow> rows = Rows();
  rows[1].mutable_measurement()->set_error("boom\x1b[2J\x1b]0;owned\x07");
  const std::string text = FormatNarrowTable(BuildResultTable(rows));
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("error job 4: boom\\x1b[2J"));
}

TEST(OutputFormatTest, SubmitWarnsWhenNoConnectedWorkerHasTheDevice) {
  std::vector<v1::WorkerInfo> workers(3);
  workers[0].set_device_kind("cpu");
  workers[0].set_connected(true);
  workers[1].set_device_kind("cpu");
  workers[1].set_connected(true);
  workers[2].set_device_kind("cuda");
  workers[2].set_connected(false);  // gone: does not count
  EXPECT_EQ(NoWorkerForDevice("cpu", workers), "");
  EXPECT_EQ(NoWorkerForDevice("cuda", workers),
            "no connected worker has device 'cuda' (connected: cpu x2); its jobs wait until one "
            "connects: paradnn-worker --device cuda");
  EXPECT_THAT(NoWorkerForDevice("cpu", {}), HasSubstr("(connected: none)"));
}

TEST(OutputFormatTest, HumanTableDropsColumnsEmptyInEveryRow) {
  const std::string text = FormatHumanTable(BuildResultTable({PendingRow()}));
  EXPECT_THAT(text, Not(HasSubstr("ex/s")));
  EXPECT_THAT(text, Not(HasSubstr("error")));
  EXPECT_THAT(text, HasSubstr("outcome"));
}

TEST(OutputFormatTest, HumanUnits) {
  EXPECT_EQ(HumanCount(950), "950");
  EXPECT_EQ(HumanCount(12345), "12.3k");
  EXPECT_EQ(HumanCount(2362568), "2.36M");
  EXPECT_EQ(HumanCount(999.7), "1.00k");
  EXPECT_EQ(HumanCount(1.5), "1.50");
  EXPECT_EQ(HumanMillis(0.85), "850 µs");
  EXPECT_EQ(HumanMillis(12.34), "12.3 ms");
  EXPECT_EQ(HumanMillis(1200), "1.20 s");
  EXPECT_EQ(HumanClock(42), "0:42");
  EXPECT_EQ(HumanClock(723), "12:03");
  EXPECT_EQ(HumanClock(3723), "1:02:03");
  EXPECT_EQ(HumanClock(-1), "--");
  EXPECT_EQ(HumanAge(0, 1000), "-");
  EXPECT_EQ(HumanAge(1000, 1500), "now");
  EXPECT_EQ(HumanAge(1000, 31000), "30s ago");
  EXPECT_EQ(HumanAge(1000, 1000 + 5 * 60000), "5m ago");
}

TEST(OutputFormatTest, AlignColumnsCountsCodePoints) {
  const std::string text = AlignColumns({"a", "b"}, {{"µµ", "x"}, {"abc", "y"}}, {false, false});
  EXPECT_EQ(text, "a    b\nµµ   x\nabc  y\n");
}

TEST(OutputFormatTest, ParseOutputFormat) {
  EXPECT_EQ(*ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(ParseOutputFormat("xml").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OutputFormatTest, SweepListing) {
  v1::SweepStatus s;
  s.set_sweep_id(7);
  s.set_name("fc-small");
  s.set_family("fc");
  s.set_device("cpu");
  s.set_state(v1::SWEEP_RUNNING);
  s.set_total_jobs(12);
  s.set_done_jobs(6);
  s.set_failed_jobs(1);
  s.set_ok_results(5);
  s.set_elapsed_seconds(42);
  const std::string list = FormatSweepList({s});
  EXPECT_THAT(list, HasSubstr("fc-small"));
  EXPECT_THAT(list, HasSubstr("running"));
  EXPECT_THAT(list, HasSubstr("7/12"));
  EXPECT_THAT(list, HasSubstr("0:42"));

  (*s.mutable_spec()->mutable_params())["layer"].set_value(4);
  auto* range = (*s.mutable_spec()->mutable_params())["node"].mutable_range();
  range->set_min(32);
  range->set_max(512);
  range->set_mul(2);
  s.mutable_spec()->mutable_run()->set_ci(0.02);
  const std::string detail = FormatSweepDetail(s);
  EXPECT_THAT(detail, HasSubstr("sweep 7: fc-small"));
  EXPECT_THAT(detail, HasSubstr("layer=4  node=32..512 x2"));
  EXPECT_THAT(detail, HasSubstr("ci=0.02"));
  EXPECT_THAT(detail, HasSubstr("12 total: 6 done, 0 running, 0 pending, 1 failed"));
  EXPECT_THAT(detail, ::testing::Not(HasSubstr("waiting")));
  s.add_waiting("1 pending job(s) of hosts 8 (first: job 3) need that many connected workers");
  EXPECT_THAT(FormatSweepDetail(s),
              ::testing::ContainsRegex("waiting +1 pending job\\(s\\) of hosts 8"));
}

TEST(OutputFormatTest, WorkerListing) {
  v1::WorkerInfo w;
  w.set_worker_id("local-1-cpu");
  w.set_device_kind("cpu");
  w.set_state("busy");
  w.set_hostname("box");
  w.set_jobs_done(9);
  w.set_last_seen_unix_ms(1'000'000);
  w.mutable_platform()->set_blas_backend("OpenBLAS 0.3.21 (pthread)");
  w.mutable_platform()->set_libtorch_version("2.3.0");
  v1::MatmulRoof* roof = w.mutable_platform()->add_matmul_roofs();
  roof->set_dtype("float32");
  roof->set_flops_per_sec(2.474e11);
  roof->set_datasheet_flops_per_sec(1e12);
  const std::string text = FormatWorkers({w}, 1'003'500);
  EXPECT_THAT(text, HasSubstr("float32 247GFLOP/s (datasheet 1.00T)"));
  EXPECT_THAT(text, HasSubstr("local-1-cpu"));
  EXPECT_THAT(text, HasSubstr("OpenBLAS 0.3.21 (pthread)"));
  EXPECT_THAT(text, HasSubstr("2.3.0"));
  EXPECT_THAT(text, HasSubstr("3s ago"));
  EXPECT_THAT(text, HasSubstr("jobs done"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("CPUs")));
  w.set_cpus("0-1");
  EXPECT_THAT(FormatWorkers({w}, 1'003'500), HasSubstr("box (CPUs 0-1)"));
}

// status and workers in CSV (raw numbers, quoted where needed) and JSON (an
// array of the protos, proto field names).
TEST(OutputFormatTest, SweepsAndWorkersAsCsvAndJson) {
  v1::SweepStatus s;
  s.set_sweep_id(7);
  s.set_name("fc, small");
  s.set_state(v1::SWEEP_DONE);
  s.set_total_jobs(12);
  s.set_done_jobs(12);
  s.set_ok_results(11);
  s.set_elapsed_seconds(42.5);
  const auto sweeps = ParseCsv(FormatSweeps({s, s}, OutputFormat::kCsv));
  ASSERT_EQ(sweeps.size(), 3u);
  EXPECT_EQ(sweeps[0][0], "sweep_id");
  EXPECT_EQ(sweeps[0].size(), sweeps[1].size());
  EXPECT_EQ(sweeps[1][1], "fc, small");
  EXPECT_EQ(sweeps[1][4], "done");
  EXPECT_EQ(sweeps[1][12], "42.5");
  const nlohmann::json list = nlohmann::json::parse(FormatSweeps({s}, OutputFormat::kJson));
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["name"], "fc, small");
  EXPECT_EQ(list[0]["sweep_id"], "7");
  EXPECT_EQ(nlohmann::json::parse(FormatSweeps({}, OutputFormat::kJson)).size(), 0u);

  v1::WorkerInfo w;
  w.set_worker_id("local-1-cpu");
  w.set_jobs_done(9);
  w.mutable_platform()->set_fingerprint("ab12");
  const auto workers = ParseCsv(FormatWorkerList({w}, OutputFormat::kCsv));
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_THAT(workers[1], ElementsAre("local-1-cpu", "", "", "", "9", "", "", "ab12", "0"));
  const nlohmann::json wj = nlohmann::json::parse(FormatWorkerList({w}, OutputFormat::kJson));
  EXPECT_EQ(wj[0]["platform"]["fingerprint"], "ab12");
}

TEST(OutputFormatTest, ControlCharactersReachTheTerminalAsText) {
  EXPECT_EQ(EscapeForTerminal("plain µs text"), "plain µs text");
  EXPECT_EQ(EscapeForTerminal("a\x1b]0;pwned\x07"
                              "b"),
            "a\\x1b]0;pwned\\x07b");
  EXPECT_EQ(EscapeForTerminal("tab\tnew\nline\x7f"), "tab\\x09new\\x0aline\\x7f");
  EXPECT_EQ(EscapeForTerminal("csi \xc2\x9b"
                              "2J"),
            "csi \\u009b2J");
  v1::WorkerInfo w;
  w.set_worker_id("evil");
  w.set_hostname("box\x1b[2J\x1b[31m");
  const std::string text = FormatWorkers({w}, 1'000'000);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("box\\x1b[2J\\x1b[31m"));
  // CSV keeps the exact text.
  ResultTable table;
  table.columns.push_back({"error", "error", ColumnUnit::kText});
  table.rows.push_back({Cell{std::string("x\x1b[2Jy")}});
  EXPECT_THAT(FormatCsv(table, false), HasSubstr("x\x1b[2Jy"));
  EXPECT_EQ(FormatHumanTable(table).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace paradnn::client
