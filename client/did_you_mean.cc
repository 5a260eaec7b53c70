#include "client/did_you_mean.h"

#include <algorithm>
#include <cstddef>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paradnn::client {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  }
  return names;
}

// Long options as "--name", and the ones that take a value.
struct LongOptions {
  std::vector<std::string> names;
  std::vector<std::string> with_value;

  void Add(const CLI::App& app) {
    for (const CLI::Option* option : app.get_options()) {
      for (const std::string& name : option->get_lnames()) {
        names.push_back("--" + name);
        if (option->get_items_expected_min() > 0) with_value.push_back("--" + name);
      }
    }
  }
};

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string ClosestName(const std::string& typed, const std::vector<std::string>& names) {
  const size_t limit = std::clamp<size_t>(typed.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& name : names) {
    const size_t d = EditDistance(typed, name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

std::string DidYouMean(const CLI::App& app, const std::vector<std::string>& args) {
  // The innermost subcommand the parse reached, and the options it and the
  // levels above it know.
  const CLI::App* level = &app;
  LongOptions options;
  options.Add(app);
  bool expect_value = false;
  for (const std::string& arg : args) {
    if (absl::StartsWith(arg, "--")) {
      const std::string name = arg.substr(0, arg.find('='));
      if (!Contains(options.names, name)) {
        const std::string close = ClosestName(name, options.names);
        return close.empty() ? "" : absl::StrCat("did you mean '", close, "'?");
      }
      expect_value = arg.find('=') == std::string::npos && Contains(options.with_value, name);
      continue;
    }
    if (absl::StartsWith(arg, "-")) continue;
    const std::vector<std::string> subcommands = SubcommandNames(*level);
    if (Contains(subcommands, arg)) {
      level = level->get_subcommand(arg);
      options.Add(*level);
      expect_value = false;
      continue;
    }
    if (expect_value) {
      expect_value = false;
      continue;
    }
    // A word where a subcommand was expected (positional arguments come
    // after the subcommand, which then has no subcommands of its own).
    if (!subcommands.empty()) {
      const std::string close = ClosestName(arg, subcommands);
      return close.empty() ? "" : absl::StrCat("did you mean '", close, "'?");
    }
  }
  return "";
}

}  // namespace paradnn::client
