// Replacing a file so that a crash leaves either the old or the new contents, never a torn file:
// write a temporary file in the same directory, fsync it, rename it over the target, fsync the
// directory. The temporary file is created with O_EXCL|O_NOFOLLOW: whatever already sits at its
// name (a stale file, a planted symlink) is never opened or followed; another name is used.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "gpuattr/util/status.h"

namespace gpuattr::ledger {

// Creates missing parent directories (mode 0700). The file gets mode 0600. Errors name the path
// and the failing step.
Status WriteFileAtomically(const std::string& path, std::string_view contents);
// The same, with the contents made piece by piece: `produce` calls `write` for each piece (a
// failed write makes the rest no-ops and the whole call fail).
using PieceWriter = std::function<void(std::string_view)>;
Status WriteFileAtomically(const std::string& path,
                           const std::function<void(const PieceWriter& write)>& produce);

// mkdir -p `dir`, mode 0700 for the directories it creates. Errors name the directory.
Status MakeDirectories(const std::string& dir);

}  // namespace gpuattr::ledger
