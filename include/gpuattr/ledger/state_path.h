// Where the state file lives when --state.file / state_file is not given: the XDG state
// directory, $XDG_STATE_HOME/gpuattr/state.json, else ~/.local/state/gpuattr/state.json.
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/util/status.h"

namespace gpuattr::ledger {

// Pure: `configured` as given ("" → the default), the environment passed in (null when unset).
// A relative XDG_STATE_HOME is ignored, as the XDG spec says. A leading "~/" is expanded.
// Errors when the path depends on HOME and HOME is unset or relative.
Result<std::string> ResolveStateFilePath(std::string_view configured, const char* xdg_state_home,
                                         const char* home);
// Same, with the process environment.
Result<std::string> ResolveStateFilePath(std::string_view configured);

}  // namespace gpuattr::ledger
