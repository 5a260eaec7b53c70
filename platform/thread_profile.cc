#include "platform/thread_profile.h"

#include <map>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace paradnn::platform {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kMaxReplicas = 256;
constexpr size_t kMaxValueLength = 96;

const std::map<std::string, ThreadProfileKind>& NamedProfiles() {
  static const auto* named = new std::map<std::string, ThreadProfileKind>{
      {"libtorch", ThreadProfileKind::kLibTorch},
      {"intel", ThreadProfileKind::kIntel},
      {"tensorflow", ThreadProfileKind::kTensorFlow},
      {"guideline", ThreadProfileKind::kGuideline},
  };
  return *named;
}

absl::Status Bad(absl::string_view value, absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": '",
                                                 absl::CEscape(value.substr(0, kMaxValueLength)),
                                                 "' ", why, "; allowed: ", ThreadProfileHelp()));
}

// "T" of intra=T or inter=I, 1..kMaxThreads.
bool ParseCount(absl::string_view text, int* out) {
  return absl::SimpleAtoi(text, out) && *out >= 1 && *out <= kMaxThreads;
}

}  // namespace

absl::StatusOr<ThreadProfile> ParseThreadProfile(absl::string_view value, absl::string_view field) {
  if (auto it = NamedProfiles().find(std::string(value)); it != NamedProfiles().end()) {
    ThreadProfile profile;
    profile.kind = it->second;
    return profile;
  }
  if (value.size() > kMaxValueLength) return Bad(value, field, "is too long");
  ThreadProfile profile;
  profile.kind = ThreadProfileKind::kExplicit;
  std::map<std::string, std::string> seen;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    const std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (kv.size() != 2) return Bad(value, field, "is not a profile name or key=value list");
    const std::string& key = kv[0];
    if (!seen.emplace(key, kv[1]).second) {
      return Bad(value, field, absl::StrCat("sets ", key, " twice"));
    }
    if (key == "intra" || key == "inter") {
      int count = 0;
      if (!ParseCount(kv[1], &count)) {
        return Bad(value, field, absl::StrCat("has ", key, "=", kv[1], ", not 1..1024"));
      }
      (key == "intra" ? profile.intra_op_threads : profile.inter_op_threads) = count;
    } else if (key == "pin") {
      if (kv[1] != "on" && kv[1] != "off") {
        return Bad(value, field, absl::StrCat("has pin=", kv[1], ", not on or off"));
      }
      profile.pin = kv[1] == "on";
    } else if (key == "cores") {
      if (kv[1] != "physical" && kv[1] != "logical") {
        return Bad(value, field, absl::StrCat("has cores=", kv[1], ", not physical or logical"));
      }
      profile.physical_cores = kv[1] == "physical";
    } else if (key == "numa") {
      if (kv[1] != "on" && kv[1] != "off") {
        return Bad(value, field, absl::StrCat("has numa=", kv[1], ", not on or off"));
      }
      profile.numa = kv[1] == "on";
    } else if (key == "replicas") {
      if (!absl::SimpleAtoi(kv[1], &profile.replicas) || profile.replicas < 1 ||
          profile.replicas > kMaxReplicas) {
        return Bad(value, field, absl::StrCat("has replicas=", kv[1], ", not 1..256"));
      }
    } else {
      return Bad(value, field, absl::StrCat("has the unknown key '", key, "'"));
    }
  }
  if (profile.intra_op_threads == 0 || profile.inter_op_threads == 0) {
    return Bad(value, field, "needs both intra= and inter=");
  }
  return profile;
}

std::string ThreadProfileValue(const ThreadProfile& profile) {
  for (const auto& [name, kind] : NamedProfiles()) {
    if (kind == profile.kind) return name;
  }
  std::string value =
      absl::StrCat("intra=", profile.intra_op_threads, ",inter=", profile.inter_op_threads);
  if (profile.pin.has_value()) absl::StrAppend(&value, ",pin=", *profile.pin ? "on" : "off");
  if (profile.replicas > 1) absl::StrAppend(&value, ",replicas=", profile.replicas);
  if (profile.physical_cores) absl::StrAppend(&value, ",cores=physical");
  if (profile.numa) absl::StrAppend(&value, ",numa=on");
  return value;
}

std::string ThreadProfileHelp() {
  return "libtorch, intel, tensorflow, guideline or "
         "intra=T,inter=I[,pin=on|off][,replicas=P][,cores=physical|logical][,numa=on|off] "
         "(T and I 1..1024, P 1..256)";
}

}  // namespace paradnn::platform
