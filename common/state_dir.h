// Where paradnn keeps what it learns about a host (calibrations, the stack
// doctor's decisions): $XDG_STATE_HOME/paradnn, else
// $HOME/.local/state/paradnn, else ./.paradnn-state. Shared by the worker
// (its --state-dir default) and the runner.
#ifndef PARADNN_COMMON_STATE_DIR_H_
#define PARADNN_COMMON_STATE_DIR_H_

#include <cstdlib>
#include <string>

namespace paradnn::common {

inline std::string DefaultStateDir() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/paradnn";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return std::string(home) + "/.local/state/paradnn";
  }
  return "./.paradnn-state";
}

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_STATE_DIR_H_
