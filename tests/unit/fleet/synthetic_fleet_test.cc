// A synthetic fleet of known answers (bench/fleet_synth.py: the answers are
// tallied while the jobs are laid out, not derived from the events)
// decomposed by fleet/ and compared figure by figure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet/event_line.h"
#include "fleet/job_goodput.h"
#include "fleet/model_cost.h"

namespace paradnn::fleet {
namespace {

using Json = nlohmann::json;

// A generated fleet's files, removed with their folder when it goes.
struct Fleet {
  std::string dir, events, answers, roofs;
  Fleet() = default;
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;
  ~Fleet() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
};

// Generates a fleet into a fresh folder of `fleet`; events empty where it
// failed.
void Generate(int jobs, int steps_per_job, int seed, Fleet* fleet) {
  std::string dir = ::testing::TempDir() + "fleet_synth_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return;
  fleet->dir = dir;
  fleet->answers = dir + "/answers.json";
  fleet->roofs = dir + "/roofs.json";
  const char* python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  const std::string command = absl::StrCat(
      python, " ", PARADNN_SOURCE_DIR, "/bench/fleet_synth.py --jobs ", jobs, " --steps-per-job ",
      steps_per_job, " --seed ", seed, " --shuffle --out ", dir, "/events.jsonl --answers ",
      fleet->answers, " --roofs ", fleet->roofs, " > /dev/null");
  if (std::system(command.c_str()) == 0) fleet->events = dir + "/events.jsonl";
}

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in, nullptr, /*allow_exceptions=*/false);
}

void ExpectClose(double actual, const Json& expected, const std::string& what, double rel,
                 double abs) {
  ASSERT_TRUE(expected.is_number()) << what << ": expected " << expected.dump();
  const double want = expected.get<double>();
  EXPECT_LE(std::abs(actual - want), abs + rel * std::abs(want))
      << what << ": " << actual << " against the known " << want;
}

// Every job of the events file, decomposed (each line must read).
std::vector<v1::JobGoodput> DecomposeFile(const std::string& path, const RoofLookup& lookup) {
  std::map<std::string, std::vector<v1::TrainingEvent>> by_job;
  std::set<std::string> seen;
  std::ifstream in(path);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    absl::StatusOr<v1::TrainingEvent> e = ParseEventLine(line);
    EXPECT_TRUE(e.ok()) << "line " << line_number << ": " << e.status();
    if (e.ok() && seen.insert(EventKey(*e)).second) by_job[e->job()].push_back(*e);
  }
  std::vector<v1::JobGoodput> all;
  for (auto& [job, events] : by_job) {
    DecomposedJob d = DecomposeJob(std::move(events), lookup, ParadnnStepCost);
    EXPECT_TRUE(d.incomplete.empty()) << job << ": " << d.incomplete;
    all.push_back(d.goodput);
  }
  return all;
}

void ExpectShare(bool has, double actual, const Json& known, const std::string& what, double rel,
                 double abs) {
  if (known.is_null()) {
    EXPECT_FALSE(has) << what << " should be blank";
  } else {
    ExpectClose(actual, known, what, rel, abs);
  }
}

// One job's figures against the generator's.
void ExpectJobEqualsKnown(const v1::JobGoodput& g, const Json& known, double rel, double abs) {
  ExpectClose(g.elapsed_s(), known.at("elapsed_seconds"), "elapsed", rel, abs);
  ExpectClose(g.holding_s(), known.at("holding_seconds"), "holding", rel, abs);
  ExpectClose(g.parts().productive_s(), known.at("productive_seconds"), "productive", rel, abs);
  const Json& bad = known.at("badput_seconds");
  for (const char* cause : kBadputCauses) {
    ExpectClose(BadputSeconds(g.parts(), cause), bad.at(cause), cause, rel, abs);
  }
  EXPECT_EQ(g.kept_steps(), known.at("kept_steps").get<int64_t>());
  EXPECT_EQ(g.lost_steps(), known.at("lost_steps").get<int64_t>());
  ExpectClose(g.kept_span_s(), known.at("kept_step_seconds"), "kept steps", rel, abs);
  ExpectShare(g.has_scheduling(), g.scheduling(), known.at("scheduling_goodput"), "scheduling", rel,
              abs);
  ExpectShare(g.has_runtime(), g.runtime(), known.at("runtime_goodput"), "runtime", rel, abs);
  ExpectShare(g.has_program(), g.program(), known.at("program_goodput"), "program", rel, abs);
  if (g.has_program()) ExpectClose(g.ideal_s(), known.at("ideal_seconds"), "ideal", rel, abs);
}

TEST(SyntheticFleetTest, EveryFigureEqualsTheKnownOne) {
  Fleet fleet;
  Generate(/*jobs=*/80, /*steps_per_job=*/60, /*seed=*/7, &fleet);
  ASSERT_FALSE(fleet.events.empty()) << "bench/fleet_synth.py failed";
  const Json answers = ReadJson(fleet.answers);
  const Json roofs = ReadJson(fleet.roofs).at("roofs");
  const double rel = answers.at("tolerance").at("relative").get<double>();
  const double abs = answers.at("tolerance").at("absolute").get<double>();
  RoofLookup lookup = [&roofs](const std::string& kind,
                               const std::string&) -> std::optional<DeviceRoof> {
    if (!roofs.contains(kind)) return std::nullopt;
    return DeviceRoof{roofs.at(kind).at("flops_per_sec").get<double>(),
                      roofs.at(kind).at("bytes_per_sec").get<double>()};
  };

  const std::vector<v1::JobGoodput> all = DecomposeFile(fleet.events, lookup);
  std::map<std::string, const v1::JobGoodput*> decomposed;
  for (const v1::JobGoodput& g : all) decomposed[g.job()] = &g;
  ASSERT_EQ(answers.at("jobs").size(), decomposed.size());
  for (const Json& known : answers.at("jobs")) {
    const std::string job = known.at("job").get<std::string>();
    SCOPED_TRACE(job);
    ASSERT_EQ(decomposed.count(job), 1u);
    ExpectJobEqualsKnown(*decomposed[job], known, rel, abs);
  }

  std::vector<const v1::JobGoodput*> pointers;
  for (const v1::JobGoodput& g : all) pointers.push_back(&g);
  const v1::GoodputAggregate fleet_total = AggregateGoodput(pointers, "");
  const Json& known = answers.at("fleet");
  EXPECT_EQ(fleet_total.jobs(), known.at("jobs").get<int64_t>());
  EXPECT_EQ(fleet_total.program_jobs(), known.at("program_jobs").get<int64_t>());
  ExpectClose(fleet_total.scheduling(), known.at("scheduling_goodput"), "fleet sched", rel, abs);
  ExpectClose(fleet_total.runtime(), known.at("runtime_goodput"), "fleet runtime", rel, abs);
  ExpectClose(fleet_total.program(), known.at("program_goodput"), "fleet program", rel, abs);
  ExpectClose(fleet_total.mpg(), known.at("mpg"), "fleet mpg", rel, abs);
  ExpectClose(fleet_total.device_parts().lost_progress_s(),
              known.at("badput_device_seconds").at("lost_progress"), "fleet lost", rel, abs);
  for (const v1::GoodputAggregate& kind :
       GoodputBreakdown(all, [](const v1::JobGoodput& g) { return g.device_kind(); })) {
    SCOPED_TRACE(kind.group());
    const Json& k = answers.at("by_device_kind").at(kind.group());
    EXPECT_EQ(kind.jobs(), k.at("jobs").get<int64_t>());
    if (!k.at("runtime_goodput").is_null()) {
      ExpectClose(kind.runtime(), k.at("runtime_goodput"), "kind runtime", rel, abs);
    }
  }
}

}  // namespace
}  // namespace paradnn::fleet
