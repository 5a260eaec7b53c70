// Where a binary's settings come from, highest precedence first: the command
// line, PARADNN_* environment variables, then an optional TOML config file
// (--config FILE). One helper so that coordinator, worker and CLI agree.
#ifndef PARADNN_COMMON_CONFIG_SOURCES_H_
#define PARADNN_COMMON_CONFIG_SOURCES_H_

#include <string>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace paradnn::common {

// The environment variable that sets option `long_name` ("--log-level" ->
// "PARADNN_LOG_LEVEL").
std::string EnvNameFor(const std::string& long_name);

// Call after every option of `app` is declared, before parsing. Gives each of
// its named options (not positionals, --help, --version, nor subcommands'
// options) the environment variable EnvNameFor(name) unless it already has
// one, and adds:
//   --config FILE   TOML settings ("log-level = \"debug\"", flags as
//                   "insecure = true"); a key no option has is an error.
//   --print-config  prints the settings in effect, from all three sources, in
//                   that file format, and exits 0.
// A file value is used only where neither the command line nor the
// environment sets the option (CLI11 alone would let the file win over the
// environment). Each option's --help names its variable.
void AddConfigSources(CLI::App* app);

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_CONFIG_SOURCES_H_
