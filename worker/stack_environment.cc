#include "worker/stack_environment.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "model/thread_guideline.h"
#include "platform/stack_env.h"
#include "platform/stack_findings.h"
#include "platform/thread_profile.h"

extern char** environ;

namespace paradnn::worker {
namespace {

// `entries` without NAME=..., then with NAME=value when `value` is set.
void Replace(std::vector<std::string>* entries, const std::string& name,
             const std::optional<std::string>& value) {
  const std::string prefix = name + "=";
  entries->erase(std::remove_if(entries->begin(), entries->end(),
                                [&](const std::string& e) { return absl::StartsWith(e, prefix); }),
                 entries->end());
  if (value.has_value()) entries->push_back(prefix + *value);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> JobEnvironment(
    const std::vector<std::string>& base, const StackChoices& choices,
    const google::protobuf::Map<std::string, std::string>& stack) {
  std::vector<std::string> entries = base;
  // The thread profile's OpenMP environment first, so that an env.NAME of
  // the same job has the last word.
  if (auto it = stack.find(platform::kThreadsStackKey); it != stack.end()) {
    absl::StatusOr<platform::ThreadProfile> profile =
        platform::ParseThreadProfile(it->second, "config.stack.threads");
    if (!profile.ok()) return profile.status();
    for (const auto& [name, value] : model::ThreadProfileEnvironment(*profile)) {
      Replace(&entries, name, value);
    }
  }
  for (const auto& [component, value] : stack) {
    const std::string field = absl::StrCat("config.stack.", component);
    // Checked again here: a worker runs what any coordinator sends it.
    if (absl::Status s = platform::ValidateStackKey(component, field); !s.ok()) return s;
    if (absl::Status s = platform::ValidateStackKeyValue(component, value, field); !s.ok())
      return s;
    if (component == platform::kThreadsStackKey) continue;  // done above
    const platform::StackSettingInfo* info = platform::FindStackSettingInfo(component);
    if (info == nullptr) {  // env.NAME: the variable as given, "" unset
      Replace(&entries, platform::EnvStackVariable(component),
              value.empty() ? std::nullopt : std::optional<std::string>(value));
      continue;
    }
    std::optional<std::string> installed;
    if (auto it = choices.as_installed.find(component); it != choices.as_installed.end()) {
      installed = it->second;
    }
    std::string doctor;
    if (auto it = choices.doctor_choice.find(component); it != choices.doctor_choice.end()) {
      doctor = it->second;
    }
    std::optional<std::string> variable;
    std::string choice;
    if (value == "as-installed") {
      variable = installed;
      choice = "as-installed";
    } else if (value == "auto") {
      variable = doctor.empty() ? installed : std::optional<std::string>(doctor);
      choice = doctor.empty() ? "as-installed" : "auto";
    } else {
      variable = value;
      choice = "forced";
    }
    Replace(&entries, info->env_var, variable);
    Replace(&entries, info->choice_env, choice);
  }
  return entries;
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return entries;
}

}  // namespace paradnn::worker
