#include "common/config_sources.h"

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"

namespace paradnn::common {
namespace {

// CLI11 applies a config file before the environment and then skips every
// option the file set, so the file would win. This reader drops the file's
// items whose option is set by its environment variable; CLI11 then fills
// those from the environment.
class EnvFirstConfig : public CLI::ConfigTOML {
 public:
  explicit EnvFirstConfig(const CLI::App* app) : app_(app) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(input);
    std::vector<CLI::ConfigItem> kept;
    kept.reserve(items.size());
    for (CLI::ConfigItem& item : items) {
      if (item.parents.empty() && SetByEnvironment(item.name)) continue;
      kept.push_back(std::move(item));
    }
    return kept;
  }

 private:
  bool SetByEnvironment(const std::string& name) const {
    const CLI::Option* option = app_->get_option_no_throw("--" + name);
    if (option == nullptr) return false;
    const std::string& env = option->get_envname();
    return !env.empty() && std::getenv(env.c_str()) != nullptr;
  }

  const CLI::App* app_;
};

}  // namespace

std::string EnvNameFor(const std::string& long_name) {
  std::string env = "PARADNN_";
  const size_t start = long_name.find_first_not_of('-');
  for (size_t i = start == std::string::npos ? long_name.size() : start; i < long_name.size();
       ++i) {
    const char c = long_name[i];
    env.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return env;
}

void AddConfigSources(CLI::App* app) {
  for (CLI::Option* option : app->get_options()) {
    if (option->get_lnames().empty() || !option->get_envname().empty()) continue;
    const std::string& name = option->get_lnames().front();
    if (name == "help" || name == "version") continue;
    option->envname(EnvNameFor(name));
  }
  app->config_formatter(std::make_shared<EnvFirstConfig>(app));
  app->allow_config_extras(CLI::config_extras_mode::error);
  app->set_config("--config", "",
                  "TOML file of settings (KEY = VALUE, KEY an option's long name); the "
                  "command line and PARADNN_* variables take precedence over it");
  app->add_flag_callback(
         "--print-config",
         [app]() {
           std::cout << app->config_to_str(/*default_also=*/true, /*write_description=*/false);
           throw CLI::Success();
         },
         "Print the settings in effect (command line > environment > --config file) in the "
         "--config format, and exit")
      ->configurable(false);
}

}  // namespace paradnn::common
