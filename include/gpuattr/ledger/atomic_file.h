// Replacing a file so that a crash leaves either the old or the new contents, never a torn file:
// write a temporary file in the same directory, fsync it, rename it over the target, fsync the
// directory.
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/util/status.h"

namespace gpuattr::ledger {

// Creates missing parent directories (mode 0700). The file gets mode 0600. Errors name the path
// and the failing step.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace gpuattr::ledger
