// The state file's default location (XDG base directory spec: $XDG_STATE_HOME, else
// ~/.local/state).
#include "gpuattr/ledger/state_path.h"

#include <cstdlib>

namespace gpuattr::ledger {
namespace {

bool Absolute(const char* p) { return p && p[0] == '/'; }

}  // namespace

Result<std::string> ResolveStateFilePath(std::string_view configured, const char* xdg_state_home,
                                         const char* home) {
  if (!configured.empty() && !configured.starts_with("~/")) return std::string(configured);
  if (configured.starts_with("~/")) {
    if (!Absolute(home))
      return MakeError(ErrorCode::kInvalidArgument, "state_file: cannot expand \"" +
                                                        std::string(configured) +
                                                        "\": HOME is not set to an absolute path");
    return std::string(home) + std::string(configured.substr(1));
  }
  if (Absolute(xdg_state_home)) return std::string(xdg_state_home) + "/gpuattr/state.json";
  if (Absolute(home)) return std::string(home) + "/.local/state/gpuattr/state.json";
  return MakeError(ErrorCode::kInvalidArgument,
                   "state_file: no default location (neither XDG_STATE_HOME nor HOME is an "
                   "absolute path); give --state.file PATH");
}

Result<std::string> ResolveStateFilePath(std::string_view configured) {
  return ResolveStateFilePath(configured, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
}

}  // namespace gpuattr::ledger
